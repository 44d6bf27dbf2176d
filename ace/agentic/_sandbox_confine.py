"""Confinement of the sandbox worker process, applied once before it reads its first request.

Loaded by `_sandbox_worker.py` by path (the worker never imports the ace package). Standard library
only, plus the `pyseccomp` binding whose file the host passes in.

The seccomp filter is an ALLOW-LIST: every system call not named below fails with EPERM (Python
raises PermissionError). What it lets through is what CPython needs to compute over data already in
memory and to answer on its pipes: read/write on open descriptors, memory management, signals to
itself, clocks, randomness, threads. Consequently, and BY THE KERNEL:
- no exec (execve, execveat), no fork/vfork, and `clone` only when it creates a thread
  (CLONE_THREAD set, no namespace flags); clone3 returns ENOSYS so libc falls back to clone;
- no sockets of any family, no pipes, no new descriptors at all: open/openat/openat2/creat are refused
  whatever the flags, so model code can neither write nor READ files (the allowed modules are imported
  before the filter is loaded); no unlink/rename/mkdir/chmod/chown/truncate/link/symlink/mknod;
- no ptrace, process_vm_*, mount, bpf, io_uring, memfd_create, userfaultfd, perf_event_open, keyctl,
  setsid/setpgid, prctl, setuid-family; no rlimit changes at all (prlimit64 may only read the
  process's own limits); ioctl only for the tty query CPython makes (TCGETS) and FIOCLEX/FIONCLEX;
- `fcntl` only for F_GETFD/F_SETFD (close-on-exec, what os.get/set_inheritable use), F_GETFL and
  F_SETFL without O_ASYNC (os.get/set_blocking); the worker itself needs none of them after
  confinement. Refused, among others: F_SETOWN/F_SETOWN_EX/F_SETSIG and O_ASYNC (a pipe that signals
  a chosen process whenever the host touches it), F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ (a pipe shrunk
  to stall the host's writes), F_DUPFD/F_DUPFD_CLOEXEC (new descriptors);
- no metadata of any path: stat, lstat, newfstatat, statx, access, faccessat(2), readlink(at) are
  refused; only `fstat`, which names a descriptor the worker holds, is allowed. (newfstatat with
  AT_EMPTY_PATH cannot be allowed instead: the flag does not stop the kernel from resolving a
  non-empty path, and the filter cannot read the path. glibc implements fstat() through
  newfstatat, so os.fstat raises PermissionError in the sandbox.)
- signals (kill, tgkill) only to itself; other architectures' system call ABIs kill the process
  (SIGSYS).
The filter is synchronised to every thread (the EOF watchdog's thread exists before it loads).
An allow-list rather than a deny-list: a deny-list must name every dangerous call of every kernel
version (open_by_handle_at, new io_uring-style interfaces, ...) and fails open on the one it forgot;
the allow-list fails closed, and what CPython needs for pure computation is small and stable.
"""

from __future__ import annotations

import ctypes  # here, not where it is used: after leaving root the standard library may be unreadable
import errno
import importlib.util
import math
import os
import resource
import signal
import sys
from typing import Any

__all__ = ["confine"]

NOBODY = 65534
OPEN_FILES = 16

_ALWAYS = (
    # descriptors the process already holds
    "read",
    "readv",
    "pread64",
    "preadv",
    "preadv2",
    "write",
    "writev",
    "close",
    "fstat",
    "lseek",
    "getcwd",
    "select",
    "pselect6",
    "poll",
    "ppoll",
    # memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    # signals, threads, the process itself
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "sigaltstack",
    "restart_syscall",
    "futex",
    "set_robust_list",
    "get_robust_list",
    "rseq",
    "set_tid_address",
    "sched_yield",
    "sched_getaffinity",
    "gettid",
    "getpid",
    "getppid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getgroups",
    "getresuid",
    "getresgid",
    "getrusage",
    "getrlimit",
    "times",
    "sysinfo",
    "uname",
    "exit",
    "exit_group",
    # time and randomness
    "clock_gettime",
    "clock_getres",
    "clock_nanosleep",
    "nanosleep",
    "gettimeofday",
    "time",
    "getrandom",
)
_TCGETS, _FIONCLEX, _FIOCLEX = 0x5401, 0x5450, 0x5451
_F_GETFD, _F_SETFD, _F_GETFL, _F_SETFL = 1, 2, 3, 4
_O_ASYNC = 0o20000
_PR_SET_PDEATHSIG = 1
_CLONE_THREAD = 0x00010000
_CLONE_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000


