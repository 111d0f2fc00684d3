"""Committing a patch with the person's identity and hooks, without touching their index, and
undoing frogtui's last commit.

The commit is built in a temporary index that starts from HEAD, so it holds exactly the patch,
whatever the person has staged. ``git commit`` runs with that index (hooks see what is committed).
Afterwards the person's index is brought up to date only for the committed paths, so
``git status`` stays truthful and their own staged changes stay staged.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import git

from frogtui.errors import FrogtuiError
from frogtui.vcs.hunks import decode, encode, section_path, split_sections
from frogtui.vcs.repository import LITERAL_PATHS, GitFailed, head_commit, run_git, temporary_index, tree_of

LAST_COMMIT_REF = "refs/worktree/frogtui/last-commit"
"""Points at the last commit frogtui made in this working tree (what ``undo`` may take back).
Under ``refs/worktree/`` so each ``git worktree`` keeps its own (sessions run side by side)."""

_IN_PROGRESS = {
    "MERGE_HEAD": "a merge",
    "CHERRY_PICK_HEAD": "a cherry-pick",
    "REVERT_HEAD": "a revert",
    "rebase-merge": "a rebase",
    "rebase-apply": "a rebase (or git am)",
}
_SIGNING_MARKERS = ("gpg failed to sign", "failed to sign the data", "error: cannot run gpg", "signing failed")
SIGNING_HELP = (
    "git could not sign the commit (commit.gpgsign is on), so nothing was committed and nothing was lost. "
    "Fix your signing setup (`git config user.signingkey`, gpg-agent), or turn signing off for this "
    "repository with `git config commit.gpgsign false`."
)

IDENTITY_HELP = (
    "git does not know who you are, so frogtui cannot commit (nothing was lost). Set your identity with:\n"
    '  git config --global user.name "Your Name"\n'
    '  git config --global user.email "you@example.com"'
)
_IDENTITY_MARKERS = ("Please tell me who you are", "unable to auto-detect email", "empty ident name", "Author identity unknown")


class CommitFailed(FrogtuiError):
    """The commit was not made; ``output`` holds git's (or a hook's) output. Nothing was lost."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class NoIdentity(CommitFailed):
    """No user.name / user.email is configured."""


@dataclass(frozen=True)
class CommitResult:
    sha: str
    subject: str
    paths: list[str]
    notes: list[str] = field(default_factory=list)
    """Things the person should know (e.g. a path whose staged change was left alone)."""

    @property
    def summary(self) -> str:
        return f"Committed {self.sha[:10]} {self.subject!r} ({len(self.paths)} file{'s' if len(self.paths) != 1 else ''})"


@dataclass(frozen=True)
class UndoResult:
    sha: str
    subject: str
    paths: list[str]

    @property
    def summary(self) -> str:
        return f"Undid commit {self.sha[:10]} {self.subject!r}; its changes are back in the working tree, unstaged."


def with_trailer(message: str, trailer: str) -> str:
    """``message`` ending with ``trailer`` (after a blank line), unless it already has it."""
    text = message.strip()
    trailer = trailer.strip()
    if not trailer or trailer in text.splitlines():
        return text + "\n"
    return f"{text}\n\n{trailer}\n"


def identity_problem(repo: git.Repo) -> str | None:
    """``IDENTITY_HELP`` when git has no usable author/committer identity, else None."""
    for variable in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
        try:
            run_git(repo, "var", variable)
        except GitFailed:
            return IDENTITY_HELP
    return None


COMMIT_HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "pre-auto-gc", "post-rewrite")
"""The hooks a ``git commit`` may run."""


