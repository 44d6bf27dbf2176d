"""A process sandbox for model-written Python (used by the Recursive Reflector).

A security boundary for code that runs over untrusted data (traces may hold text an attacker wrote,
and the model may follow it), within these limits. On Linux the process that runs model code is
confined by the KERNEL before it reads its first request (`_sandbox_confine`): a seccomp allow-list
refuses exec, fork (threads only), sockets, pipes, opening any file (so no file writes and no file
reads either), the metadata of any path (the stat family), `fcntl` commands that would make a pipe
signal another process or stall the host, ptrace, mount, every rlimit change and every other system
call pure computation does not need; rlimits cap its address space, file size (0), descriptors,
processes and CPU time (`cpu_time_s` for the worker's whole life: SIGXCPU, then SIGKILL); it runs in
its own session, in an empty temporary directory, with an empty environment, and as `nobody` when
started as root. It dies with its host: the kernel sends it SIGKILL when the host dies
(PR_SET_PDEATHSIG), and a watchdog thread ends it when the host's end of its request pipe closes;
its folder is removed by the host on `close()`, or, if the host died, by the next sandbox start of
the same user (`_sandbox_workdir`). The host kills the whole process group at the wall-clock
timeout and on `close()`. Every read and write between host and worker waits only until the
call's deadline, so `timeout_s` bounds every call and `close()` always returns. Replies travel in
frames the host validates (`_sandbox_channel`): code that writes fake frames can at most change
what its own call reports as stdout/stderr/error/memory_exceeded; `timed_out`, `state_lost` and the
description of a dead process are decided by the host alone (from what it can observe: exit
status, CPU time, the out-of-memory killer's counter), and the next call always gets its own reply.
Output comes back as valid Unicode (lone surrogates replaced by U+FFFD).

NOT covered: model code can read and change everything inside its own process, so it can change
what later calls of the same sandbox compute (like redefining a variable, only hidden); it can use
all the CPU time and memory it is given (including, after forging its own reply, CPU time between
calls, up to `cpu_time_s`); the kernel attack surface of the allowed system calls remains. Where
seccomp is unavailable (not Linux, pyseccomp or libseccomp missing, the filter fails to load) the
sandbox refuses to start unless built with `require_kernel_filter=False`, which leaves only the
Python-level import whitelist, the rlimits and the process separation (no boundary: a
`SandboxConfinementWarning` is issued and `kernel_filter_active` is False).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ace.agentic._sandbox_channel import Channel, FrameError
from ace.agentic._sandbox_process import WorkerProcess
from ace.agentic._sandbox_worker import MARKER_ROOM, cut
from ace.errors import AceError, UsageError

__all__ = [
    "DEFAULT_IMPORTS",
    "DEFAULT_MAX_OUTPUT_CHARS",
    "ExecutionResult",
    "FrameError",
    "Sandbox",
    "SandboxConfinementWarning",
    "SandboxError",
]

DEFAULT_IMPORTS: frozenset[str] = frozenset(
    {
        "bisect",
        "collections",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "difflib",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "json",
        "math",
        "operator",
        "pprint",
        "random",
        "re",
        "statistics",
        "string",
        "textwrap",
        "typing",
        "unicodedata",
    }
)
"""Modules sandboxed code may import (the top-level name decides; `collections.abc` is allowed).
They are imported when the worker starts: the confined process cannot read module files later."""

DEFAULT_MAX_OUTPUT_CHARS = 20_000
"""Characters of stdout, of stderr and of the error one execution returns before the rest is cut."""

_WORKER = Path(__file__).with_name("_sandbox_worker.py")
_STARTUP_TIMEOUT_S = 30.0
_DEFAULT_CPU_CALLS = 30
"""`cpu_time_s` defaults to this many calls' worth of `timeout_s`: a worker's life is usually one
role session (the Recursive Reflector's allows 30 requests by default)."""
_RESULT_FIELDS = {"stdout": str, "stderr": str, "memory_exceeded": bool, "truncated": bool}


class SandboxError(AceError, RuntimeError):
    """The sandbox could not start its worker (or could not confine it), or was given data it cannot hold."""


class SandboxConfinementWarning(UserWarning):
    """A sandbox built with `require_kernel_filter=False` started without the kernel filter."""


@dataclass(frozen=True)
class ExecutionResult:
    """Outcome of one `Sandbox.execute` call."""

    stdout: str
    """Captured standard output (plus the repr of a trailing expression), truncated with a marker."""
    stderr: str
    """Captured standard error, truncated with a marker."""
    error: str | None
    """The exception traceback (sandbox frames only) or a description of why the call was stopped,
    truncated with a marker; None on success."""
    timed_out: bool = False
    """The call hit the wall-clock timeout and the worker was killed."""
    memory_exceeded: bool = False
    """The code ran out of the sandbox memory limit (a MemoryError was caught in the worker)."""
    truncated: bool = False
    """stdout, stderr or error was longer than `max_output_chars` and was cut."""
    state_lost: bool = False
    """The worker was killed or died during this call: variables defined by earlier code are gone
    (the `start` variables are reloaded on the next call)."""


class Sandbox:
    """Runs Python snippets in a confined worker process with one persistent namespace.

    What is enforced, and by what, is in the module docstring. Each `execute` call is limited to
    `timeout_s` of wall-clock time, enforced by this process killing the worker's process group, so
    it works from any thread; the worker's address space is capped at `memory_mb` (RLIMIT_AS) and
    its CPU time over its whole life at `cpu_time_s` (RLIMIT_CPU; default 30 x `timeout_s`);
    stdout, stderr and the error are captured per call and cut to `max_output_chars` (by the worker
    and again by this process); `import` is limited to `allowed_imports`. After a kill the worker
    restarts transparently on the next call with the `start` variables reloaded (the result of the
    killed call says `state_lost`). Thread-safe: calls are serialised. Use as a context manager or
    call `close()`.
    """

    def __init__(
        self,
        *,
        timeout_s: float = 10.0,
        memory_mb: int = 512,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        allowed_imports: frozenset[str] = DEFAULT_IMPORTS,
        require_kernel_filter: bool = True,
        cpu_time_s: float | None = None,
    ) -> None:
        """`require_kernel_filter=False` lets the sandbox run where seccomp is unavailable, with no
        security boundary (a `SandboxConfinementWarning` at each worker start; see `kernel_filter_active`).
        `cpu_time_s` is the CPU time one worker may use over its life (all its calls, and anything
        it leaves running); at the limit it is killed and the next call starts a fresh one."""
        cpu_time_s = _DEFAULT_CPU_CALLS * timeout_s if cpu_time_s is None else cpu_time_s
        if timeout_s <= 0 or memory_mb < 64 or max_output_chars < 1 or not cpu_time_s > 0 or math.isinf(cpu_time_s):
            raise UsageError(
                f"need timeout_s > 0, memory_mb >= 64, max_output_chars >= 1, finite cpu_time_s > 0; "
                f"got timeout_s={timeout_s}, memory_mb={memory_mb}, max_output_chars={max_output_chars}, "
                f"cpu_time_s={cpu_time_s}"
            )
        self.timeout_s = timeout_s
        self.cpu_time_s = cpu_time_s
        self.memory_mb = memory_mb
        self.max_output_chars = max_output_chars
        self.allowed_imports = frozenset(allowed_imports)
        self.require_kernel_filter = require_kernel_filter
        self._lock = threading.Lock()
        self._process: WorkerProcess | None = None
        self._channel: Channel | None = None
        self._kernel_filter_active: bool | None = None
        self._variables: dict[str, Any] | None = None

    @property
    def kernel_filter_active(self) -> bool | None:
        """Whether the running worker is confined by the seccomp filter; None before the first start."""
        return self._kernel_filter_active

    @property
    def process_id(self) -> int | None:
        """The running worker's process id (also its process group and session id); None if none runs."""
        return None if self._process is None else self._process.pid

    def start(self, variables: Mapping[str, Any] | None = None) -> None:
        """(Re)start the worker with a fresh namespace holding `variables` (JSON-able values).

        Raises `SandboxError` if a value is not JSON-serialisable or the worker fails to start or to
        be confined.
        """
        loaded = None
        if variables:
            try:
                loaded = json.loads(json.dumps(dict(variables)))
            except (TypeError, ValueError) as exc:
                raise SandboxError(f"sandbox variables must be JSON-serialisable: {exc}") from exc
        with self._lock:
            self._variables = loaded
            self._stop_worker()
            self._start_worker()

    def execute(self, code: str) -> ExecutionResult:
        """Run `code` in the persistent namespace and report what happened (never raises for code errors)."""
        with self._lock:
            if self._process is None:
                self._start_worker()
            assert self._process is not None and self._channel is not None
            deadline = time.monotonic() + self.timeout_s
            try:
                return self._result(self._channel.request({"op": "exec", "code": code}, deadline))
            except TimeoutError:
                return self._timed_out()
            except EOFError:
                if not self._process.wait_for_exit(deadline):
                    return self._timed_out()  # it closed its pipes and went on running
                ended = self._process.describe_end(self._stop_worker(), self.memory_mb)
                return ExecutionResult(
                    stdout="",
                    stderr="",
                    state_lost=True,
                    error=f"{ended}; the sandbox was restarted and variables defined by earlier code were lost",
                )
            except FrameError as exc:
                self._stop_worker()
                return ExecutionResult(
                    stdout="",
                    stderr="",
                    state_lost=True,
                    error=f"the sandbox process sent an invalid reply ({exc}); it was "
                    "restarted and variables defined by earlier code were lost",
                )

    def close(self) -> None:
        """Stop the worker (its whole process group). A later `execute` starts a fresh one."""
        with self._lock:
            self._stop_worker()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _start_worker(self) -> None:
        binding, unavailable = _seccomp_binding()
        if unavailable is not None and self.require_kernel_filter:
            raise SandboxError(
                f"the sandbox needs a seccomp kernel filter and cannot have one: {unavailable}. "
                "Pass require_kernel_filter=False to run model code WITHOUT a security boundary."
            )
        config = {
            "memory_mb": self.memory_mb,
            "cpu_time_s": self.cpu_time_s,
            "max_output_chars": self.max_output_chars,
            "allowed_imports": sorted(self.allowed_imports),
            "seccomp_binding": binding,
            "host_pid": os.getpid(),
        }
        try:
            process = WorkerProcess([sys.executable, "-I", "-S", "-B", str(_WORKER), json.dumps(config)])
        except OSError as exc:
            raise SandboxError(f"the sandbox worker could not be started: {exc}") from exc
        self._process = process
        # Worst case JSON: 12 bytes per character (an escaped surrogate pair) in three fields.
        max_frame = 3 * 12 * (self.max_output_chars + 2 * MARKER_ROOM) + 4096
        self._channel = Channel(process.request_fd, process.reply_fd, max_frame)
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        try:
            hello = self._channel.request({"op": "hello"}, deadline)
        except (TimeoutError, EOFError, FrameError) as exc:
            if isinstance(exc, EOFError) and process.wait_for_exit(deadline):
                ended = process.describe_end(self._stop_worker(), self.memory_mb)
            else:
                self._stop_worker()
                ended = (
                    f"no answer within {_STARTUP_TIMEOUT_S} s"
                    if not isinstance(exc, FrameError)
                    else f"an invalid answer ({exc})"
                )
            raise SandboxError(f"the sandbox worker failed to start: {ended}") from exc
        process.note_started()
        self._kernel_filter_active = hello.get("kernel_filter") is True
        if not self._kernel_filter_active:
            reason = unavailable or hello.get("filter_error") or "unknown reason"
            if self.require_kernel_filter:
                self._stop_worker()
                raise SandboxError(
                    f"the sandbox could not load its seccomp kernel filter: {reason}. Pass "
                    "require_kernel_filter=False to run model code WITHOUT a security boundary."
                )
            warnings.warn(
                f"sandbox running WITHOUT the seccomp kernel filter ({reason}): model code can "
                "reach the operating system",
                SandboxConfinementWarning,
                stacklevel=3,
            )
        if self._variables is not None:
            try:
                self._channel.request(
                    {"op": "load", "variables": self._variables}, time.monotonic() + _STARTUP_TIMEOUT_S
                )
            except (TimeoutError, EOFError, FrameError) as exc:
                self._stop_worker()
                raise SandboxError(
                    f"the sandbox worker failed to load its variables ({type(exc).__name__}); "
                    f"raise memory_mb (now {self.memory_mb}) or pass less data"
                ) from exc

    def _stop_worker(self) -> int | None:
        process, self._process, self._channel = self._process, None, None
        return None if process is None else process.stop()

    def _timed_out(self) -> ExecutionResult:
        self._stop_worker()
        return ExecutionResult(
            stdout="",
            stderr="",
            timed_out=True,
            state_lost=True,
            error=f"execution stopped after the {self.timeout_s}s timeout; the sandbox "
            "was restarted and variables defined by earlier code were lost",
        )

    def _result(self, reply: dict[str, Any]) -> ExecutionResult:
        """Check the reply's shape and cut its texts: the worker's own cuts are not trusted."""
        for name, kind in _RESULT_FIELDS.items():
            if not isinstance(reply.get(name), kind):
                raise FrameError(f"the reply's {name!r} is not a {kind.__name__}")
        if not isinstance(reply.get("error"), (str, type(None))):
            raise FrameError("the reply's 'error' is neither a string nor null")
        stdout, stderr, error = reply["stdout"], reply["stderr"], reply["error"]
        kept_stdout, kept_stderr = cut(stdout, self.max_output_chars), cut(stderr, self.max_output_chars)
        kept_error = None if error is None else cut(error, self.max_output_chars)
        cut_here = (kept_stdout, kept_stderr, kept_error) != (stdout, stderr, error)
        return ExecutionResult(
            stdout=kept_stdout,
            stderr=kept_stderr,
            error=kept_error,
            memory_exceeded=reply["memory_exceeded"],
            truncated=reply["truncated"] or cut_here,
        )


def _seccomp_binding() -> tuple[str | None, str | None]:
    """The pyseccomp file for the worker to load, or why there is none."""
    if not sys.platform.startswith("linux"):
        return None, f"seccomp exists only on Linux (this is {sys.platform})"
    try:
        spec = importlib.util.find_spec("pyseccomp")
    except (ImportError, ValueError):
        spec = None
    if spec is None or spec.origin is None:
        return None, "the pyseccomp package is not installed (it also needs the system's libseccomp2)"
    return spec.origin, None