def load_seccomp_binding(path: str) -> Any:
    """Import the pyseccomp module from the file the host found (the worker runs with `-S`)."""
    spec = importlib.util.spec_from_file_location("pyseccomp", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the seccomp binding from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def set_limits(memory_mb: int, cpu_time_s: float) -> None:
    """Address space, no file growth, few descriptors, no new processes for non-root users, no core
    dumps, and `cpu_time_s` more seconds of CPU time: SIGXCPU at the soft limit, SIGKILL a second
    later (the worker cannot raise a limit afterwards: the filter refuses every rlimit change)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_time_s)
    address_space = memory_mb * 1024 * 1024
    for limit, soft, hard in (
        (resource.RLIMIT_AS, address_space, address_space),
        (resource.RLIMIT_FSIZE, 0, 0),
        (resource.RLIMIT_NOFILE, OPEN_FILES, OPEN_FILES),
        (resource.RLIMIT_NPROC, 0, 0),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_CPU, cpu_soft, cpu_soft + 1),
    ):
        resource.setrlimit(limit, (soft, hard))


def drop_root() -> bool:
    """Become `nobody` when running as root (all files are already open); True if it did."""
    if os.geteuid() != 0:
        return False
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    return True


def die_with_host(host_pid: int) -> None:
    """Ask the kernel for SIGKILL when the host dies (Linux), and exit if it already has.

    Set after leaving root: a change of credentials clears the parent-death signal. The host forks
    workers from one long-lived thread, because the signal follows the thread that forked.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != host_pid:
        os._exit(1)  # the host died before the signal was armed


def build_filter(seccomp: Any) -> Any:
    """The allow-list described in the module docstring, as a pyseccomp filter (not yet loaded)."""
    deny = seccomp.ERRNO(errno.EPERM)
    syscall_filter = seccomp.SyscallFilter(defaction=deny)
    syscall_filter.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    syscall_filter.set_attr(seccomp.Attr.CTL_TSYNC, 1)
    native = seccomp.Arch.NATIVE

    def allow(name: str, *args: Any, action: int = seccomp.ALLOW) -> None:
        if seccomp.resolve_syscall(native, name) == -1:
            return  # not a system call on this architecture (e.g. `time` on aarch64)
        syscall_filter.add_rule(action, name, *args)

    for name in _ALWAYS:
        allow(name)
    pid = os.getpid()
    allow("kill", seccomp.Arg(0, seccomp.EQ, pid))
    allow("tgkill", seccomp.Arg(0, seccomp.EQ, pid))
    allow("prlimit64", seccomp.Arg(0, seccomp.EQ, 0), seccomp.Arg(2, seccomp.EQ, 0))  # read own limits
    for command in (_F_GETFD, _F_SETFD, _F_GETFL):
        allow("fcntl", seccomp.Arg(1, seccomp.EQ, command))
    allow("fcntl", seccomp.Arg(1, seccomp.EQ, _F_SETFL), seccomp.Arg(2, seccomp.MASKED_EQ, _O_ASYNC, 0))
    for request in (_TCGETS, _FIOCLEX, _FIONCLEX):
        allow("ioctl", seccomp.Arg(1, seccomp.EQ, request))
    allow("clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD | _CLONE_NAMESPACES, _CLONE_THREAD))
    allow("clone3", action=seccomp.ERRNO(errno.ENOSYS))
    return syscall_filter


def confine(memory_mb: int, cpu_time_s: float, host_pid: int, seccomp_path: str | None) -> tuple[bool, str | None]:
    """Set the limits, leave root, tie the worker's life to the host's, load the filter.
    Returns (filter loaded, why not)."""
    seccomp, reason = None, None
    if seccomp_path is None:
        reason = "no seccomp binding was given to the worker"
    else:
        try:  # before the limits: pyseccomp's library lookup runs ldconfig in a child process
            seccomp = load_seccomp_binding(seccomp_path)
        except Exception as exc:
            reason = f"the seccomp binding failed to load: {type(exc).__name__}: {exc}"
    set_limits(memory_mb, cpu_time_s)
    drop_root()
    die_with_host(host_pid)
    if seccomp is None:
        return False, reason
    try:
        build_filter(seccomp).load()
    except OSError as exc:
        return False, f"the seccomp filter failed to load: {exc}"
    return True, None
