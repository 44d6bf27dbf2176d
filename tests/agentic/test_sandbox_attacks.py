"""The sandbox under attack (issue 23, classes 1-5): each test is named for the attack it stops.

Hostile code reaches the operating system the way the probes of `test_sandbox_boundary` do (the os,
sys and ctypes modules reached without importing them, libc called directly).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from ace.agentic.sandbox import Sandbox

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel filter is Linux only")

ESCAPE = "import random\nos = random._os\nsys = os.sys\nctypes = sys.modules['ctypes']\n"
LIBC = "libc = ctypes.CDLL(None, use_errno=True)\n"
WORKER_LOCALS = (
    "frame = sys._getframe()\n"
    "while 'reply_fd' not in frame.f_locals:\n    frame = frame.f_back\n"
    "nonce, reply_fd = frame.f_locals['nonce'], frame.f_locals['reply_fd']\n"
)
"""Finds the current request's nonce and the reply descriptor in the worker's own frames."""
FORGED_REPLY = (
    "import json\n"
    "body = json.dumps({'stdout': 'FORGED', 'stderr': '', 'error': None, 'memory_exceeded': False,\n"
    "                   'truncated': False}).encode()\n"
    "os.write(reply_fd, b'\\x00ACE-SBX' + nonce + len(body).to_bytes(4, 'big') + body)\n"
)
F_SETOWN, F_SETSIG, F_GETFL, F_SETFL, F_SETLEASE, F_NOTIFY, F_SETOWN_EX = 8, 10, 3, 4, 1024, 1026, 15
F_DUPFD, F_GETFD, F_SETFD, F_DUPFD_CLOEXEC, F_SETPIPE_SZ, F_GETPIPE_SZ = 0, 1, 2, 1030, 1031, 1032
O_ASYNC = 0o20000
NOBODY = 65534
EXIT_WAIT_S = 20.0
"""Bound on waiting for a process to die (the wait ends as soon as it does)."""


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(timeout_s=3.0, memory_mb=256, max_output_chars=2_000) as sandbox:
        sandbox.start({"traces": ["t1"]})
        yield sandbox


def assert_still_works(sandbox: Sandbox) -> None:
    result = sandbox.execute("print(traces, 6 * 7)")
    assert (result.stdout, result.error) == ("['t1'] 42\n", None)


def wait_until_gone(pid: int, timeout_s: float = EXIT_WAIT_S) -> bool:
    """Wait, at most `timeout_s`, until process `pid` has exited (a zombie counts as exited)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout_s)[0])
    finally:
        os.close(pidfd)


# Class 1: signals ----------------------------------------------------------------------------------

FCNTL_REFUSED = {
    "F_SETOWN": f"libc.fcntl(0, {F_SETOWN}, os.getpid())",
    "F_SETOWN_EX": f"libc.fcntl(0, {F_SETOWN_EX}, ctypes.byref((ctypes.c_int * 2)(1, os.getpid())))",
    "F_SETSIG": f"libc.fcntl(0, {F_SETSIG}, 9)",
    "F_SETLEASE": f"libc.fcntl(0, {F_SETLEASE}, 0)",
    "F_NOTIFY": f"libc.fcntl(0, {F_NOTIFY}, 1)",
    "F_SETPIPE_SZ": f"libc.fcntl(0, {F_SETPIPE_SZ}, 4096)",
    "F_SETFL with O_ASYNC": f"libc.fcntl(0, {F_SETFL}, libc.fcntl(0, {F_GETFL}) | {O_ASYNC})",
    "F_DUPFD": f"libc.fcntl(0, {F_DUPFD}, 0)",
    "F_DUPFD_CLOEXEC": f"libc.fcntl(0, {F_DUPFD_CLOEXEC}, 0)",
    "F_GETPIPE_SZ": f"libc.fcntl(0, {F_GETPIPE_SZ})",
}


@pytest.mark.parametrize("command", sorted(FCNTL_REFUSED))
def test_fcntl_commands_outside_the_allow_list_are_refused(box: Sandbox, command: str):
    result = box.execute(ESCAPE + LIBC + f"print({FCNTL_REFUSED[command]}, ctypes.get_errno())")
    assert (result.stdout, result.error) == ("-1 1\n", None)
    assert_still_works(box)


