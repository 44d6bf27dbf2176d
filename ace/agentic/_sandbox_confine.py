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
  setsid/setpgid, prctl, setuid-family, rlimit changes (prlimit64 may read the process's own limits
  and set its own RLIMIT_CPU, which the worker renews before each call), ioctl other than the tty query CPython makes (TCGETS) and FIOCLEX/FIONCLEX;
- signals (kill, tgkill) only to itself; other architectures' system call ABIs kill the process
  (SIGSYS).
An allow-list rather than a deny-list: a deny-list must name every dangerous call of every kernel
version (open_by_handle_at, new io_uring-style interfaces, ...) and fails open on the one it forgot;
the allow-list fails closed, and what CPython needs for pure computation is small and stable.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import resource
from typing import Any

__all__ = ["confine", "renew_cpu_limit"]

NOBODY = 65534
OPEN_FILES = 16

_ALWAYS = (
    # descriptors the process already holds
    "read", "readv", "pread64", "preadv", "preadv2", "write", "writev", "close", "fstat", "newfstatat",
    "statx", "lseek", "fcntl", "getcwd", "select", "pselect6", "poll", "ppoll",
    # memory
    "brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
    # signals, threads, the process itself
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall", "futex",
    "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "sched_yield", "sched_getaffinity",
    "gettid", "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getgroups", "getresuid",
    "getresgid", "getrusage", "getrlimit", "times", "sysinfo", "uname", "exit", "exit_group",
    # time and randomness
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getrandom",
)
_TCGETS, _FIONCLEX, _FIOCLEX = 0x5401, 0x5450, 0x5451
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


def set_limits(memory_mb: int) -> None:
    """Address space, no file growth, few descriptors, no new processes for non-root users, no core dumps."""
    address_space = memory_mb * 1024 * 1024
    for limit, value in ((resource.RLIMIT_AS, address_space), (resource.RLIMIT_FSIZE, 0),
                         (resource.RLIMIT_NOFILE, OPEN_FILES), (resource.RLIMIT_NPROC, 0),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))


def renew_cpu_limit(budget_s: float) -> None:
    """Soft RLIMIT_CPU = CPU time used so far + `budget_s` + 2 s: SIGXCPU for a runaway nobody watches.

    Only the soft limit moves (an unprivileged process cannot raise its hard limit back), so code
    that escapes can raise it too; the host's wall-clock timeout is the limit that always holds.
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(usage.ru_utime + usage.ru_stime + budget_s) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))


def drop_root() -> bool:
    """Become `nobody` when running as root (all files are already open); True if it did."""
    if os.geteuid() != 0:
        return False
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    return True


def build_filter(seccomp: Any) -> Any:
    """The allow-list described in the module docstring, as a pyseccomp filter (not yet loaded)."""
    deny = seccomp.ERRNO(errno.EPERM)
    syscall_filter = seccomp.SyscallFilter(defaction=deny)
    syscall_filter.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
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
    allow("prlimit64", seccomp.Arg(0, seccomp.EQ, 0), seccomp.Arg(1, seccomp.EQ, resource.RLIMIT_CPU))
    for request in (_TCGETS, _FIOCLEX, _FIONCLEX):
        allow("ioctl", seccomp.Arg(1, seccomp.EQ, request))
    allow("clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD | _CLONE_NAMESPACES, _CLONE_THREAD))
    allow("clone3", action=seccomp.ERRNO(errno.ENOSYS))
    return syscall_filter


def confine(memory_mb: int, seccomp_path: str | None) -> tuple[bool, str | None]:
    """Set the limits, leave root, load the filter. Returns (filter loaded, why not)."""
    seccomp, reason = None, None
    if seccomp_path is None:
        reason = "no seccomp binding was given to the worker"
    else:
        try:  # before the limits: pyseccomp's library lookup runs ldconfig in a child process
            seccomp = load_seccomp_binding(seccomp_path)
        except Exception as exc:  # noqa: BLE001 - libseccomp missing raises RuntimeError/OSError
            reason = f"the seccomp binding failed to load: {type(exc).__name__}: {exc}"
    set_limits(memory_mb)
    drop_root()
    if seccomp is None:
        return False, reason
    try:
        build_filter(seccomp).load()
    except OSError as exc:
        return False, f"the seccomp filter failed to load: {exc}"
    return True, None
