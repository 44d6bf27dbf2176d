"""`ace.atomic_write`: the old or the new file, never a mix; permissions and symlinks respected."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ace.atomic_write import SymlinkRefusedError, write_atomic, write_text_atomic


def test_a_failing_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "book.json"
    path.write_text("old")

    def fail_halfway(handle) -> None:
        handle.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(path, fail_halfway)

    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["book.json"]


def test_an_existing_file_keeps_its_permission_bits(tmp_path: Path) -> None:
    path = tmp_path / "book.json"
    path.write_text("old")
    os.chmod(path, 0o600)

    write_text_atomic(path, "new")

    assert path.read_text() == "new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlink_is_followed_when_asked_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)

    write_text_atomic(link, "new", follow_symlinks=True)

    assert link.is_symlink()
    assert target.read_text() == "new"


def test_a_symlink_is_refused_by_default_and_nothing_is_written(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "planted.html"
    link = tmp_path / "report.html"
    link.symlink_to(target)  # dangling: the write would create the target

    with pytest.raises(SymlinkRefusedError) as refused:
        write_text_atomic(link, "new")

    assert refused.value.filename == str(link) and not target.parent.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"] and link.is_symlink()
