"""Crash-safe file writes: a reader always sees the old complete file or the new complete file.

A writer killed mid-write (SIGKILL, power loss) leaves its temp file `.<name>.<32 hex>.tmp`. The
next writer of the same path removes such leftovers, and only those of dead writers: each writer
holds an exclusive `flock` on its temp file from creation to rename, the kernel drops the lock when
the process dies, so a temp file whose lock can be taken belongs to nobody. Creating a temp file and
locking it happen under a lock on the folder, which the cleaner also holds, so it never sees a live
writer's file in the instant before its lock. No PIDs are involved (nothing to confuse when a PID is
reused, or in another PID namespace). Where locks are unavailable (Windows, a file system refusing
`flock` on a folder) nothing is cleaned up.
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["write_atomic", "write_text_atomic"]


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], object]) -> None:
    """Write `path` through `write(handle)` (its return value is ignored): a temp file in the same folder, fsync, rename, fsync
    of the folder. The parent folder must exist. On any error the temp file is removed and `path`
    is untouched. A symlink is followed (its target is replaced, the link stays) and an existing
    file keeps its permission bits. Temp files of killed writers of `path` are removed first."""
    path = Path(os.path.realpath(path))
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        temp, descriptor = _create_temp(path, directory)
        try:
            # The descriptor stays open (and locked) until after the rename: closing it earlier
            # would let another writer's cleanup take this live temp file for a dead one.
            with os.fdopen(descriptor, "wb", closefd=False) as handle:
                write(handle)
                handle.flush()
                os.fsync(descriptor)
            if path.exists():
                os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
            os.replace(temp, path)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        finally:
            os.close(descriptor)
        os.fsync(directory)
    finally:
        os.close(directory)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """`write_atomic` for UTF-8 text; creates the parent folder if needed."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))


def _create_temp(path: Path, directory: int) -> tuple[Path, int]:
    """Remove dead writers' temp files of `path`, then create and lock this writer's own."""
    locked_folder = _try_lock(directory, fcntl.LOCK_EX if fcntl else 0)
    try:
        if locked_folder:
            _remove_dead_temps(path)
        temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        # os.open with mode 0o666 lets the umask decide permissions, as for any newly created file.
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        if locked_folder:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException:
                os.close(descriptor)
                temp.unlink(missing_ok=True)
                raise
        return temp, descriptor
    finally:
        if locked_folder:
            fcntl.flock(directory, fcntl.LOCK_UN)


def _try_lock(descriptor: int, operation: int) -> bool:
    if fcntl is None:
        return False
    try:
        fcntl.flock(descriptor, operation)
    except OSError:
        return False
    return True


def _remove_dead_temps(path: Path) -> None:
    """Delete `.<name>.<32 hex>.tmp` files of `path` whose writer is gone (their lock is free)."""
    pattern = re.compile(re.escape(f".{path.name}.") + r"[0-9a-f]{32}\.tmp")
    with os.scandir(path.parent) as entries:
        leftovers = [entry.path for entry in entries if pattern.fullmatch(entry.name)]
    for leftover in leftovers:
        try:
            descriptor = os.open(leftover, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            if _try_lock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB):
                os.unlink(leftover)
        except OSError:
            pass  # not ours to remove (permissions): leave it
        finally:
            os.close(descriptor)