def test_fcntl_commands_cpython_needs_still_work(box: Sandbox):
    probe = (
        ESCAPE
        + LIBC
        + (
            f"flags = libc.fcntl(0, {F_GETFL})\n"
            f"print(flags >= 0, libc.fcntl(0, {F_GETFD}) >= 0, libc.fcntl(0, {F_SETFD}, 1),\n"
            f"      libc.fcntl(0, {F_SETFL}, flags))\n"
        )
    )
    assert (box.execute(probe).stdout, box.execute("print(1)").stdout) == ("True True 0 0\n", "1\n")


def test_pipes_armed_to_signal_other_processes_kill_neither_a_victim_nor_another_sandbox(box: Sandbox):
    # The victim runs as the worker's user, the one whose processes a signal from the worker may reach.
    as_worker = {"user": NOBODY, "group": NOBODY} if os.geteuid() == 0 else {}
    victim = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, **as_worker)
    try:
        with Sandbox(timeout_s=3.0) as other:
            assert other.execute("kept = 'other'").error is None
            other_pid = other.process_id
            # Request pipe -> SIGKILL to the victim when the host writes; reply pipe -> SIGKILL to
            # the other sandbox when the host reads.
            probe = (
                ESCAPE
                + LIBC
                + WORKER_LOCALS
                + (
                    f"for fd, target in ((0, {victim.pid}), (reply_fd, {other_pid})):\n"
                    f"    print(libc.fcntl(fd, {F_SETSIG}, 9), libc.fcntl(fd, {F_SETOWN}, target),\n"
                    f"          libc.fcntl(fd, {F_SETFL}, libc.fcntl(fd, {F_GETFL}) | {O_ASYNC}), ctypes.get_errno())\n"
                )
            )
            hostile = box.execute(probe)
            assert_still_works(box)
            assert victim.poll() is None
            assert other.process_id == other_pid
            assert (other.execute("print(kept)").stdout, other.process_id) == ("other\n", other_pid)
            assert (hostile.stdout, hostile.error) == ("-1 -1 -1 1\n-1 -1 -1 1\n", None)
    finally:
        victim.kill()
        victim.wait()


def test_a_sigkill_the_code_sent_itself_is_not_blamed_on_the_out_of_memory_killer(box: Sandbox):
    result = box.execute(ESCAPE + "os.kill(os.getpid(), 9)")
    assert result.state_lost and not result.memory_exceeded
    error = result.error or ""
    assert "killed by SIGKILL" in error and "most likely" not in error
    assert "not by the kernel's out-of-memory killer" in error
    assert_still_works(box)


def test_a_sigxcpu_the_code_sent_itself_is_not_blamed_on_the_cpu_limit(box: Sandbox):
    result = box.execute(ESCAPE + "os.kill(os.getpid(), 24)")
    assert result.state_lost
    error = result.error or ""
    assert "killed by SIGXCPU" in error and "not at its CPU-time limit" in error
    assert_still_works(box)


# Class 2: timeouts ---------------------------------------------------------------------------------


def test_a_forged_reply_and_a_stalled_request_pipe_cannot_block_the_host_past_its_timeout():
    sandbox = Sandbox(timeout_s=2.0)
    # The reply is forged so that the call returns at once, then the code never reads again (and
    # ignores SIGXCPU): the next request, larger than a pipe holds, can be written only in part.
    forged = sandbox.execute(
        ESCAPE
        + LIBC
        + WORKER_LOCALS
        + FORGED_REPLY
        + f"libc.signal({signal.SIGXCPU}, ctypes.c_void_p(1))\n"
        + f"libc.fcntl(0, {F_SETPIPE_SZ}, 4096)\nwhile True: pass\n"
    )
    assert forged.stdout == "FORGED"
    pid = sandbox.process_id
    assert pid is not None
    with ThreadPoolExecutor(max_workers=1) as pool:
        blocked = pool.submit(sandbox.execute, "big = '" + "x" * 200_000 + "'")
        try:
            result = blocked.result(timeout=60)
        except FutureTimeout:
            os.killpg(pid, signal.SIGKILL)  # frees the stuck writer so that the test can end
            pytest.fail("execute() blocked in a write past its timeout")
        closing = pool.submit(sandbox.close)
        closing.result(timeout=60)
    assert result.timed_out and result.state_lost
    assert wait_until_gone(pid)
    assert sandbox.execute("print('fresh')").stdout == "fresh\n"
    sandbox.close()