def commit_patch(repo: git.Repo, patch: bytes, message: str, *, trailer: str = "", hooks: bool = True) -> CommitResult:
    """Commit exactly ``patch`` on top of HEAD, with the person's identity and hooks (``hooks``
    False: none at all, as frogtui's own hardened git: a commit nobody reviewed, ``frogtui run
    --commit``, never runs the repository's code outside the sandbox; a note names the hooks
    that did not run).

    Raises:
        NoIdentity: no identity configured (the message says how to set it).
        CommitFailed: the patch does not apply, nothing would change, or a hook refused (its output
            is in ``output``). The working tree and the person's index are untouched.
    """
    if not patch.strip():
        raise CommitFailed("nothing is selected to commit")
    problem = identity_problem(repo)
    if problem:
        raise NoIdentity(problem)
    busy = operation_in_progress(repo)
    if busy:
        raise CommitFailed(
            f"{busy} is in progress in this repository: finish it (or abort it) before committing from frogtui; "
            "nothing was committed and nothing was lost"
        )
    parent = head_commit(repo)
    base = tree_of(repo, parent)
    with temporary_index(repo, None if parent is None else base) as env:
        try:
            run_git(repo, "apply", "--cached", "--binary", "--whitespace=nowarn", env=env, stdin=patch)
        except GitFailed as err:
            raise CommitFailed(f"the selected changes do not apply to HEAD: {err.output.strip()}", err.output) from None
        built = run_git(repo, "write-tree", env=env).decode().strip()
        if built == base:
            raise CommitFailed("the selected changes make no difference to HEAD: nothing to commit")
        commit_env = {"GIT_INDEX_FILE": env["GIT_INDEX_FILE"]}
        with tempfile.NamedTemporaryFile("wb", prefix="frogtui-msg-", delete=False) as handle:
            handle.write(encode(with_trailer(message, trailer)))
        skipped = [] if hooks else configured_hooks(repo, COMMIT_HOOKS)
        verify = () if hooks else ("--no-verify",)  # and no hooks path (vcs.gitguard): post-commit does not run either
        try:
            run_git(repo, "commit", "--quiet", "--no-edit", *verify, "-F", handle.name, env=commit_env, as_person=hooks)
        except GitFailed as err:
            if any(marker in err.output for marker in _IDENTITY_MARKERS):
                raise NoIdentity(IDENTITY_HELP, err.output) from None
            if any(marker in err.output for marker in _SIGNING_MARKERS):
                raise CommitFailed(f"{SIGNING_HELP}\n{err.output.strip()}", err.output) from None
            raise CommitFailed(f"git commit was refused (a hook failed?); nothing was lost:\n{err.output.strip()}", err.output) from None
        finally:
            Path(handle.name).unlink(missing_ok=True)
    sha = head_commit(repo)
    assert sha is not None
    run_git(repo, "update-ref", "-m", "frogtui: commit", LAST_COMMIT_REF, sha)
    paths = changed_paths(repo, parent, sha)
    notes = sync_index(repo, parent, sha, paths, patch)
    notes.extend(hook_changes(repo, built, sha))
    if skipped:
        notes.append(
            f"Your git hooks were not run ({', '.join(skipped)}): nobody reviewed this commit, and a hook runs the repository's code "
            "(which the model could change) outside the sandbox. Run your checks yourself (`git hook run pre-commit`), or undo "
            "the commit (`git reset HEAD~1`) and commit it yourself."
        )
    subject = run_git(repo, "log", "-1", "--format=%s", sha).decode().strip()
    return CommitResult(sha, subject, paths, notes)


def configured_hooks(repo: git.Repo, names: tuple[str, ...]) -> list[str]:
    """The hooks among ``names`` that the person's ``git commit`` would run (executable files in
    ``core.hooksPath``, else the git dir's ``hooks``)."""
    folder = hooks_folder(repo)
    return [name for name in names if (folder / name).is_file() and os.access(folder / name, os.X_OK)]


def person_hooks_path(repo: git.Repo) -> str | None:
    """``core.hooksPath`` as the person's git reads it (frogtui's own forces ``/dev/null``)."""
    try:
        return run_git(repo, "config", "--path", "--get", "core.hooksPath", as_person=True).decode().strip() or None
    except GitFailed:
        return None


def hooks_folder(repo: git.Repo) -> Path:
    """Where the person's hooks are: ``core.hooksPath`` (relative to the working tree), else the
    git dir's ``hooks``."""
    hooks_path = person_hooks_path(repo)
    return Path(repo.working_tree_dir or ".") / hooks_path if hooks_path else Path(repo.common_dir) / "hooks"


def operation_in_progress(repo: git.Repo) -> str | None:
    """What unfinished merge, cherry-pick, revert or rebase this working tree is in, or None.

    Committing then would conclude it (a merge commit holding only the selected hunks) or slip a
    commit into the middle of a rebase, so ``commit_patch`` refuses."""
    names = list(_IN_PROGRESS)
    args = [arg for name in names for arg in ("--git-path", name)]
    out = run_git(repo, "rev-parse", *args).decode().splitlines()
    for name, path in zip(names, out, strict=False):
        if (Path(repo.working_tree_dir or ".") / path).exists():
            return _IN_PROGRESS[name]
    return None


def hook_changes(repo: git.Repo, built: str, commit: str) -> list[str]:
    """A note when the commit's tree is not the tree frogtui built (a pre-commit hook changed or
    ``git add``-ed files, which can pull in hunks that were not accepted)."""
    out = run_git(repo, "diff-tree", "-r", "-z", "--no-renames", "--name-only", built, f"{commit}^{{tree}}")
    changed = sorted({decode(p) for p in out.split(b"\0") if p})
    if not changed:
        return []
    return [
        f"A hook changed what was committed, beyond the hunks you accepted: {', '.join(changed)}. "
        "Check `git show HEAD`; undo (u) takes the commit back."
    ]


