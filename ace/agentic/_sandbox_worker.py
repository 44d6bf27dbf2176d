"""Sandbox worker process: runs code in one persistent namespace, answering JSON lines.

Started as `python -I _sandbox_worker.py MEMORY_MB MAX_OUTPUT_CHARS ALLOWED,IMPORTS` by `Sandbox`;
it imports only the standard library so that it starts fast and never loads the ace package.
Requests on stdin: {"op": "load", "variables": {...}} or {"op": "exec", "code": "..."}. One reply
line per request on the original stdout: {"stdout", "stderr", "error", "memory_exceeded", "truncated"}.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import os
import resource
import sys
import traceback
from typing import Any

SANDBOX_FILENAME = "<sandbox>"


class BoundedWriter(io.TextIOBase):
    """A text sink that keeps at most `limit` characters and remembers how many it was given."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[str] = []
        self._kept = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.total += len(text)
        room = self._limit - self._kept
        if room > 0:
            kept = text[:room]
            self._parts.append(kept)
            self._kept += len(kept)
        return len(text)

    def value(self) -> str:
        text = "".join(self._parts)
        if self.total > self._limit:
            text += f"\n... [output truncated: {self.total} characters, showing the first {self._limit}]"
        return text


def restricted_import(allowed: frozenset[str]):
    real_import = builtins.__import__

    def sandbox_import(name: str, globals=None, locals=None, fromlist=(), level: int = 0):  # noqa: A002
        top = name.partition(".")[0]
        if level != 0 or top not in allowed:
            raise ImportError(
                f"import of {name!r} is not allowed in the sandbox; allowed modules: {', '.join(sorted(allowed))}"
            )
        return real_import(name, globals, locals, fromlist, level)

    return sandbox_import


def run_code(code: str, namespace: dict[str, Any]) -> None:
    """Execute `code`; if its last statement is an expression, print its repr (like a REPL)."""
    tree = ast.parse(code, filename=SANDBOX_FILENAME, mode="exec")
    last_expr = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, SANDBOX_FILENAME, "exec"), namespace)
    if last_expr is not None:
        value = eval(compile(ast.Expression(last_expr.value), SANDBOX_FILENAME, "eval"), namespace)
        if value is not None:
            print(repr(value))


def user_traceback(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SANDBOX_FILENAME]
    header = ["Traceback (most recent call last):\n"] if frames else []
    lines = header + traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def execute(code: str, namespace: dict[str, Any], max_output_chars: int) -> dict[str, Any]:
    stdout, stderr = BoundedWriter(max_output_chars), BoundedWriter(max_output_chars)
    error, memory_exceeded = None, False
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        run_code(code, namespace)
    except MemoryError:
        error, memory_exceeded = "MemoryError: the code exceeded the sandbox memory limit", True
    except BaseException as exc:  # noqa: BLE001 - model-written code may raise anything, SystemExit included
        error = user_traceback(exc)
    finally:
        sys.stdout, sys.stderr = saved
    return {"stdout": stdout.value(), "stderr": stderr.value(), "error": error,
            "memory_exceeded": memory_exceeded, "truncated": stdout.total > max_output_chars
            or stderr.total > max_output_chars}


def main() -> None:
    memory_mb, max_output_chars, allowed_csv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    limit = memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    # Keep the protocol channel private: user code writing to fd 1 must not corrupt replies.
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    requests = sys.stdin
    sys.stdin = io.StringIO("")
    sandbox_builtins = dict(vars(builtins))
    sandbox_builtins["__import__"] = restricted_import(frozenset(filter(None, allowed_csv.split(","))))
    namespace: dict[str, Any] = {"__builtins__": sandbox_builtins, "__name__": "__sandbox__"}
    for line in requests:
        request = json.loads(line)
        if request["op"] == "load":
            namespace.update(request["variables"])
            reply: dict[str, Any] = {"stdout": "", "stderr": "", "error": None,
                                     "memory_exceeded": False, "truncated": False}
        else:
            reply = execute(request["code"], namespace, max_output_chars)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
