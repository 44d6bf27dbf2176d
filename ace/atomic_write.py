"""Crash-safe file writes: a reader always sees the old complete file or the new complete file.

A writer killed mid-write (SIGKILL, power loss) leaves its temp file `.<name>.<32 hex>.tmp`. The
next writer of the same path removes such leftovers, and only those of dead writers: each writer
holds an exclusive `flock` on its temp file from creation to rename, the kernel drops the lock when
the process dies, so a temp file whose lock can be taken belongs to nobody. Creating a temp file and
locking it happen under a lock on the folder, which the cleaner also holds, so it never sees a live
writer's file in the instant before its lock. No PIDs are involved (nothing to confuse when a PID is
reused, or in another PID namespace). Where locks are unavailable (Windows, a file system refusing
`flock` on a folder) nothing is cleaned up.

Every name is resolved relative to a descriptor of its folder, and nothing this module creates or
opens follows a symlink (`O_NOFOLLOW`, `O_EXCL`): a link planted in the folder is never written
through. A symlink at the path to write is refused (`SymlinkRefusedError`) unless the caller asks
for it to be followed (`follow_symlinks=True`: a skillbook file may be a link the user made).
"""

from __future__ import annotations

import errno
import fcntl  # POSIX only, as the fd-relative writes (dir_fd, O_NOFOLLOW) below are
import os
import re
import stat
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ace.errors import AceError

__all__ = ["SymlinkRefusedError", "write_atomic", "write_atomic_at", "write_text_atomic"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class SymlinkRefusedError(AceError, OSError):
    """A file or folder a writer would create or replace is a symbolic link, which it refuses to
    write through (the link could point anywhere, e.g. outside the folder being written). An
    `OSError` (`errno.ELOOP`) whose `filename` is the link; remove the link, or write elsewhere."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(errno.ELOOP, "a symbolic link, which is never written through; remove it", os.fspath(path))


def write_atomic(
    path: str | os.PathLike[str], write: Callable[[IO[bytes]], object], *, follow_symlinks: bool = False
) -> None:
    """Write `path` through `write(handle)` (its return value is ignored): a temp file in the same
    folder, fsync, rename, fsync of the folder. The parent folder must exist. On any error the temp
    file is removed and `path` is untouched. An existing file keeps its permission bits. Temp files
    of killed writers of `path` are removed first.

    A symlink at `path` is refused with `SymlinkRefusedError` (nothing written); with
    `follow_symlinks` it is followed instead (its target is replaced, the link stays)."""
    path = Path(os.path.realpath(path)) if follow_symlinks else Path(path)
    directory = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        write_atomic_at(directory, path.name, write, shown=path)
    finally:
        os.close(directory)


def write_atomic_at(
    directory: int, name: str, write: Callable[[IO[bytes]], object], *, shown: str | os.PathLike[str] | None = None
) -> None:
    """`write_atomic` of the entry `name` of the open folder `directory` (a descriptor), never
    following a symlink: `SymlinkRefusedError` when `name` is one. `shown` names the file in errors
    (default `name`)."""
    temp, descriptor = _create_temp(directory, name)
    try:
        # The descriptor stays open (and locked) until after the rename: closing it earlier
        # would let another writer's cleanup take this live temp file for a dead one.
        with os.fdopen(descriptor, "wb", closefd=False) as handle:
            write(handle)
            handle.flush()
            os.fsync(descriptor)
        try:
            existing = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:
            if stat.S_ISLNK(existing.st_mode):
                raise SymlinkRefusedError(shown if shown is not None else name)
            os.fchmod(descriptor, stat.S_IMODE(existing.st_mode))
        # rename(2) replaces the entry itself: a link planted after the check is replaced, not followed.
        os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=directory)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(descriptor)
    os.fsync(directory)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, follow_symlinks: bool = False) -> None:
    """`write_atomic` for UTF-8 text; creates the parent folder if needed."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda handle: handle.write(text.encode("utf-8")), follow_symlinks=follow_symlinks)


def _create_temp(directory: int, name: str) -> tuple[str, int]:
    """Remove dead writers' temp files of `name`, then create and lock this writer's own."""
    locked_folder = _try_lock(directory, fcntl.LOCK_EX)
    try:
        if locked_folder:
            _remove_dead_temps(directory, name)
        temp = f".{name}.{uuid.uuid4().hex}.tmp"
        # os.open with mode 0o666 lets the umask decide permissions, as for any newly created file.
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=directory)
        if locked_folder:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException:
                os.close(descriptor)
                os.unlink(temp, dir_fd=directory)
                raise
        return temp, descriptor
    finally:
        if locked_folder:
            fcntl.flock(directory, fcntl.LOCK_UN)


def _try_lock(descriptor: int, operation: int) -> bool:
    try:
        fcntl.flock(descriptor, operation)
    except OSError:
        return False
    return True


def _remove_dead_temps(directory: int, name: str) -> None:
    """Delete `.<name>.<32 hex>.tmp` files of `name` whose writer is gone (their lock is free)."""
    pattern = re.compile(re.escape(f".{name}.") + r"[0-9a-f]{32}\.tmp")
    with os.scandir(directory) as entries:
        leftovers = [entry.name for entry in entries if pattern.fullmatch(entry.name)]
    for leftover in leftovers:
        try:
            descriptor = os.open(leftover, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=directory)
        except OSError:
            continue
        try:
            if _try_lock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB):
                os.unlink(leftover, dir_fd=directory)
        except OSError:
            pass  # not ours to remove (permissions): leave it
        finally:
            os.close(descriptor)
