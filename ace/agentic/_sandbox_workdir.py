"""The sandbox worker's temporary folder, removed by whoever outlives it.

Layout: `<tmp>/ace-sandbox-XXXXXXXX/` (mode 0700, made by `tempfile.mkdtemp`) holding `host.lock`
and `work/`, the worker's empty working directory. The host holds an exclusive `flock` on
`host.lock` for the folder's whole life (the descriptor is close-on-exec, so no worker inherits
it) and writes its pid into the file once it holds the lock. The kernel releases the lock when the
host dies, however it dies; so a folder whose lock can be taken and whose lock file is not empty
belongs to a dead host, and the next sandbox start of the same user removes it (`sweep_orphans`).
A lock file that is still empty belongs to a host between creating and locking it: left alone.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PREFIX", "Workdir", "sweep_orphans"]

PREFIX = "ace-sandbox-"
_LOCK_NAME = "host.lock"
_WORK_NAME = "work"


@dataclass(frozen=True)
class Workdir:
    """One worker's folder, locked by this process until `remove`."""

    root: Path
    """The folder to remove."""
    work: Path
    """The worker's (empty) working directory inside it."""
    lock_fd: int
    """The descriptor holding the lock."""

    @classmethod
    def create(cls) -> Workdir:
        root = Path(tempfile.mkdtemp(prefix=PREFIX))
        lock_fd = os.open(root / _LOCK_NAME, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        os.write(lock_fd, str(os.getpid()).encode())
        work = root / _WORK_NAME
        work.mkdir(mode=0o700)  # entered by the worker before it leaves root; it opens nothing there
        return cls(root=root, work=work, lock_fd=lock_fd)

    def remove(self) -> None:
        """Delete the folder, then let the lock go."""
        shutil.rmtree(self.root, ignore_errors=True)
        os.close(self.lock_fd)


def sweep_orphans(parent: str | None = None) -> list[Path]:
    """Remove the sandbox folders in `parent` (default: the temporary directory) that this user
    owns and whose host is dead. Returns the folders removed; entries it cannot read are skipped."""
    removed: list[Path] = []
    uid = os.geteuid()
    try:
        entries = list(os.scandir(parent or tempfile.gettempdir()))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not (stat.S_ISDIR(info.st_mode) and info.st_uid == uid):
            continue
        lock_fd = _lock_of_dead_host(Path(entry.path))
        if lock_fd is not None:
            try:
                shutil.rmtree(entry.path, ignore_errors=True)
            finally:
                os.close(lock_fd)
            removed.append(Path(entry.path))
    return removed


def _lock_of_dead_host(root: Path) -> int | None:
    """The lock of `root`, taken, when its host died after locking it; else None."""
    try:
        lock_fd = os.open(root / _LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(lock_fd)
        if stat.S_ISREG(info.st_mode) and info.st_size > 0:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError while its host holds it
            if os.fstat(lock_fd).st_size > 0:
                return lock_fd
    except OSError:
        pass
    os.close(lock_fd)
    return None
