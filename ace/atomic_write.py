"""Crash-safe file writes: a reader always sees the old complete file or the new complete file."""

from __future__ import annotations

import os
import stat
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["write_atomic", "write_text_atomic"]


def write_atomic(path: str | os.PathLike[str], write: Callable[[IO[bytes]], None]) -> None:
    """Write `path` through `write(handle)`: a temp file in the same folder, fsync, rename, fsync
    of the folder. The parent folder must exist. On any error the temp file is removed and `path`
    is untouched. A symlink is followed (its target is replaced, the link stays) and an existing
    file keeps its permission bits."""
    path = Path(os.path.realpath(path))
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    # os.open with mode 0o666 lets the umask decide permissions, as for any newly created file.
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(temp, stat.S_IMODE(path.stat().st_mode))
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """`write_atomic` for UTF-8 text; creates the parent folder if needed."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, lambda handle: handle.write(text.encode("utf-8")))
