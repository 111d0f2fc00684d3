"""The approval package's modules import each other without cycles (type-only imports included),
and its two inner packages are entered through their entry: ``approval.shell`` (``analyze``)
imports nothing else of approval, ``approval.sandbox`` (``make_sandbox``) only the rules' settings
and the secret stores, and the rest of frogtui imports them from the package, not from inside."""

from __future__ import annotations

import ast
from pathlib import Path

import frogtui

ROOT = Path(frogtui.__file__).parent
APPROVAL = ROOT / "approval"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def imports(path: Path) -> set[str]:
    """Every frogtui module ``path`` imports, anywhere in it (``if TYPE_CHECKING:`` and inside
    functions included); ``from P import M`` counts as importing the submodule ``P.M``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in MODULES)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in MODULES:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return found


def approval_graph() -> dict[str, set[str]]:
    return {
        name: {m for m in imports(path) if m.startswith("frogtui.approval")}
        for name, path in MODULES.items()
        if name.startswith("frogtui.approval")
    }


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph``, as the modules along it, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)) is not None:
            return found
    return None


def test_no_import_cycles_in_approval() -> None:
    graph = approval_graph()
    # the package's own __init__ re-exports: importing a module inside it is not importing it
    graph = {name: {m for m in deps if m != "frogtui.approval"} for name, deps in graph.items()}
    assert cycle(graph) is None, " -> ".join(cycle(graph) or [])


def test_the_cycle_finder_finds_one() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_shell_analysis_imports_nothing_else_of_approval() -> None:
    for name, deps in approval_graph().items():
        if name.startswith("frogtui.approval.shell"):
            outside = {m for m in deps if not m.startswith("frogtui.approval.shell")}
            assert not outside, f"{name} imports {sorted(outside)}"


def test_the_sandbox_imports_only_the_settings_the_secret_stores_and_what_frogtui_trusts() -> None:
    allowed = {"frogtui.approval.rules", "frogtui.approval.secrets", "frogtui.approval.trusted"}
    for name, deps in approval_graph().items():
        if name.startswith("frogtui.approval.sandbox"):
            outside = {m for m in deps if not m.startswith("frogtui.approval.sandbox")} - allowed
            assert not outside, f"{name} imports {sorted(outside)}"


DOCUMENTS_THE_INSIDES = {"frogtui.approval.effect_table"}
"""Renders the effect table for docs/APPROVALS.md from the shell analysis's data."""


def test_other_modules_enter_the_packages_through_their_entry() -> None:
    for name, path in MODULES.items():
        if name.startswith(("frogtui.approval.shell", "frogtui.approval.sandbox")) or name in DOCUMENTS_THE_INSIDES:
            continue
        inside = sorted(m for m in imports(path) if m.startswith(("frogtui.approval.shell.", "frogtui.approval.sandbox.")))
        assert not inside, f"{name} imports {inside}: import from frogtui.approval.shell / frogtui.approval.sandbox"
