"""Exporters, savers and loaders under attack (issue 23, classes 6 and 7): each test is named for the
attack it stops. The attacker can plant entries (symlinks, FIFOs) in the folders ace writes to or
reads from; ace must never write or delete outside them, and never block on a planted file."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ace.atomic_write import SymlinkRefusedError
from ace.skillbook import Skillbook, SkillbookFormatError
from ace.skillbook.agent_skills import SkillMdError, export_agent_skills, name_for
from ace.untrusted import NotRegularFileError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and O_NOFOLLOW are POSIX")

COMMAND_TIMEOUT_S = 120.0
"""Bound on a CLI call that must not hang (it returns in about a second)."""


def ace(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run the `ace` command line in a child process, which a planted FIFO cannot hang forever."""
    code = "import sys; from ace.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        check=False,
    )


def exported_elsewhere(skillbook: Skillbook, victim: Path) -> dict[str, bytes]:
    """Export `skillbook` into `victim` (the attacker's target, outside OUT_DIR); its files' bytes."""
    export_agent_skills(skillbook, victim)
    return {str(path.relative_to(victim)): path.read_bytes() for path in sorted(victim.rglob("*")) if path.is_file()}


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


# Class 6: exporters follow symlinks -------------------------------------------------------------


def test_a_symlinked_skill_folder_planted_in_out_dir_is_not_written_through(
    skillbook: Skillbook, tmp_path: Path
) -> None:
    victim, out = tmp_path / "victim", tmp_path / "out"
    before = exported_elsewhere(skillbook, victim)
    skillbook.update_skill("context-00001", insight="A changed insight the victim must not receive.")
    out.mkdir()
    name = name_for(skillbook.get_skill("context-00001"))
    (out / name).symlink_to(victim / name, target_is_directory=True)

    with pytest.raises(SkillMdError, match="symbolic link"):
        export_agent_skills(skillbook, out)

    assert files_of(victim) == before
    assert (out / name).is_symlink() and os.listdir(out) == [name]


def test_a_symlinked_folder_of_a_removed_skill_is_not_deleted_through(skillbook: Skillbook, tmp_path: Path) -> None:
    victim, out = tmp_path / "victim", tmp_path / "out"
    old = Skillbook()
    old.add_skill("context", "A skill the victim exported long ago.", ["old"], "Keep it.")
    old_name = name_for(old.get_skill("context-00001"))
    old_name = old_name.replace("context-00001", "context-00099")
    (victim / old_name).mkdir(parents=True)
    export_agent_skills(old, tmp_path / "staging")
    (victim / old_name / "SKILL.md").write_bytes(
        (tmp_path / "staging" / name_for(old.get_skill("context-00001")) / "SKILL.md")
        .read_bytes()
        .replace(b"context-00001", b"context-00099")
    )
    before = files_of(victim)
    out.mkdir()
    (out / old_name).symlink_to(victim / old_name, target_is_directory=True)

    report = export_agent_skills(skillbook, out)

    assert report.removed == () and files_of(victim) == before
    assert (out / old_name).is_symlink()


def test_a_symlinked_skill_md_planted_in_one_of_our_folders_is_not_replaced_through(
    skillbook: Skillbook, tmp_path: Path
) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside.md"
    export_agent_skills(skillbook, out)
    name = name_for(skillbook.get_skill("context-00001"))
    outside.write_bytes((out / name / "SKILL.md").read_bytes())
    (out / name / "SKILL.md").unlink()
    (out / name / "SKILL.md").symlink_to(outside)
    skillbook.update_skill("context-00001", insight="A changed insight that must stay inside OUT_DIR.")
    before = outside.read_bytes()

    with pytest.raises(SkillMdError, match="not a skill exported by ace"):
        export_agent_skills(skillbook, out)

    assert outside.read_bytes() == before and (out / name / "SKILL.md").is_symlink()


def test_a_dangling_symlink_planted_as_the_sidecar_makes_no_file_outside_the_folder(tmp_path: Path) -> None:
    folder, outside = tmp_path / "skillbooks", tmp_path / "elsewhere" / "planted.npz"
    folder.mkdir()
    outside.parent.mkdir()
    (folder / "team.embeddings.npz").symlink_to(outside)
    book = Skillbook()
    book.add_skill("context", "An issue.", ["k"], "An insight.")
    book.set_embeddings({"context-00001": np.ones(4)}, model="m")

    with pytest.raises(SymlinkRefusedError) as refused:
        book.save_to_file(folder / "team.json")

    assert not outside.exists() and os.listdir(outside.parent) == []
    assert refused.value.filename == str(folder / "team.embeddings.npz")
    assert sorted(os.listdir(folder)) == ["team.embeddings.npz"]  # nothing half-saved beside the link


