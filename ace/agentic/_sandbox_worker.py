"""Sandbox worker process: confines itself, then runs code in one persistent namespace.

Started by `Sandbox` as `python -I -S -B _sandbox_worker.py CONFIG_JSON` in a new session, in an
empty temporary directory, with an empty environment. It imports only the standard library (and
the pyseccomp file the host names), so it starts fast and never loads the ace package.

Start-up, before any request is read: the allowed modules are imported, the reply descriptor is
moved off fd 1 (fds 1 and 2 become /dev/null), the EOF watchdog starts (a thread that ends the
process as soon as the host's end of the request pipe closes, even while code runs), then
`_sandbox_confine.confine` sets the rlimits, leaves root, arms the parent-death signal and loads the
seccomp filter. Model code runs only after that.

Protocol. Requests on fd 0: a 4-byte big-endian length, then JSON
{"op": "hello" | "load" | "exec", "nonce": hex, ...}. One reply per request on the reply
descriptor: FRAME_MAGIC, the request's 16-byte nonce, a 4-byte big-endian length, then the JSON
payload. Model code can write to that descriptor too (nothing in this process is out of its reach);
the HOST is the trusted side that reads one nonce-matching frame per request and decides every
flag (see `ace.agentic._sandbox_channel`).
"""

from __future__ import annotations

import _thread
import ast
import builtins
import importlib.util
import io
import json
import os
import select
import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from types import ModuleType

FRAME_MAGIC = b"\x00ACE-SBX"
NONCE_BYTES = 16
LENGTH_BYTES = 4
SANDBOX_FILENAME = "<sandbox>"
MARKER_ROOM = 100
"""Room for a truncation marker after `max_output_chars` characters."""
# Imported lazily by the standard library itself (datetime.strptime), through the sandbox's
# `__import__`: loaded before the filter and let through.
_STDLIB_LAZY = frozenset({"_strptime"})


def truncation_marker(total: int, limit: int) -> str:
    return f"\n... [output truncated: {total} characters, showing the first {limit}]"


def valid_unicode(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (as `ace.untrusted.valid_unicode`, which this
    process cannot import): the host refuses replies that hold any."""
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


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
        text = valid_unicode("".join(self._parts))
        if self.total > self._limit:
            text += truncation_marker(self.total, self._limit)
        return text


def restricted_import(allowed: frozenset[str]) -> Callable[..., ModuleType]:
    real_import = builtins.__import__

    def sandbox_import(
        name: str,
        globals: Mapping[str, object] | None = None,
        locals: Mapping[str, object] | None = None,
        fromlist: Sequence[str] = (),
        level: int = 0,
    ) -> ModuleType:
        top = name.partition(".")[0]
        if level != 0 or (top not in allowed and name not in _STDLIB_LAZY):
            raise ImportError(
                f"import of {name!r} is not allowed in the sandbox; allowed modules: {', '.join(sorted(allowed))}"
            )
        try:
            return real_import(name, globals, locals, fromlist, level)
        except PermissionError as exc:
            raise ImportError(
                f"{name!r} was not loaded when the sandbox started and the sandbox cannot read "
                "files; import the top-level module instead"
            ) from exc

    return sandbox_import


def run_code(code: str, namespace: dict[str, Any]) -> None:
    """Execute `code`; if its last statement is an expression, print its repr (like a REPL)."""
    tree = ast.parse(code, filename=SANDBOX_FILENAME, mode="exec")
    last = tree.body[-1] if tree.body else None
    last_expr = last if isinstance(last, ast.Expr) else None
    if last_expr is not None:
        tree.body.pop()
    exec(compile(tree, SANDBOX_FILENAME, "exec"), namespace)
    if last_expr is not None:
        value = eval(compile(ast.Expression(last_expr.value), SANDBOX_FILENAME, "eval"), namespace)
        if value is not None:
            print(repr(value))


def user_traceback(exc: BaseException, limit: int) -> str:
    """The sandbox frames of `exc` and its message; a message that would not fit in `limit` is cut first."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == SANDBOX_FILENAME]
    prefix = "".join((["Traceback (most recent call last):\n"] if frames else []) + traceback.format_list(frames))
    try:
        message = str(exc)
    except Exception:
        message = "<the exception's message could not be rendered>"
    if len(message) <= limit or isinstance(exc, SyntaxError):
        return (prefix + "".join(traceback.format_exception_only(type(exc), exc))).rstrip()
    # format_exception_only would copy the whole message several times.
    name = type(exc).__qualname__
    if type(exc).__module__ not in ("builtins", "__main__"):
        name = f"{type(exc).__module__}.{name}"
    room = max(limit - len(prefix) - len(name) - 2, 0)
    return f"{prefix}{name}: {message[:room]}{truncation_marker(len(message), room)}"


def cut(text: str, limit: int) -> str:
    """`text` cut to `limit` characters plus a marker; text within `MARKER_ROOM` of the limit was cut already."""
    return text if len(text) <= limit + MARKER_ROOM else text[:limit] + truncation_marker(len(text), limit)


def execute(code: str, namespace: dict[str, Any], max_output_chars: int) -> dict[str, Any]:
    stdout, stderr = BoundedWriter(max_output_chars), BoundedWriter(max_output_chars)
    error, memory_exceeded = None, False
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        run_code(code, namespace)
    except MemoryError:
        error, memory_exceeded = "MemoryError: the code exceeded the sandbox memory limit", True
    except BaseException as exc:
        error = user_traceback(exc, max_output_chars)
    finally:
        sys.stdout, sys.stderr = saved
    truncated = max(stdout.total, stderr.total, len(error or "")) > max_output_chars
    return {
        "stdout": stdout.value(),
        "stderr": stderr.value(),
        "error": None if error is None else valid_unicode(cut(error, max_output_chars)),
        "memory_exceeded": memory_exceeded,
        "truncated": truncated,
    }


def read_exactly(fd: int, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, remaining)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, nonce: bytes, body: bytes) -> None:
    frame = FRAME_MAGIC + nonce + len(body).to_bytes(LENGTH_BYTES, "big") + body
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]