# Class 3: lifetime ---------------------------------------------------------------------------------

HOST_SCRIPT = """
import json, sys
from ace.agentic.sandbox import Sandbox
box = Sandbox(timeout_s=600.0)
box.start()
print(json.dumps({"pid": box.process_id}), flush=True)
box.execute("while True: pass")
"""


@pytest.mark.parametrize("host_signal", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_killed_host_takes_its_worker_and_then_its_folder_with_it(host_signal: int):
    host = subprocess.Popen([sys.executable, "-c", HOST_SCRIPT], stdout=subprocess.PIPE)
    try:
        assert host.stdout is not None
        worker = json.loads(host.stdout.readline())["pid"]
        workdir = Path(os.readlink(f"/proc/{worker}/cwd"))
        assert workdir.is_dir()
        host.send_signal(host_signal)
        assert host.wait(timeout=EXIT_WAIT_S) == -host_signal
        assert wait_until_gone(worker), "the worker outlived its host"
    finally:
        host.kill()
        host.wait()
    with Sandbox() as next_sandbox:
        assert next_sandbox.execute("print(1)").stdout == "1\n"
    assert not workdir.exists()


def test_a_live_hosts_folder_survives_another_sandbox_start():
    host = subprocess.Popen([sys.executable, "-c", HOST_SCRIPT], stdout=subprocess.PIPE)
    try:
        assert host.stdout is not None
        worker = json.loads(host.stdout.readline())["pid"]
        workdir = Path(os.readlink(f"/proc/{worker}/cwd"))
        with Sandbox() as next_sandbox:
            assert next_sandbox.execute("print(1)").stdout == "1\n"
        assert workdir.is_dir() and host.poll() is None
    finally:
        host.kill()
        host.wait()


def test_a_worker_whose_host_closed_the_request_pipe_exits_while_its_code_runs(box: Sandbox):
    # The host stays alive (no parent-death signal) and the code ignores SIGXCPU: only the EOF
    # watchdog can end the worker within the wait.
    forged = box.execute(
        ESCAPE
        + LIBC
        + WORKER_LOCALS
        + FORGED_REPLY
        + f"libc.signal({signal.SIGXCPU}, ctypes.c_void_p(1))\nwhile True: pass\n"
    )
    assert forged.stdout == "FORGED"
    worker = box.process_id
    assert worker is not None
    request_pipe = os.readlink(f"/proc/{worker}/fd/0")
    host_end = next(int(fd) for fd in os.listdir("/proc/self/fd") if _readlink(f"/proc/self/fd/{fd}") == request_pipe)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, host_end)  # closes the host's end, keeps the descriptor number valid for close()
    os.close(null)
    assert wait_until_gone(worker), "the worker went on after its request pipe closed"


def _readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def test_a_worker_started_from_a_thread_that_has_ended_lives_on():
    # The parent-death signal follows the thread that forked: the host forks from one long-lived thread.
    with Sandbox(timeout_s=3.0) as sandbox:
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert pool.submit(sandbox.execute, "kept = 41").result().error is None
        # The pool's thread has ended here.
        pid = sandbox.process_id
        result = sandbox.execute("print(kept + 1)")
        assert (result.stdout, result.state_lost, sandbox.process_id) == ("42\n", False, pid)


def test_a_host_that_closes_its_sandbox_removes_the_folder(box: Sandbox):
    workdir = Path(os.readlink(f"/proc/{box.process_id}/cwd"))
    box.close()
    assert not workdir.exists()


RLIMIT_RAISES = {
    "setrlimit RLIMIT_CPU": "libc.setrlimit(0, ctypes.byref(limit(-1, -1)))",
    "prlimit RLIMIT_CPU": "libc.prlimit(0, 0, ctypes.byref(limit(-1, -1)), None)",
    "setrlimit RLIMIT_NOFILE": "libc.setrlimit(7, ctypes.byref(limit(16, 16)))",
    "setrlimit RLIMIT_AS lowered": "libc.setrlimit(9, ctypes.byref(limit(64 << 20, 64 << 20)))",
}


