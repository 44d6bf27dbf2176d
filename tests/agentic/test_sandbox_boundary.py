"""Sandbox as a security boundary: each escape probe is refused or stopped, and the sandbox goes on working.

The probes reach the operating system the way hostile code would (`random._os`, a walk of
`object.__subclasses__()`, `BuiltinImporter`, ctypes calling libc directly); the kernel filter must
refuse what they ask for.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ace.agentic.sandbox import Sandbox, SandboxConfinementWarning, SandboxError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel filter is Linux only")

ESCAPE = "import random\nos = random._os\nsys = os.sys\nctypes = sys.modules['ctypes']\n"
"""Prelude of the probes: the os, sys and ctypes modules reached without importing them."""
LIBC = "libc = ctypes.CDLL(None, use_errno=True)\n"


@pytest.fixture
def box() -> Iterator[Sandbox]:
    with Sandbox(timeout_s=3.0, memory_mb=256, max_output_chars=2_000) as sandbox:
        sandbox.start({"traces": ["t1"]})
        yield sandbox


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory anyone may write to, so that only the kernel filter can stop a write there."""
    path = Path(tempfile.mkdtemp(prefix="ace-probe-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path)


def assert_still_works(sandbox: Sandbox) -> None:
    result = sandbox.execute("print(traces, 6 * 7)")
    assert (result.stdout, result.error) == ("['t1'] 42\n", None)


def group_members(pgid: int) -> list[int]:
    """Processes whose process group is `pgid` (field 5 of /proc/PID/stat)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            if int(stat.rpartition(b")")[2].split()[2]) == pgid:
                members.append(int(entry))
    return members


SYSTEM_ROUTES = {
    "random._os": "import random\nos = random._os\n",
    "collections._sys.modules": "import collections\nos = collections._sys.modules['os']\n",
    "object.__subclasses__ walk": (
        "os = next(c.__init__.__globals__['sys'].modules['os'] for c in object.__subclasses__()\n"
        "          if 'sys' in getattr(c.__init__, '__globals__', {}))\n"
    ),
    "BuiltinImporter.load_module('posix')": (
        "importer = next(c for c in object.__subclasses__() if c.__name__ == 'BuiltinImporter')\n"
        "os = importer.load_module('posix')\n"
    ),
}


@pytest.mark.parametrize("route", sorted(SYSTEM_ROUTES))
def test_os_system_through_each_escape_route_runs_nothing(box: Sandbox, open_dir: Path, route: str):
    marker = open_dir / "pwned"
    result = box.execute(SYSTEM_ROUTES[route] + f"print(os.system('touch {marker}'))")
    assert result.error is None, result.error
    assert result.stdout == f"{127 << 8}\n"  # glibc: the shell could not be spawned
    assert not marker.exists()
    assert_still_works(box)


def test_posix_fork_and_execv_from_the_builtin_importer_are_refused(box: Sandbox, open_dir: Path):
    marker = open_dir / "pwned"
    probe = (
        "importer = next(c for c in object.__subclasses__() if c.__name__ == 'BuiltinImporter')\n"
        "posix = importer.load_module('posix')\n"
        "for attempt in (posix.fork, lambda: posix.execv('/usr/bin/touch', ['touch', "
        f"'{marker}'])):\n"
        "    try:\n        attempt()\n    except OSError as exc:\n        print(type(exc).__name__)\n"
    )
    result = box.execute(probe)
    assert (result.stdout, result.error) == ("PermissionError\nPermissionError\n", None)
    assert not marker.exists()
    assert_still_works(box)


def test_fork_by_raw_system_calls_is_refused(box: Sandbox):
    result = box.execute(ESCAPE + LIBC + "print(libc.fork(), ctypes.get_errno())")
    assert (result.stdout, result.error) == ("-1 1\n", None)
    assert_still_works(box)


def test_subprocess_reached_through_sys_modules_is_refused(box: Sandbox, open_dir: Path):
    marker = open_dir / "pwned"
    probe = ESCAPE + (
        "subprocess = sys.modules.get('subprocess') or sys.modules['builtins'].__import__('subprocess')\n"
        f"subprocess.run(['touch', '{marker}'])\n"
    )
    result = box.execute(probe)
    assert "PermissionError" in (result.error or "")
    assert not marker.exists()
    assert_still_works(box)


def test_no_socket_can_be_created_and_nothing_connects_to_a_local_listener(box: Sandbox):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.setblocking(False)
        port = listener.getsockname()[1]
        probe = (
            ESCAPE
            + LIBC
            + (
                "print('libc socket', libc.socket(2, 1, 0), ctypes.get_errno())\n"
                "try:\n"
                "    module = sys.modules.get('socket') or sys.modules['builtins'].__import__('socket')\n"
                f"    module.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                "except (OSError, ImportError) as exc:\n"  # the socket module cannot even be loaded from disk
                "    print('socket module', type(exc).__name__)\n"
            )
        )
        result = box.execute(probe)
        assert result.error is None
        assert result.stdout.startswith("libc socket -1 1\nsocket module ")
        with pytest.raises(BlockingIOError):
            listener.accept()
    assert_still_works(box)


def test_files_cannot_be_written_at_an_absolute_path_or_in_the_working_directory(box: Sandbox, open_dir: Path):
    target = open_dir / "written"
    probe = (
        ESCAPE
        + LIBC
        + (
            f"for path in ({str(target)!r}, 'written'):\n"
            "    try:\n        open(path, 'w').write('x')\n    except OSError as exc:\n        print(type(exc).__name__)\n"
            f"print(libc.open({str(target).encode()!r}, 0o101, 0o644), ctypes.get_errno())\n"  # O_WRONLY | O_CREAT
            "print(os.path.exists('written'))\n"
        )
    )
    result = box.execute(probe)
    assert (result.stdout, result.error) == ("PermissionError\nPermissionError\n-1 1\nFalse\n", None)
    assert not target.exists()
    assert os.listdir(f"/proc/{box.process_id}/cwd") == []
    assert_still_works(box)


def test_files_cannot_be_read_either(box: Sandbox):
    result = box.execute("open('/etc/hostname').read()")
    assert "PermissionError" in (result.error or "")
    assert_still_works(box)


def test_the_host_process_cannot_be_signalled(box: Sandbox):
    result = box.execute(ESCAPE + "os.kill(os.getppid(), 0)")
    assert "PermissionError" in (result.error or "")
    assert_still_works(box)


def test_fake_replies_written_to_every_descriptor_do_not_reach_the_host(box: Sandbox):
    probe = ESCAPE + (
        "import json\n"
        "fake_line = json.dumps({'stdout': 'FORGED', 'stderr': '', 'error': None, 'memory_exceeded': False,\n"
        "                        'truncated': False}).encode() + b'\\n'\n"
        "body = fake_line.strip()\n"
        "fake_frame = b'\\x00ACE-SBX' + os.urandom(16) + len(body).to_bytes(4, 'big') + body\n"
        "for fd in range(21):\n"
        "    try:\n        os.write(fd, fake_line + fake_frame + b'\\x00ACE-SBX' + b'garbage' * 10)\n"
        "    except OSError:\n        pass\n"
        "print('genuine')\n"
    )
    result = box.execute(probe)
    assert (result.stdout, result.error, result.timed_out, result.state_lost) == ("genuine\n", None, False, False)
    assert_still_works(box)


def test_a_frame_forged_with_the_current_nonce_changes_only_its_own_call(box: Sandbox):
    # The worst case: the code finds the nonce of its own request in the worker's memory.
    probe = ESCAPE + (
        "import json\n"
        "frame = sys._getframe()\n"
        "while 'nonce' not in frame.f_locals:\n    frame = frame.f_back\n"
        "nonce, reply_fd = frame.f_locals['nonce'], frame.f_locals['reply_fd']\n"
        "body = json.dumps({'stdout': 'FORGED', 'stderr': '', 'error': None, 'memory_exceeded': False,\n"
        "                   'truncated': False}).encode()\n"
        "os.write(reply_fd, b'\\x00ACE-SBX' + nonce + len(body).to_bytes(4, 'big') + body)\n"
        "os.write(reply_fd, b'\\x00ACE-SBX' + os.urandom(16) + len(body).to_bytes(4, 'big') + body)\n"
        "print('genuine')\n"
    )
    forged = box.execute(probe)
    assert forged.stdout == "FORGED" and not (forged.timed_out or forged.state_lost)
    assert_still_works(box)
    assert box.execute("print('next')").stdout == "next\n"


def test_an_oversized_frame_with_the_current_nonce_restarts_the_sandbox(box: Sandbox):
    probe = ESCAPE + (
        "frame = sys._getframe()\n"
        "while 'nonce' not in frame.f_locals:\n    frame = frame.f_back\n"
        "os.write(frame.f_locals['reply_fd'], b'\\x00ACE-SBX' + frame.f_locals['nonce'] + (2**31).to_bytes(4, 'big'))\n"
        "while True: pass\n"
    )
    result = box.execute(probe)
    assert result.state_lost and not result.timed_out
    assert "invalid reply" in (result.error or "")
    assert_still_works(box)


def test_a_fifty_megabyte_exception_message_is_cut_with_a_marker():
    with Sandbox(timeout_s=3.0, memory_mb=512, max_output_chars=1_000) as sandbox:
        result = sandbox.execute("raise ValueError('x' * 50_000_000)")
        assert result.error is not None and result.truncated
        assert "ValueError: " + "x" * 100 in result.error
        assert "output truncated: 50000000 characters" in result.error
        assert len(result.error) < 1_200
        assert sandbox.execute("print('alive')").stdout == "alive\n"


def test_an_endless_loop_is_stopped_and_no_process_of_its_group_remains(box: Sandbox):
    pgid = box.process_id
    assert pgid is not None
    result = box.execute(ESCAPE + LIBC + "libc.fork()\nwhile True: pass")
    assert result.timed_out and result.state_lost
    assert group_members(pgid) == []
    assert_still_works(box)


def test_a_memory_bomb_is_reported_as_memory_and_the_sandbox_goes_on(box: Sandbox):
    result = box.execute("hoard = []\nwhile True:\n    hoard.append(bytearray(10 ** 7))")
    assert result.memory_exceeded and not result.timed_out
    assert_still_works(box)


def test_os_exit_zero_is_reported_as_the_code_ending_the_process_not_as_memory(box: Sandbox):
    result = box.execute(ESCAPE + "os._exit(0)")
    assert result.state_lost and not result.memory_exceeded
    assert "the code ended the sandbox process (exit status 0)" in (result.error or "")
    assert "memory" not in (result.error or "")
    assert_still_works(box)


def test_a_death_by_signal_names_the_signal(box: Sandbox):
    result = box.execute(ESCAPE + "os.kill(os.getpid(), 15)")
    assert result.state_lost
    assert "killed by SIGTERM" in (result.error or "")
    assert_still_works(box)


def test_the_worker_is_confined_as_declared(box: Sandbox):
    assert_still_works(box)
    status = Path(f"/proc/{box.process_id}/status").read_text()
    assert "\nSeccomp:\t2\n" in status and "\nNoNewPrivs:\t1\n" in status
    if os.geteuid() == 0:
        assert "\nUid:\t65534\t65534\t65534\t65534\n" in status
    limits = {
        line[:26].strip(): line[26:].split()[:2]
        for line in Path(f"/proc/{box.process_id}/limits").read_text().splitlines()[1:]
    }
    assert limits["Max address space"] == [str(256 * 1024 * 1024)] * 2
    assert limits["Max file size"] == ["0", "0"]
    assert limits["Max open files"] == ["16", "16"]
    assert limits["Max processes"] == ["0", "0"]
    soft, hard = (int(value) for value in limits["Max cpu time"])  # start-up CPU + 30 x timeout_s, then +1 s
    assert 90 <= soft <= 90 + 2 and hard == soft + 1
    assert Path(f"/proc/{box.process_id}/environ").read_bytes() == b""
    assert box.kernel_filter_active is True


def test_without_seccomp_the_sandbox_refuses_to_start(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # how Python marks a module as not importable
    with Sandbox() as sandbox, pytest.raises(SandboxError, match="pyseccomp package is not installed"):
        sandbox.execute("print(1)")


def test_without_seccomp_an_explicit_opt_out_runs_with_a_warning(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "pyseccomp", None)
    with Sandbox(require_kernel_filter=False) as sandbox:
        with pytest.warns(SandboxConfinementWarning, match="WITHOUT the seccomp kernel filter"):
            result = sandbox.execute("print(1)")
        assert (result.stdout, sandbox.kernel_filter_active) == ("1\n", False)