def exit_when_the_host_hangs_up(fd: int) -> None:
    """Block until the write end of the request pipe `fd` is closed (the host is gone), then exit."""
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: poll returns only on hang-up, error or a closed fd
    poller.poll()
    os._exit(0)


def load_confine_module() -> Any:
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sandbox_confine.py")
    spec = importlib.util.spec_from_file_location("_sandbox_confine", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    config = json.loads(sys.argv[1])
    max_output_chars, allowed = config["max_output_chars"], frozenset(config["allowed_imports"])
    for name in (*sorted(allowed), *sorted(_STDLIB_LAZY), "collections.abc"):
        try:
            __import__(name)
        except ImportError:
            pass  # model code gets the ImportError when it asks for the module
    import time

    time.localtime()  # reads the time zone file now; the filter refuses it later
    confine = load_confine_module()

    reply_fd = os.dup(1)
    null_fd = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        os.dup2(null_fd, fd)
    os.close(null_fd)
    sys.stdin = io.StringIO("")
    _thread.start_new_thread(exit_when_the_host_hangs_up, (0,))  # does not wait for the thread to run
    kernel_filter, filter_error = confine.confine(
        config["memory_mb"], config["cpu_time_s"], config["host_pid"], config["seccomp_binding"]
    )

    sandbox_builtins = dict(vars(builtins))
    sandbox_builtins["__import__"] = restricted_import(allowed)
    namespace: dict[str, Any] = {"__builtins__": sandbox_builtins, "__name__": "__sandbox__"}
    while True:
        try:
            request = json.loads(read_exactly(0, int.from_bytes(read_exactly(0, LENGTH_BYTES), "big")))
        except EOFError:
            return
        nonce = bytes.fromhex(request["nonce"])
        reply: dict[str, Any] | None
        try:
            if request["op"] == "hello":
                reply = {"kernel_filter": kernel_filter, "filter_error": filter_error}
            elif request["op"] == "load":
                namespace.update(request["variables"])
                reply = {"stdout": "", "stderr": "", "error": None, "memory_exceeded": False, "truncated": False}
            else:
                reply = execute(request["code"], namespace, max_output_chars)
            body = json.dumps(reply).encode()
        except MemoryError:
            body = json.dumps(
                {
                    "stdout": "",
                    "stderr": "",
                    "memory_exceeded": True,
                    "truncated": False,
                    "error": "MemoryError: the sandbox memory limit was reached",
                }
            ).encode()
        request = reply = None
        write_frame(reply_fd, nonce, body)


if __name__ == "__main__":
    main()