def test_a_planted_sidecar_link_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    book = Skillbook()
    book.add_skill("context", "An issue.", ["k"], "An insight.")
    book.save_to_file(tmp_path / "team.json")
    (tmp_path / "team.embeddings.npz").unlink()
    (tmp_path / "team.embeddings.npz").symlink_to(tmp_path / "nowhere" / "x.npz")

    result = ace("skillbook", "remove", tmp_path / "team.json", "context-00001", "--reason", "stale")

    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "symbolic link" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "nowhere").exists()


# Class 7: non-regular files -----------------------------------------------------------------------


def test_a_fifo_named_skill_md_does_not_hang_import_skills_or_keep_the_lock(tmp_path: Path) -> None:
    folder = tmp_path / "skills"
    (folder / "plain-skill").mkdir(parents=True)
    (folder / "plain-skill" / "SKILL.md").write_text(
        "---\nname: plain-skill\ndescription: A plain skill.\n---\n\nDo it.\n"
    )
    (folder / "trap").mkdir()
    os.mkfifo(folder / "trap" / "SKILL.md")

    result = ace("skillbook", "import-skills", folder, tmp_path / "book.json")

    assert result.returncode == 1, result.stderr
    assert "trap/SKILL.md" in result.stderr and "FIFO" in result.stderr and "not a regular file" in result.stderr
    with Skillbook.locked(tmp_path / "book.json", timeout=0) as book:  # the lock was released
        assert [skill.issue for skill in book.skills()] == ["A plain skill."]


def test_a_fifo_planted_as_the_sidecar_does_not_hang_a_command_that_reads_vectors(tmp_path: Path) -> None:
    book = Skillbook()
    book.add_skill("context", "An issue.", ["k"], "An insight.")
    book.save_to_file(tmp_path / "team.json")
    (tmp_path / "team.embeddings.npz").unlink()
    os.mkfifo(tmp_path / "team.embeddings.npz")

    result = ace("skillbook", "copy", tmp_path / "team.json", tmp_path / "copy.json")

    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "FIFO" in result.stderr and "delete it" in result.stderr
    with pytest.raises(SkillbookFormatError, match="not a regular file"):
        Skillbook.load_from_file(tmp_path / "team.json")


def test_a_fifo_named_as_the_skillbook_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "team.json")

    result = ace("skillbook", "show", tmp_path / "team.json")  # first: on a reader that blocks, it times out

    assert result.returncode == 2 and "not a regular file" in result.stderr and result.stderr.count("\n") == 1
    with pytest.raises(NotRegularFileError, match="FIFO"):
        Skillbook.load_from_file(tmp_path / "team.json")


@pytest.mark.parametrize("kind", ["socket", "device"])
def test_a_socket_or_a_device_named_as_the_skillbook_or_skill_md_is_refused_before_it_is_read(
    kind: str, tmp_path: Path
) -> None:
    def plant(path: Path) -> None:
        if kind == "device":
            path.symlink_to("/dev/zero")  # endless zeros: a reader would fill its memory up to the limit
        else:
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(str(path))
            listener.close()

    plant(tmp_path / "team.json")
    (tmp_path / "skills" / "trap").mkdir(parents=True)
    plant(tmp_path / "skills" / "trap" / "SKILL.md")

    with pytest.raises(NotRegularFileError, match="socket" if kind == "socket" else "character device"):
        Skillbook.load_from_file(tmp_path / "team.json")
    result = ace("skillbook", "import-skills", tmp_path / "skills", tmp_path / "book.json")
    assert result.returncode == 1 and "not a regular file" in result.stderr


def test_a_fifo_named_skill_md_in_out_dir_does_not_hang_the_export(skillbook: Skillbook, tmp_path: Path) -> None:
    out = tmp_path / "out"
    name = name_for(skillbook.get_skill("context-00001"))
    (out / name).mkdir(parents=True)
    os.mkfifo(out / name / "SKILL.md")

    result = ace("skillbook", "export-skills", _saved(skillbook, tmp_path), out)

    assert result.returncode == 2 and "not a skill exported by ace" in result.stderr


def _saved(skillbook: Skillbook, folder: Path) -> Path:
    path = folder / "book.json"
    skillbook.save_to_file(path)
    return path
