"""The host's handle on one sandbox worker process: started, stopped, and its end described.

- Workers are forked by the main thread or by one long-lived daemon thread of the host
  (`_Spawner`): the worker's parent-death signal (armed by the worker,
  `_sandbox_confine.die_with_host`) fires when the THREAD that forked it ends, so forking from a
  short-lived thread (asyncio.to_thread, a thread pool) would kill the worker when that thread ended.
- Each worker runs in its own session, in a `Workdir` that is removed on `stop()` or, if this
  process dies first, by the next sandbox start of the same user (`sweep_orphans`).
- How a worker ended is described from what the host can observe, never guessed: its exit status,
  its CPU time and soft CPU-time limit (read from /proc while it is a zombie, before it is reaped)
  and whether the kernel's out-of-memory killer acted while it lived (the `oom_kill` counter of
  /proc/vmstat, read when it started: 40 us, too slow to read before every call). The kernel raises the soft
  CPU limit by one second each time it sends SIGXCPU for
  it, and the worker cannot change its limits, so a soft limit above the one it started with proves
  the limit was reached (CPU-time figures alone would not: /proc's tick-sampled times differ from
  the kernel's limit accounting by several percent). A signal the code sent itself is not blamed
  on a limit.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from queue import SimpleQueue
from typing import TypeVar

from ace.agentic._sandbox_workdir import Workdir, sweep_orphans

__all__ = ["WorkerProcess"]

_T = TypeVar("_T")


class _Spawner:
    """One daemon thread that runs the functions it is given (forks), for the life of the process."""

    def __init__(self) -> None:
        self._requests: SimpleQueue[tuple[Callable[[], object], Future[object]]] = SimpleQueue()
        threading.Thread(target=self._serve, name="ace-sandbox-spawner", daemon=True).start()

    def run(self, function: Callable[[], _T]) -> _T:
        future: Future[object] = Future()
        self._requests.put((function, future))
        return future.result()  # type: ignore[return-value]

    def _serve(self) -> None:
        while True:
            function, future = self._requests.get()
            try:
                future.set_result(function())
            except BaseException as exc:
                future.set_exception(exc)


_spawner_lock = threading.Lock()
_spawner: tuple[int, _Spawner] | None = None


def _spawn(function: Callable[[], _T]) -> _T:
    """`function()` on a thread that lives as long as this process: the main thread, or the spawner."""
    global _spawner
    if threading.current_thread() is threading.main_thread():
        return function()
    with _spawner_lock:
        if _spawner is None or _spawner[0] != os.getpid():  # a forked child has no spawner thread
            _spawner = (os.getpid(), _Spawner())
        spawner = _spawner[1]
    return spawner.run(function)


@dataclass(frozen=True)
class _Evidence:
    """What /proc says about a worker; None where it could not be read."""

    cpu_s: float | None
    """CPU time used (user + system), in seconds."""
    cpu_soft_s: int | None
    """The soft RLIMIT_CPU, in seconds."""

    @classmethod
    def read(cls, pid: int) -> _Evidence:
        cpu_s = soft = None
        try:
            fields = Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()
            cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
            for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
                if line.startswith("Max cpu time"):
                    value = line[26:].split()[0]
                    soft = None if value == "unlimited" else int(value)
        except (OSError, ValueError, IndexError):
            pass
        return cls(cpu_s=cpu_s, cpu_soft_s=soft)


class WorkerProcess:
    """A started worker: its pipes, its process group, its folder. `stop()` is idempotent."""

    def __init__(self, argv: list[str]) -> None:
        """Remove folders of dead hosts, make this worker's folder and start `argv` in it."""
        sweep_orphans()
        workdir = Workdir.create()
        try:
            self._process: subprocess.Popen[bytes] = _spawn(
                lambda: subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    cwd=workdir.work,
                    env={},
                    start_new_session=True,
                )
            )
        except BaseException:
            workdir.remove()
            raise
        assert self._process.stdin is not None and self._process.stdout is not None
        self.request_fd = self._process.stdin.fileno()
        """The host's end of the request pipe."""
        self.reply_fd = self._process.stdout.fileno()
        """The host's end of the reply pipe."""
        self._oom_kills_before: int | None = None
        self._started: _Evidence | None = None
        self._evidence: _Evidence | None = None
        self._finalizer = weakref.finalize(self, _stop, self._process, workdir)

    @property
    def pid(self) -> int:
        """The worker's process id (also its process group and session id)."""
        return self._process.pid

    def note_started(self) -> None:
        """Note the CPU-time limit the worker set itself and the out-of-memory killer's count (call
        once the worker has answered its first request)."""
        self._started = _Evidence.read(self._process.pid)
        self._oom_kills_before = _oom_kills()

    def wait_for_exit(self, deadline: float) -> bool:
        """Wait until the worker has exited (True) or `deadline` passed (False); it is not reaped,
        so that its CPU time can still be read."""
        if self._evidence is not None:
            return True
        pid = self._process.pid
        try:
            pidfd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: wait (and reap) the portable way
            try:
                self._process.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                return False
            self._evidence = _Evidence(None, None)
            return True
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            if not poller.poll(max(0, int((deadline - time.monotonic()) * 1000) + 1)):
                return False
        finally:
            os.close(pidfd)
        self._evidence = _Evidence.read(pid)
        return True

    def stop(self) -> int | None:
        """Kill the whole process group, reap it, close the pipes, remove the folder; the exit status."""
        return self._finalizer()

    def describe_end(self, returncode: int | None, memory_mb: int) -> str:
        """A truthful sentence about how the worker ended (call after `wait_for_exit` and `stop`);
        `memory_mb` is its address-space cap."""
        ended, started = self._evidence or _Evidence(None, None), self._started or _Evidence(None, None)
        cpu_limit_hit = (
            None if ended.cpu_soft_s is None or started.cpu_soft_s is None else ended.cpu_soft_s > started.cpu_soft_s
        )
        oom_before, oom_after = self._oom_kills_before, _oom_kills()
        oom_acted = None if oom_before is None or oom_after is None else oom_after > oom_before
        return _describe(returncode, ended.cpu_s, cpu_limit_hit, oom_acted, memory_mb)


