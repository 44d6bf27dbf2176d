"""A process sandbox for model-written Python (used by the Recursive Reflector).

NOT a security boundary: it isolates crashes, runaway loops and memory blow-ups from the host
process and keeps model code to a whitelist of imports, but code that wants to escape can. Run only
code from models you already trust with the machine.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["DEFAULT_IMPORTS", "DEFAULT_MAX_OUTPUT_CHARS", "ExecutionResult", "Sandbox", "SandboxError"]

DEFAULT_IMPORTS: frozenset[str] = frozenset({
    "bisect", "collections", "copy", "dataclasses", "datetime", "decimal", "difflib", "enum", "fractions",
    "functools", "heapq", "itertools", "json", "math", "operator", "pprint", "random", "re", "statistics",
    "string", "textwrap", "typing", "unicodedata",
})
"""Modules sandboxed code may import (the top-level name decides; `collections.abc` is allowed)."""

DEFAULT_MAX_OUTPUT_CHARS = 20_000
"""Characters of stdout (and of stderr) one execution returns before the rest is cut."""

_WORKER = Path(__file__).with_name("_sandbox_worker.py")
_STARTUP_TIMEOUT_S = 30.0


class SandboxError(RuntimeError):
    """The sandbox could not start its worker or was given data it cannot hold."""


@dataclass(frozen=True)
class ExecutionResult:
    """Outcome of one `Sandbox.execute` call."""

    stdout: str
    """Captured standard output (plus the repr of a trailing expression), truncated with a marker."""
    stderr: str
    """Captured standard error, truncated with a marker."""
    error: str | None
    """The exception traceback (sandbox frames only) or a description of why the call was stopped; None on success."""
    timed_out: bool = False
    """The call hit the wall-clock timeout and the worker was killed."""
    memory_exceeded: bool = False
    """The code ran out of the sandbox memory limit."""
    truncated: bool = False
    """stdout or stderr was longer than `max_output_chars` and was cut."""
    state_lost: bool = False
    """The worker was killed or died during this call: variables defined by earlier code are gone
    (the `start` variables are reloaded on the next call)."""


class Sandbox:
    """Runs Python snippets in a separate worker process with one persistent namespace.

    NOT a security boundary (see the module docstring). Each `execute` call is limited to
    `timeout_s` of wall-clock time, enforced by this process killing the worker, so it works from
    any thread; the worker's address space is capped at `memory_mb` (RLIMIT_AS); stdout/stderr are
    captured per call and cut to `max_output_chars`; `import` is limited to `allowed_imports`.
    After a kill the worker restarts transparently on the next call with the `start` variables
    reloaded (the result of the killed call says `state_lost`). Thread-safe: calls are serialised.
    Use as a context manager or call `close()`.
    """

    def __init__(self, *, timeout_s: float = 10.0, memory_mb: int = 512, max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
                 allowed_imports: frozenset[str] = DEFAULT_IMPORTS) -> None:
        if timeout_s <= 0 or memory_mb < 64 or max_output_chars < 1:
            raise ValueError(f"need timeout_s > 0, memory_mb >= 64, max_output_chars >= 1; got "
                             f"timeout_s={timeout_s}, memory_mb={memory_mb}, max_output_chars={max_output_chars}")
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self.max_output_chars = max_output_chars
        self.allowed_imports = frozenset(allowed_imports)
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._buffer = b""
        self._variables_json: str | None = None
        self._finalizer: weakref.finalize | None = None

    def start(self, variables: Mapping[str, Any] | None = None) -> None:
        """(Re)start the worker with a fresh namespace holding `variables` (JSON-able values).

        Raises `SandboxError` if a value is not JSON-serialisable or the worker fails to start.
        """
        payload = None
        if variables:
            try:
                payload = json.dumps({"op": "load", "variables": dict(variables)})
            except (TypeError, ValueError) as exc:
                raise SandboxError(f"sandbox variables must be JSON-serialisable: {exc}") from exc
        with self._lock:
            self._variables_json = payload
            self._stop_worker()
            self._start_worker()

    def execute(self, code: str) -> ExecutionResult:
        """Run `code` in the persistent namespace and report what happened (never raises for code errors)."""
        with self._lock:
            if self._process is None:
                self._start_worker()
            self._send({"op": "exec", "code": code})
            try:
                reply = self._read_reply(time.monotonic() + self.timeout_s)
            except TimeoutError:
                self._stop_worker()
                return ExecutionResult(stdout="", stderr="", timed_out=True, state_lost=True,
                                       error=f"execution stopped after the {self.timeout_s}s timeout; the sandbox "
                                             "was restarted and variables defined by earlier code were lost")
            except EOFError:
                code_ = self._stop_worker()
                return ExecutionResult(stdout="", stderr="", state_lost=True,
                                       error=f"the sandbox worker died (exit code {code_}), most likely out of "
                                             "memory; it was restarted and variables defined by earlier code were lost")
        return ExecutionResult(**reply)

    def close(self) -> None:
        """Stop the worker. A later `execute` starts a fresh one."""
        with self._lock:
            self._stop_worker()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _start_worker(self) -> None:
        command = [sys.executable, "-I", str(_WORKER), str(self.memory_mb), str(self.max_output_chars),
                   ",".join(sorted(self.allowed_imports))]
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
        self._buffer = b""
        self._finalizer = weakref.finalize(self, _kill, self._process)
        if self._variables_json is not None:
            self._write_line(self._variables_json)
            try:
                self._read_reply(time.monotonic() + _STARTUP_TIMEOUT_S)
            except (TimeoutError, EOFError) as exc:
                self._stop_worker()
                raise SandboxError(f"the sandbox worker failed to load its variables ({type(exc).__name__}); "
                                   f"raise memory_mb (now {self.memory_mb}) or pass less data") from exc

    def _stop_worker(self) -> int | None:
        process, self._process = self._process, None
        if process is None:
            return None
        if self._finalizer is not None:
            self._finalizer.detach()
        return _kill(process)

    def _send(self, request: dict[str, Any]) -> None:
        self._write_line(json.dumps(request))

    def _write_line(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # the worker died; _read_reply reports it as EOF

    def _read_reply(self, deadline: float) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        fd = self._process.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)


def _kill(process: subprocess.Popen[bytes]) -> int | None:
    if process.poll() is None:
        process.kill()
    returncode = process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()
    return returncode
