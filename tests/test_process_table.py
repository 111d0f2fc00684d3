"""One table of every process frogtui starts outside the sandbox (``programs.STARTS``): the code is
walked with ``ast`` for every process start (``subprocess``, ``os.exec*``/``spawn*``/``system``/
``popen``/``fork``, ``asyncio.create_subprocess_*``, ``pty``, ``multiprocessing``, a GitPython
command runner), and each must be a row of the table, each row a place in the code; every such
start names its program by a path, never a bare word looked up on ``PATH``, and passes its
environment; frogtui's own interpreter (``sys.executable``) is named only in ``programs.py``,
which starts it isolated."""
from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from frogtui import programs

ROOT = Path(__file__).resolve().parent.parent / "frogtui"
SUBPROCESS = {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
OS = {"system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp"}
ASYNCIO = {"create_subprocess_exec", "create_subprocess_shell"}


def _name(node: ast.expr) -> str:
    """``a.b.c`` for an attribute chain (empty when it is not one)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _name(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def starts_process(call: ast.Call) -> bool:
    name = _name(call.func)
    head, _, last = name.rpartition(".")
    if head == "subprocess" and last in SUBPROCESS:
        return True
    if head == "os" and (last in OS or last.startswith(("exec", "spawn"))):
        return True
    if head == "asyncio" and last in ASYNCIO:
        return True
    if head in ("pty", "multiprocessing") or name.startswith("multiprocessing."):
        return True
    return gitpython_runner(call)


def gitpython_runner(call: ast.Call) -> bool:
    """``super().execute(...)``: a GitPython ``Git`` subclass running its command."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr == "execute" and isinstance(func.value, ast.Call)
            and _name(func.value.func) == "super")


class Sites(ast.NodeVisitor):
    """Every process start in one module, by ``module:Qualified.function``."""

    def __init__(self, module: str) -> None:
        self.module, self.scope, self.found = module, [], []
        self.classes: list[ast.ClassDef] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.classes.append(node)
        self.generic_visit(node)
        self.classes.pop()
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Call(self, node: ast.Call) -> None:
        if starts_process(node):
            self.found.append((f"{self.module}:{'.'.join(self.scope) or '<module>'}", node))
        self.generic_visit(node)


@functools.cache
def trees() -> tuple[tuple[Path, str, ast.Module], ...]:
    """Every module of the package: (path, dotted name, syntax tree), parsed once."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
        found.append((path, module, ast.parse(path.read_text(encoding="utf-8"), str(path))))
    return tuple(found)


@functools.cache
def process_starts() -> list[tuple[str, ast.Call, Path]]:
    found = []
    for path, module, tree in trees():
        sites = Sites(module)
        sites.visit(tree)
        found += [(site, call, path) for site, call in sites.found]
    return found


def test_the_walk_finds_what_it_looks_for() -> None:
    tree = ast.parse("import subprocess, os\nsubprocess.run(['x'])\nos.execv('a', [])\nos.path.join('a')\nsuper().execute(1)\n")
    assert [starts_process(c) for c in ast.walk(tree) if isinstance(c, ast.Call) and _name(c.func) != "super"] == [
        True, True, False, True]


def test_every_process_start_is_in_the_table_and_every_row_in_the_code() -> None:
    in_code = {site for site, _, _ in process_starts()}
    in_table = {row.site for row in programs.STARTS}
    assert in_code - in_table == set(), "a process start that the table (frogtui/programs.py STARTS) lacks"
    assert in_table - in_code == set(), "a row of the table that no code starts any more"


def test_every_start_names_its_program_by_a_path_and_passes_its_environment() -> None:
    for site, call, _ in process_starts():
        if gitpython_runner(call):  # GitPython: the executable and environment are pinned in the runner
            continue
        argv = call.args[0] if call.args else None
        if isinstance(argv, ast.List) and argv.elts:
            first = argv.elts[0]
            assert not (isinstance(first, ast.Constant) and isinstance(first.value, str) and not first.value.startswith("/")), site
        keywords = {k.arg for k in call.keywords}
        assert "env" in keywords, f"{site}: the environment is frogtui's whole one (tokens included), not chosen"


def test_frogtuis_own_interpreter_is_named_only_where_it_starts_isolated() -> None:
    for path, _, tree in trees():
        named = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and _name(n) == "sys.executable"]
        if path.name == "programs.py" and path.parent == ROOT:
            continue
        assert not named, f"{path}: sys.executable outside programs.py (start frogtui's Python with programs.python_argv)"
    assert programs.python_argv("-c", "x")[1] == "-I"


def test_gitpython_runs_the_pinned_git() -> None:
    from frogtui.vcs import gitguard  # frogtui.vcs pins the git gitpython finds when it is imported

    executable = gitguard.git.Git.GIT_PYTHON_GIT_EXECUTABLE
    assert executable and os.path.isabs(executable), executable


def test_the_minimal_environment_holds_no_token_and_no_repository_library_path(tmp_path: Path) -> None:
    environ = {"PATH": f"{tmp_path}/.venv/bin:/usr/bin", "GITHUB_TOKEN": "ghp_x", "AWS_SECRET_ACCESS_KEY": "y", "HOME": "/root",
               "LANG": "C.UTF-8", "GGML_CUDA_NO_PINNED": "1", "LD_LIBRARY_PATH": f"relative:{ROOT.parent}", "PYTHONPATH": "/x"}
    env = programs.python_environ(environ)
    assert set(env) <= {"PATH", "LANG", "GGML_CUDA_NO_PINNED", "LD_LIBRARY_PATH"}
    assert env["PATH"] == programs.at_start().path and env["GGML_CUDA_NO_PINNED"] == "1"
    assert "relative" not in env.get("LD_LIBRARY_PATH", "")