def _stop(process: subprocess.Popen[bytes], workdir: Workdir) -> int | None:
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the group outlives a dead but unreaped leader
        except (ProcessLookupError, PermissionError):
            process.kill()
    returncode = process.wait()
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()
    workdir.remove()
    return returncode


def _oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has killed since boot (Linux >= 4.13)."""
    try:
        vmstat = Path("/proc/vmstat").read_bytes()
    except OSError:
        return None
    start = vmstat.find(b"\noom_kill ")
    if start < 0:
        return None
    return int(vmstat[start + 10 : vmstat.index(b"\n", start + 1)])


def _describe(
    returncode: int | None, cpu_s: float | None, cpu_limit_hit: bool | None, oom_acted: bool | None, memory_mb: int
) -> str:
    if returncode is None:
        return "the sandbox process ended"
    if returncode >= 0:
        return f"the code ended the sandbox process (exit status {returncode})"
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    killed = f"the sandbox process was killed by {name}"
    used = "" if cpu_s is None else f" ({cpu_s:.1f} s of CPU time)"
    if number == signal.SIGXCPU:
        if cpu_limit_hit is None:
            return f"{killed}: its CPU-time limit, or the code or another process sent it (it cannot be told here)"
        if cpu_limit_hit:
            return f"{killed}: it used up its CPU-time limit{used}"
        return f"{killed}, not at its CPU-time limit{used}: the code or another process sent the signal"
    if number == signal.SIGKILL:
        if cpu_limit_hit:
            return f"{killed}: it used up its CPU-time limit{used} and went on after SIGXCPU"
        if oom_acted:
            return (
                f"{killed}; the kernel's out-of-memory killer acted while it ran, so it may have been the "
                "killer's victim (it cannot be told for sure)"
            )
        if oom_acted is False:
            return (
                f"{killed}, not by the sandbox's timeout and not by the kernel's out-of-memory killer (its "
                "counter did not move): the code or another process sent the signal"
            )
        return (
            f"{killed}, not by the sandbox's timeout: the kernel's out-of-memory killer, the code or another "
            "process (it cannot be told here)"
        )
    if number == getattr(signal, "SIGSYS", None):
        return (
            f"{killed}: the kernel filter ends a process this way when it makes a system call of another "
            "architecture's interface (the code can also send the signal itself)"
        )
    if number in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT):
        return (
            f"{killed}: the interpreter crashed; with the address space capped at {memory_mb} MB memory "
            "exhaustion is a possible cause (it cannot be told for sure)"
        )
    return killed
