"""``PathFact``: what one path a call names really is (resolved, inside or outside, a secret store,
protected), the unit the facts are made of and the floor and the policy decide on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PathFact:
    """What a path really is.

    Attributes:
        written: The path as written (for messages).
        real: The resolved absolute path ('' when not known).
        rel: The real path relative to the repository root, None when not inside the root.
        inside: Inside the repository root or the session's private temp folder.
        known: False when the path is only known when the command runs.
        secret: The secret store it is in (``~/.ssh``), if any.
        protected: What it would destroy: ``the repository root``, ``.git internals``, ``the home folder``.
        special: A device where writing changes no file (``/dev/null``).
        under: The action touches things under this path rather than the path itself.
        odd: Why the path may not be what it looks like (a NUL, control or invisible character).
        holds_secret: A secret store somewhere under this folder (``~`` holds ``~/.ssh``): reading
            the folder recursively reads it.
    """

    written: str
    real: str = ""
    rel: str | None = None
    inside: bool = False
    known: bool = True
    secret: str | None = None
    protected: str | None = None
    special: bool = False
    under: bool = False
    odd: str | None = None
    holds_secret: str | None = None
    reaches: str | None = None
    """A place outside the repository reached through a symlink the path does not name."""
