"""``PolicyEngine``: the policy bound to a workspace, for any front end (headless, the Textual app).

    engine = PolicyEngine.load(workspace)              # user rules + project file
    decision = engine.evaluate(request)                # Decision(kind, rule, reason, floor)
    rule_text = engine.allow_for_session(request.call) # "Bash: pytest *" ('' when none is safe)
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from frogtui.approval.decision import Decision
from frogtui.approval.facts import Action, Places, fact_at, gather, path_oddity
from frogtui.approval.floor import FLOOR_HIDDEN, floor_deny
from frogtui.approval.loading import load_rules
from frogtui.approval.policy import decide, decide_commands
from frogtui.approval.rules import Rule, RuleSet
from frogtui.approval.sandbox import BwrapWrapper, sanitized_copy
from frogtui.approval.session_rules import narrow_rules
from frogtui.approval.trusted import protected_inside, refusal
from frogtui.errors import ConfigError
from frogtui.protocol import ApprovalRequest, ToolCall
from frogtui.tools.project_env import project_environ
from frogtui.tools.specs import WRITE, tool_spec
from frogtui.tools.workspace import Workspace


class PolicyEngine:
    """Evaluates tool calls against the rules, the session's own rules and the floor.

    Args:
        workspace: The repository root and the session's private temp folder.
        rules: The rules in force (``load_rules``); session rules are added on top.
        home: The home folder (default: the current user's).
        project: The person's repository when the workspace is a copy of it (an attempt's
            worktree): its parent is hidden as for a single run there.
    """

    def __init__(self, workspace: Workspace, rules: RuleSet | None = None, *, home: str | None = None,
                 rules_file: Path | None = None, project: Path | None = None) -> None:
        self.workspace = workspace
        self.base_rules = rules or RuleSet()
        trusted = protected_inside(workspace.root, workspace.tmp_dir, rules_file)  # below the floor for writes
        self.places = Places.of(workspace.root, workspace.tmp_dir, home, trusted)
        self.session_rules: list[Rule] = []
        self.project = project
        self.shown: Callable[[], Callable[[str], str | None]] | None = None
        """The session's sandbox's view (``CommandWrapper.shown``), set by the session once it
        has one; until then (or without one) the view of a sandbox made from the rules."""
        self._nominal: tuple[tuple[tuple[str, ...], tuple[str, ...]], Callable[[str], str | None]] | None = None

    @classmethod
    def load(cls, workspace: Workspace, user_file: Path | None = None, *, trust_as: Path | None = None) -> PolicyEngine:
        """An engine with the rules of ``workspace.root``; ``trust_as`` as for ``load_rules``, and the
        repository whose parent is hidden (an attempt's).

        Raises:
            ConfigError: the user's rules file is not valid, or a session in ``workspace.root``
                cannot keep frogtui's own files out of the sandbox's reach (``trusted.refusal``).
        """
        refused = refusal(workspace.root, workspace.tmp_dir, user_file)
        if refused:
            raise ConfigError(refused)
        return cls(workspace, load_rules(workspace.root, user_file, trust_as=trust_as), rules_file=user_file, project=trust_as)

    @property
    def rules(self) -> RuleSet:
        """The rules in force, session rules included."""
        rules = self.base_rules
        for rule in self.session_rules:
            rules = rules.with_rule(rule)
        return rules

    def action(self, call: ToolCall) -> Action:
        """The facts about ``call`` the policy decides on."""
        return gather(call, self.places)

    def evaluate(self, request: ApprovalRequest | ToolCall) -> Decision:
        """The policy's decision for a call (``allow``, ``ask`` or ``deny``), naming its rule."""
        call = request.call if isinstance(request, ApprovalRequest) else request
        action = self.action(call)
        decision = self._hidden_floor(action) or decide(action, self.rules)
        preview = request.preview if isinstance(request, ApprovalRequest) else None
        if (
            preview is not None
            and action.target is not None
            and decision.kind == "allow"
            and os.path.realpath(preview.abs_path) != action.target.real
        ):
            return Decision(
                "ask", f"{call.name}: preview mismatch", f"the change shown is for {preview.abs_path}, not {action.target.real}"
            )
        return decision

    def write_decisions(self) -> WriteDecisions:
        """Decisions for Writes of many repository paths (a proposal's effects), each exactly
        ``evaluate``'s, the rules and each folder's real path taken once (``WriteDecisions``)."""
        return WriteDecisions(self)

    def _hidden_floor(self, action: Action) -> Decision | None:
        """Read and Glob see what a sandboxed command sees: the same mount list
        (``sandbox.view``), so a path the sandbox hides (the home folder, the folder holding the
        repository and its sibling projects, ``/tmp``, ``/run``, ``/var/tmp``, other sessions, a
        masked secret store) and does not show again (toolchains, ``[sandbox] expose``, the
        session's temp folder) is below the floor, and so is a path where it shows another file (a
        copy without credentials) while the session has no sandbox to read that copy from. An allowlist, like the sandbox's: a store
        nobody listed (a token in ``~/.gitconfig``, another project's ``.env``, a Kerberos cache
        in ``/tmp``) stays out of reach under every mode, ``--approve all`` included."""
        fact = action.target
        spec = tool_spec(action.tool)
        reads = spec is not None and spec.kind in ("read", "search")
        if not reads or fact is None or not fact.known or not fact.real:
            return None
        real = fact.real
        source = self._shown()(real)
        if source == os.path.normpath(real) or (source is not None and self.shown is not None):
            return None  # the file itself, or what the session's sandbox shows there (a copy without credentials)
        return floor_deny(
            FLOOR_HIDDEN,
            f"{fact.written} ({real}) is in a folder hidden from the agent, as from its commands' sandbox; "
            "[sandbox] expose shows a folder read-only",
        )

    def _shown(self) -> Callable[[str], str | None]:
        if self.shown is not None:
            return self.shown()
        settings = self.base_rules.sandbox
        key = (tuple(settings.hide), tuple(settings.expose))
        if self._nominal is None or self._nominal[0] != key:
            places = self.places
            environ = {**project_environ(os.environ, places.root), "HOME": str(places.home)}
            wrap = BwrapWrapper("bwrap", places.root, places.tmp_dir, hide=key[0], expose=key[1], project=self.project,
                                gitconfig=sanitized_copy(environ, str(places.root)))
            wrap.start(environ)
            self._nominal = (key, wrap.shown())  # taken once, as a session's sandbox takes its mounts at start
        return self._nominal[1]

    def session_rules_for(self, call: ToolCall) -> list[Rule]:
        """The rules "always allow for this session" would add for ``call`` (nothing is added)."""
        action = self.action(call)
        if decide(action, self.rules).kind != "ask":
            return []  # allowed already, or denied: a session rule never lifts a denial
        return narrow_rules(action, decide_commands(action, self.rules))

    def allow_for_session(self, call: ToolCall) -> str:
        """Add the narrowest useful rules that allow ``call`` from now on in this session.

        Returns:
            The rules added, as people read them (``Bash: pytest *``), joined by ``; ``; an empty
            string when no rule is safe (the floor, a deny rule, an opaque command).
        """
        added = self.session_rules_for(call)
        self.session_rules.extend(added)
        return "; ".join(rule.text for rule in added)


class WriteDecisions:
    """``engine.evaluate`` of a Write for each of many paths relative to the repository, with what
    their folders resolve to taken once: a folder's real path is resolved once (``realpath`` of
    ``root/dir``), and a path in it whose own name is not a link is ``that/name``, exactly as
    ``os.path.realpath`` would resolve it (it resolves component by component); a name that is a
    link, and any path that is not plain (``~``, ``.``, ``..``, an odd character), goes through
    ``evaluate`` itself. The rules in force are taken when this is made (a session rule added
    later is not seen: make one per judgement).
    """

    def __init__(self, engine: PolicyEngine) -> None:
        self.engine = engine
        self.rules = engine.rules
        self.places = engine.places
        self.root = str(engine.places.root)
        self.home = str(engine.places.home)
        self.folders: dict[str, str] = {"": os.path.realpath(self.root)}

    def decide(self, path: str) -> Decision:
        """The decision ``engine.evaluate`` gives a Write of ``path`` (relative to the repository)."""
        if not _plain(path):
            return self.engine.evaluate(ToolCall(id="proposal", name=WRITE.name, arguments={"file_path": path, "content": ""}))
        folder, _, name = path.rpartition("/")
        real_folder = self.folders.get(folder)
        if real_folder is None:
            real_folder = self.folders[folder] = _realpath(os.path.join(self.root, folder))
        lexical = os.path.join(self.root, path)
        real = os.path.join(real_folder, name)
        if os.path.islink(real):
            real = _realpath(lexical)
        return decide(Action(WRITE.name, target=fact_at(path, lexical, real, self.places), home=self.home), self.rules)


def _plain(path: str) -> bool:
    """A relative path ``gather`` takes as it is: no ``~`` to expand, no ``.``, ``..`` or empty
    name to fold, no character ``path_oddity`` names."""
    if not path or path.startswith(("~", "/")) or path_oddity(path) is not None:
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return os.path.normpath(path)
