"""The import graph of ``frogtui``: no cycles, and every import points down the layers.

Every module's imports are read with ``ast`` (those inside functions and under ``TYPE_CHECKING``
too: a cycle that only a lazy or a type-only import closes is still a cycle of ideas), so this
needs nothing imported. The layers, bottom to top (docs/ARCHITECTURE.md):

    frogtui (the version), errors, protocol, terminal_text, programs, arguments, temp_folders
    config
    tools, models, vcs
    agent, approval
    session (the composition root)
    headless, attempts, acp, ui, doctor, demo, run_progress, run_trace, run_output, eval (the front ends)
    cli, __main__

An import may point down, or sideways within a layer; ``agent`` and ``approval`` have a narrower
list of their own.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "frogtui"

LAYERS: list[set[str]] = [
    {"frogtui", "errors", "protocol", "terminal_text", "programs", "arguments", "temp_folders"},
    {"config"},
    {"tools", "models", "vcs"},
    {"agent", "approval"},
    {"session"},
    {"headless", "attempts", "acp", "ui", "doctor", "demo", "run_progress", "run_trace", "run_output", "eval"},
    {"cli", "__main__"},
]

ONLY: dict[str, set[str]] = {
    "agent": {"protocol", "tools", "config", "errors"},
    "approval": {"protocol", "tools", "config", "errors", "programs", "terminal_text", "arguments", "temp_folders"},
}
"""Parts that may import only these (and themselves)."""

@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _target(module: str, name: str, known: dict[str, Path]) -> str:
    """What ``from module import name`` imports: the submodule when there is one."""
    return f"{module}.{name}" if f"{module}.{name}" in known else module


@cache
def imports() -> dict[str, set[str]]:
    """Each module's imports of other frogtui modules."""
    known = modules()
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                graph[name] |= {alias.name for alias in node.names if alias.name.split(".")[0] == "frogtui"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                if module.split(".")[0] == "frogtui":
                    graph[name] |= {_target(module, alias.name, known) for alias in node.names}
        graph[name].discard(name)
    return graph


def part(module: str) -> str:
    """The top-level part a module belongs to (``frogtui.agent.loop`` → ``agent``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "frogtui"


def layer(name: str) -> int:
    return next(i for i, members in enumerate(LAYERS) if name in members)


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    nodes = sorted(set(graph) | {b for bs in graph.values() for b in bs})
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, rest = work[-1]
            for nxt in rest:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


def test_the_analyzer_sees_lazy_and_type_only_imports() -> None:
    graph = imports()
    assert "frogtui.models" in graph["frogtui.headless"]  # imported inside main()
    assert "frogtui.vcs.checkpoints" in graph["frogtui.ui.app"]  # under TYPE_CHECKING
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [{"a", "b", "c"}]


def test_every_part_has_a_layer() -> None:
    assert {part(m) for m in modules()} <= set().union(*LAYERS)


def test_no_module_import_cycle() -> None:
    found = cycles(imports())
    assert found == [], "\n".join(" <-> ".join(sorted(c)) for c in found)


def test_no_cycle_between_parts() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in imports().items():
        graph[part(module)] |= {part(t) for t in targets if part(t) != part(module)}
    assert cycles(graph) == []


def test_agent_and_approval_import_only_their_own_list() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in imports().items()
        if part(module) in ONLY
        for target in targets
        if part(target) != part(module) and part(target) not in ONLY[part(module)]
    )
    assert wrong == []


def test_no_import_points_up() -> None:
    wrong = sorted(
        f"{module} -> {target}"
        for module, targets in imports().items()
        for target in targets
        if layer(part(target)) > layer(part(module))
    )
    assert wrong == []
