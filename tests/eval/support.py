"""For the eval tests: a scripted OpenAI-compatible server (a real HTTP server streaming chat
completions with Leaf tool calls) and a tiny repository whose three bugs make three tasks."""
from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support import git

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef neg(a):\n    return a\n"
RUNNER = (
    "import importlib\nimport sys\n\nfailed = 0\nfor test_id in sys.argv[1:]:\n"
    "    module, _, name = test_id.partition('::')\n    try:\n"
    "        getattr(importlib.import_module(module.removesuffix('.py')), name)()\n        print('PASSED', test_id)\n"
    "    except Exception as err:  # noqa: BLE001\n        failed += 1\n        print('FAILED', test_id, repr(err))\n"
    "sys.exit(1 if failed else 0)\n"
)
"""The repository's own test runner: runs the test functions it is given (faster than pytest)."""
TEST_CMD = "python -B run_tests.py {tests}"
TESTS = {
    "add": ("test_add.py", "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"),
    "mul": ("test_mul.py", "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"),
    "neg": ("test_neg.py", "from calc import neg\n\n\ndef test_neg():\n    assert neg(2) == -2\n"),
}
STATEMENTS = {
    "add": "calc-add: add(2, 3) returns -1 instead of 5.",
    "mul": "calc-mul: mul(2, 3) returns 5 instead of 6.",
    "neg": "calc-neg: neg(2) returns 2 instead of -2.",
}
SCRIPTS: dict[str, list[dict[str, Any]]] = {
    "calc-add": [  # the right fix
        {"reasoning": "add subtracts.",
         "calls": [("Edit", {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})]},
        {"content": "Fixed add."},
    ],
    "calc-mul": [  # a wrong fix
        {"reasoning": "mul adds.",
         "calls": [("Edit", {"file_path": "calc.py", "old_string": "return a + b", "new_string": "return a * a"})]},
        {"content": "Fixed mul."},
    ],
    "calc-neg": [  # no change
        {"content": "I do not see a bug in neg."},
    ],
}


def make_calc_repo(root: Path) -> tuple[Path, str]:
    """The repository and its base commit (three bugs, one passing test)."""
    repo = root / "calc"
    repo.mkdir(parents=True)
    (repo / "calc.py").write_text(CALC)
    (repo / "run_tests.py").write_text(RUNNER)
    (repo / "test_base.py").write_text("from calc import neg\n\n\ndef test_neg_zero():\n    assert neg(0) == 0\n")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "calc")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def added_tests(name: str) -> str:
    path, text = TESTS[name]
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


def task_record(name: str, repo: Path, base: str, **extra: Any) -> dict[str, Any]:
    return {
        "instance_id": f"calc-{name}", "repo": "example/calc", "base_commit": base, "problem_statement": STATEMENTS[name],
        "test_patch": added_tests(name), "FAIL_TO_PASS": json.dumps([f"{TESTS[name][0]}::test_{name}"]),
        "PASS_TO_PASS": ["test_base.py::test_neg_zero"], "repo_path": str(repo), "test_cmd": TEST_CMD, **extra,
    }


def write_tasks(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


class ScriptedServer:
    """An OpenAI-compatible server that plays ``SCRIPTS``: the task is the key found in the first
    user message, the turn is the number of assistant messages so far.

    Args:
        barrier: the first turns of this many conversations wait for each other (up to 10 s): they
            are only answered when that many requests are in flight at once.
        hold: the first turn of this task waits until ``release`` is set (``held`` is set when it arrives).
        fail: this task's requests get HTTP 400 (a model error), while ``fail`` is set.
    """

    def __init__(self, *, barrier: int = 0, hold: str | None = None, fail: str | None = None) -> None:
        self.posts: list[tuple[str, int]] = []
        self.gets = 0
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        self.barrier = threading.Barrier(barrier, timeout=10) if barrier else None
        self.hold = hold
        self.held = threading.Event()
        self.release = threading.Event()
        self.fail = fail
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.gets += 1
                self._json({"data": [{"id": "scripted", "max_model_len": 65536}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                first = next(m["content"] for m in body["messages"] if m["role"] == "user")
                task = next((key for key in SCRIPTS if key in first), "")
                turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
                with server.lock:
                    server.posts.append((task, turn))
                    server.inflight += 1
                    server.max_inflight = max(server.max_inflight, server.inflight)
                try:
                    if turn == 0 and server.barrier is not None:
                        try:
                            server.barrier.wait()
                        except threading.BrokenBarrierError:
                            pass
                    if task == server.fail:
                        raw = json.dumps({"error": {"message": "scripted failure"}}).encode()
                        self.send_response(400)
                        self.send_header("Content-Length", str(len(raw)))
                        self.end_headers()
                        self.wfile.write(raw)
                        return
                    if turn == 0 and task == server.hold and not server.release.is_set():
                        server.held.set()
                        server.release.wait(60)
                    script = SCRIPTS.get(task) or [{"content": "unknown task"}]
                    self._stream(script[min(turn, len(script) - 1)], turn)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with server.lock:
                        server.inflight -= 1

            def _json(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, step: dict[str, Any], turn: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                deltas: list[dict[str, Any]] = []
                if step.get("reasoning"):
                    deltas.append({"reasoning_content": step["reasoning"]})
                if step.get("content"):
                    deltas.append({"content": step["content"]})
                for index, (name, arguments) in enumerate(step.get("calls") or []):
                    deltas.append({"tool_calls": [{"index": index, "id": f"call_{turn}_{index}", "type": "function",
                                                   "function": {"name": name, "arguments": json.dumps(arguments)}}]})
                finish = "tool_calls" if step.get("calls") else "stop"
                chunks = [{"choices": [{"index": 0, "delta": d}]} for d in deltas]
                chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                               "usage": {"prompt_tokens": 100 + 50 * turn, "completion_tokens": 20}})
                for chunk in chunks:
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def frogtui_eval(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "frogtui", "eval", *args], capture_output=True, text=True, timeout=timeout,
                          env=os.environ.copy())


def start_eval(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "frogtui", "eval", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=os.environ.copy())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