def changed_paths(repo: git.Repo, old: str | None, new: str) -> list[str]:
    """Paths that differ between commits ``old`` (None: nothing) and ``new``."""
    out = run_git(repo, "diff-tree", "-r", "-z", "--no-renames", "--name-only", tree_of(repo, old), new)
    return sorted({decode(p) for p in out.split(b"\0") if p})


def _tree_entries(repo: git.Repo, commit: str | None, paths: list[str]) -> dict[str, str]:
    if commit is None or not paths:
        return {}
    out = run_git(repo, "ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths, env=LITERAL_PATHS)
    entries = {}
    for record in out.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, _kind, sha = meta.split()
            entries[decode(path)] = f"{decode(mode)} {decode(sha)}"
    return entries


def _index_entries(repo: git.Repo, paths: list[str]) -> dict[str, str | None]:
    out = run_git(repo, "ls-files", "-s", "-z", "--full-name", "--", *paths, env=LITERAL_PATHS) if paths else b""
    entries: dict[str, str | None] = {}
    for record in out.split(b"\0"):
        if record:
            meta, path = record.split(b"\t", 1)
            mode, sha, stage = meta.split()
            name = decode(path)
            entries[name] = f"{decode(mode)} {decode(sha)}" if stage == b"0" and name not in entries else None
    return entries


def sync_index(repo: git.Repo, old: str | None, new: str, paths: list[str], patch: bytes) -> list[str]:
    """After HEAD moved from ``old`` to ``new``, update the person's index for ``paths``: an entry
    that matched ``old`` now matches ``new``; an entry holding their own staged change gets
    ``patch``'s change for that path on top when it applies, else stays as it was (a note says so)."""
    if not paths:
        return []
    index = _index_entries(repo, paths)
    before, after = _tree_entries(repo, old, paths), _tree_entries(repo, new, paths)
    follow, notes = [], []
    for path in paths:
        entry = index.get(path)
        if entry == after.get(path):
            continue
        if entry == before.get(path):
            follow.append(path)
            continue
        part = b"".join(encode(s) for s in split_sections(decode(patch)) if section_path(s.splitlines()[0]) == path)
        try:
            run_git(repo, "apply", "--cached", "--binary", env=LITERAL_PATHS, stdin=part)
        except GitFailed:
            notes.append(f"{path}: your staged version was left as it was (it conflicts with the commit); check `git diff --cached {path}`")
    if follow:
        run_git(repo, "reset", "-q", new, "--", *follow, env=LITERAL_PATHS)
    return notes


def undo_problem(repo: git.Repo) -> str | None:
    """Why the last frogtui commit cannot be undone now, or None when it can."""
    last = _last_commit(repo)
    if last is None:
        return "frogtui has made no commit here that can be undone"
    if head_commit(repo) != last:
        return "the last frogtui commit is no longer HEAD (something was committed on top, or HEAD moved): nothing undone"
    busy = operation_in_progress(repo)
    if busy:
        return f"{busy} is in progress: finish it (or abort it) first; nothing undone"
    return None


def _last_commit(repo: git.Repo) -> str | None:
    try:
        return run_git(repo, "rev-parse", "--verify", "-q", f"{LAST_COMMIT_REF}^{{commit}}").decode().strip() or None
    except GitFailed:
        return None


def undo_last_commit(repo: git.Repo) -> UndoResult:
    """Take back frogtui's last commit when it is still HEAD: the branch moves back to its parent,
    the person's index entries for its paths go back too, and the working tree keeps the changes.

    Raises:
        CommitFailed: there is nothing to undo, or something was committed on top.
    """
    problem = undo_problem(repo)
    if problem:
        raise CommitFailed(problem)
    last = _last_commit(repo)
    assert last is not None
    try:
        parent: str | None = run_git(repo, "rev-parse", "--verify", "-q", f"{last}^").decode().strip()
    except GitFailed:
        parent = None
    subject = run_git(repo, "log", "-1", "--format=%s", last).decode().strip()
    paths = changed_paths(repo, parent, last)
    index = _index_entries(repo, paths)
    committed = _tree_entries(repo, last, paths)
    follow = [p for p in paths if index.get(p) == committed.get(p)]
    if parent is None:
        run_git(repo, "update-ref", "-m", "frogtui: undo commit", "-d", "HEAD", last)
        if follow:
            run_git(repo, "rm", "--cached", "-q", "--ignore-unmatch", "--", *follow, env=LITERAL_PATHS)
    else:
        run_git(repo, "update-ref", "-m", "frogtui: undo commit", "HEAD", parent, last)
        if follow:
            run_git(repo, "reset", "-q", parent, "--", *follow, env=LITERAL_PATHS)
    run_git(repo, "update-ref", "-d", LAST_COMMIT_REF)
    return UndoResult(last, subject, paths)