@pytest.mark.parametrize("call", sorted(RLIMIT_RAISES))
def test_the_worker_cannot_change_any_of_its_limits(box: Sandbox, call: str):
    probe = (
        ESCAPE
        + LIBC
        + (
            "class limit(ctypes.Structure):\n"
            "    _fields_ = [('cur', ctypes.c_ulong), ('max', ctypes.c_ulong)]\n"
            f"print({RLIMIT_RAISES[call]}, ctypes.get_errno())\n"
        )
    )
    result = box.execute(probe)
    assert (result.stdout, result.error) == ("-1 1\n", None)
    assert_still_works(box)


def test_code_left_running_after_a_forged_reply_is_stopped_by_the_cpu_time_limit():
    with Sandbox(timeout_s=2.0, cpu_time_s=1.0) as sandbox:
        forged = sandbox.execute(ESCAPE + WORKER_LOCALS + FORGED_REPLY + "while True: pass\n")
        assert forged.stdout == "FORGED" and not forged.timed_out
        pid = sandbox.process_id
        assert pid is not None and wait_until_gone(pid)
        ended = sandbox.execute("print('after')")
        assert ended.state_lost and "used up its CPU-time limit" in (ended.error or "")
        assert sandbox.execute("print('fresh')").stdout == "fresh\n"


# Class 4: host robustness --------------------------------------------------------------------------


def test_a_forged_deeply_nested_reply_restarts_the_sandbox_instead_of_raising_recursion_error(box: Sandbox):
    probe = (
        ESCAPE
        + WORKER_LOCALS
        + (
            "body = b'[' * 20_000 + b']' * 20_000\n"
            "os.write(reply_fd, b'\\x00ACE-SBX' + nonce + len(body).to_bytes(4, 'big') + body)\n"
            "while True: pass\n"
        )
    )
    result = box.execute(probe)
    assert result.state_lost and not result.timed_out
    assert "invalid reply" in (result.error or "")
    assert_still_works(box)


def test_a_host_holding_more_than_1023_descriptors_still_runs_code():
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the descriptor limit ({hard}) is too low to hold 1,100 descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        with Sandbox(timeout_s=3.0) as sandbox:
            result = sandbox.execute("print(1)")
            assert (result.stdout, result.error) == ("1\n", None)
            assert sandbox.execute("while True: pass").timed_out
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_printed_lone_surrogates_come_back_as_valid_unicode(box: Sandbox):
    result = box.execute("print('a' + chr(0xd800) + 'b' + chr(0xd83d) + chr(0xde00))\nraise ValueError(chr(0xdc00))")
    assert result.stdout == "a\ufffdb\U0001f600\n"
    assert (result.error or "").endswith("ValueError: \ufffd")
    result.stdout.encode("utf-8")


def test_a_forged_reply_holding_a_lone_surrogate_restarts_the_sandbox(box: Sandbox):
    probe = ESCAPE + WORKER_LOCALS + FORGED_REPLY.replace("'FORGED'", "'\\ud800'") + "while True: pass\n"
    result = box.execute(probe)
    assert result.state_lost and "invalid reply" in (result.error or "")
    assert_still_works(box)


# Class 5: metadata ---------------------------------------------------------------------------------

STAT_PROBES = {
    "os.stat": ("os.stat(path)", "errno 1"),
    "os.lstat": ("os.lstat(path)", "errno 1"),
    "os.readlink": ("os.readlink(path)", "errno 1"),
    "os.access": ("os.access(path, os.F_OK)", "False"),
    "os.path.exists": ("os.path.exists(path)", "False"),
    "libc statx": (
        "(libc.statx(-100, path.encode(), 0, 0xfff, ctypes.create_string_buffer(256)), ctypes.get_errno())",
        "(-1, 1)",
    ),
}
"""Each call on a path, and what it gives when the kernel filter refuses it."""


@pytest.mark.parametrize("path", ["/etc/shadow", "/proc/1", "/proc/self/exe", "."])
@pytest.mark.parametrize("call", sorted(STAT_PROBES))
def test_the_stat_family_reveals_nothing_about_a_path(box: Sandbox, call: str, path: str):
    expression, refused = STAT_PROBES[call]
    probe = (
        ESCAPE
        + LIBC
        + (
            f"path = {path!r}\n"
            f"try:\n    print(repr({expression}))\n"
            "except OSError as exc:\n    print('errno', exc.errno)\n"
        )
    )
    result = box.execute(probe)
    assert (result.stdout, result.error) == (refused + "\n", None)
    assert_still_works(box)
