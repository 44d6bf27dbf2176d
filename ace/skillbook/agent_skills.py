"""Agent Skills: a skillbook's active skills as SKILL.md folders, and SKILL.md folders (ours or
anyone's) as skills. See docs/integrations.md, "Agent Skills (SKILL.md)".

`export_agent_skills(skillbook, out_dir)` writes one folder per active skill, named by the skill's
stable name; `import_agent_skills(folder, skillbook)` adds a skill per valid SKILL.md and reports,
per file, what it added, what it skipped as already present and what failed.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ace.atomic_write import SymlinkRefusedError, write_atomic_at
from ace.skillbook._errors import SkillbookError
from ace.skillbook._operations import UpdateBatch, UpdateOperation
from ace.skillbook._provenance import InsightSource
from ace.skillbook._skill import Section, Skill, skill_id_order
from ace.skillbook._skill_md import ParsedSkillMd, SkillMdError, name_for, parse_skill_md, render_skill_md
from ace.skillbook._skillbook import Skillbook
from ace.untrusted import NotRegularFileError, quote, read_limited

__all__ = [
    "MAX_SKILL_MD_BYTES",
    "SKILL_MD_SOURCE_SYSTEM",
    "ExportReport",
    "ImportReport",
    "SkillMdError",
    "export_agent_skills",
    "import_agent_skills",
    "name_for",
    "parse_skill_md",
    "render_skill_md",
]

SKILL_MD_SOURCE_SYSTEM = "skill-md"
"""The `source_system` of the provenance record an imported skill carries (`trace_id` = its name)."""
MAX_SKILL_MD_BYTES = 1024 * 1024
"""Largest SKILL.md imported; the spec advises keeping one under 500 lines."""
SKILL_MD = "SKILL.md"


@dataclass(frozen=True, slots=True)
class ExportReport:
    """What `export_agent_skills` did to the output folder, by skill name."""

    written: tuple[str, ...] = ()
    """Folders whose SKILL.md was created or changed."""
    unchanged: tuple[str, ...] = ()
    """Folders whose SKILL.md already held exactly the export (left untouched)."""
    removed: tuple[str, ...] = ()
    """Folders of ours whose skill is no longer active or was renamed (SKILL.md deleted; the folder
    too when nothing else is in it)."""


@dataclass(slots=True)
class ImportReport:
    """What `import_agent_skills` did, one entry per SKILL.md found."""

    added: list[tuple[Path, str]] = field(default_factory=list)
    """(SKILL.md path, id of the new skill)."""
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    """(SKILL.md path, id of the skill already holding the same issue and insight)."""
    failed: list[tuple[Path, str]] = field(default_factory=list)
    """(SKILL.md path, one-line reason naming the file); those folders were not imported."""


def export_agent_skills(skillbook: Skillbook, out_dir: str | os.PathLike[str]) -> ExportReport:
    """Write every active skill of `skillbook` to `out_dir/<name>/SKILL.md` (each file atomically).

    An existing `out_dir` is updated in place: our folders are rewritten when their content
    changed, our folders of skills no longer exported are removed, and any other entry is left
    alone. Nothing inside `out_dir` is reached through a symlink: every folder and file is opened
    relative to its parent's descriptor with `O_NOFOLLOW`, so a link planted there can never make
    the export write or delete outside `out_dir` (`out_dir` itself may be a link the user made).
    Raises `SkillMdError` before writing anything when `out_dir` is a file, or an entry the export
    would write is a symlink or is not a folder exported by ace; `OSError` when the file system
    refuses (`SymlinkRefusedError` when a link is swapped in while the export runs).
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise SkillMdError(f"{out}: not a folder")
    files = {name_for(skill): render_skill_md(skill) for skill in skillbook.skills()}
    out.mkdir(parents=True, exist_ok=True)
    root = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        existing = _our_folders(root, out)
        for name in files:
            entry = _lstat_at(root, name)
            if entry is not None and stat.S_ISLNK(entry.st_mode):
                raise SkillMdError(
                    f"{out / name}: a symbolic link, which export-skills never writes through; remove "
                    "it or export elsewhere"
                )
            if entry is not None and name not in existing:
                raise SkillMdError(
                    f"{out / name}: exists and is not a skill exported by ace; move it away or export elsewhere"
                )
        written, unchanged = [], []
        for name, text in files.items():
            data = text.encode("utf-8")
            if name in existing and existing[name] == data:
                unchanged.append(name)
                continue
            if name not in existing:
                os.mkdir(name, dir_fd=root)
            folder = _open_folder_at(root, name, out / name)
            try:
                write_atomic_at(folder, SKILL_MD, _writing(data), shown=out / name / SKILL_MD)
            finally:
                os.close(folder)
            written.append(name)
        removed = sorted(existing.keys() - files.keys())
        for name in removed:
            folder = _open_folder_at(root, name, out / name)
            try:
                os.unlink(SKILL_MD, dir_fd=folder)
                empty = not os.listdir(folder)
            finally:
                os.close(folder)
            if empty:
                os.rmdir(name, dir_fd=root)
    finally:
        os.close(root)
    return ExportReport(tuple(written), tuple(unchanged), tuple(removed))


def _our_folders(root: int, out: Path) -> dict[str, bytes]:
    """The SKILL.md bytes of each folder of `root` (the open `out`) exported by ace (front matter
    with `metadata.ace-skill-id`). Symlinks, and folders whose SKILL.md is not a regular file, are
    never ours."""
    ours = {}
    for name in sorted(os.listdir(root)):
        try:
            folder = _open_folder_at(root, name, out / name)
        except OSError:
            continue  # a file, a symlink, a folder we may not open: not ours
        try:
            data = _read_at(folder, SKILL_MD, out / name / SKILL_MD)
            parsed = _parse(data, out / name / SKILL_MD, name)
        except (SkillbookError, OSError):
            continue
        finally:
            os.close(folder)
        if parsed.skill_id is not None:
            ours[name] = data
    return ours


def _lstat_at(directory: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_folder_at(directory: int, name: str, shown: Path) -> int:
    """A descriptor of the folder `name` of `directory`; `SymlinkRefusedError` when it is a link."""
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
    except OSError as exc:
        if exc.errno == errno.ELOOP or stat.S_ISLNK(getattr(_lstat_at(directory, name), "st_mode", 0)):
            raise SymlinkRefusedError(shown) from None
        raise


def _read_at(directory: int, name: str, shown: Path) -> bytes:
    """The first `MAX_SKILL_MD_BYTES + 1` bytes of the regular file `name` of `directory`, opened
    without following a link and without blocking on a FIFO."""
    descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=directory)
    with os.fdopen(descriptor, "rb") as handle:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(shown, mode)
        os.set_blocking(descriptor, True)
        return handle.read(MAX_SKILL_MD_BYTES + 1)


def import_agent_skills(
    folder: str | os.PathLike[str], skillbook: Skillbook, *, section: Section = "context"
) -> ImportReport:
    """Add a skill to `skillbook` for every `<folder>/<name>/SKILL.md` (or `folder/SKILL.md` when
    `folder` is itself one skill), in name order, ours (by skill id) first.

    Each becomes a skill whose provenance names the file (`source_system="skill-md"`,
    `trace_id=<name>`, `display_name=<path>`). Ours keep their section, keywords, issue and, when
    `skillbook` has not handed it out yet, their id; anyone's get `section`, the description as
    issue and the words of the name as keywords. A SKILL.md whose issue and insight a skill of
    `skillbook` (active or not) already holds is skipped. A file that cannot be imported is
    reported in `failed` and the others still import. Hold `Skillbook.locked` around this call
    when `skillbook` is a file others may write.
    """
    root = Path(folder)
    paths = (
        [root / SKILL_MD]
        if (root / SKILL_MD).is_file()
        else [child / SKILL_MD for child in sorted(root.iterdir()) if child.is_dir() and not child.name.startswith(".")]
    )
    report = ImportReport()
    parsed: list[tuple[Path, ParsedSkillMd]] = []
    for path in paths:
        try:
            parsed.append((path, _read(path, path.parent.name)))
        except SkillbookError as exc:
            report.failed.append((path, str(exc)))
        except OSError as exc:
            report.failed.append((path, f"{path}: cannot read ({exc.strerror or exc})"))
    parsed.sort(key=lambda item: (item[1].skill_id is None, skill_id_order(item[1].skill_id or "x-0"), str(item[0])))
    present = {(skill.issue, skill.insight): skill.id for skill in skillbook.skills(include_inactive=True)}
    for path, skill_md in parsed:
        key = (skill_md.issue, skill_md.insight)
        if key in present:
            report.skipped.append((path, present[key]))
            continue
        try:
            skill = _add(skillbook, path, skill_md, section)
        except SkillbookError as exc:
            report.failed.append((path, f"{path}: {exc}"))
            continue
        present[key] = skill.id
        report.added.append((path, skill.id))
    return report


def _read(path: Path, folder_name: str) -> ParsedSkillMd:
    return _parse(read_limited(path, MAX_SKILL_MD_BYTES), path, folder_name)


def _parse(data: bytes, path: Path, folder_name: str) -> ParsedSkillMd:
    if len(data) > MAX_SKILL_MD_BYTES:
        raise SkillMdError(f"{path}: larger than {MAX_SKILL_MD_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillMdError(f"{path}: not UTF-8 (bad byte at offset {exc.start})") from None
    return parse_skill_md(text, folder_name, str(path))


def _add(skillbook: Skillbook, path: Path, skill_md: ParsedSkillMd, default_section: Section) -> Skill:
    section = skill_md.section or default_section
    if section == "context" and skill_md.insight is None:
        raise SkillMdError(
            "the body is empty, and a context skill needs it as its insight (import it with section 'harness')"
        )
    source = InsightSource(
        source_system=SKILL_MD_SOURCE_SYSTEM, trace_id=skill_md.name, display_name=str(path), relation="primary"
    )
    if skill_md.skill_id is not None and skill_md.skill_id not in skillbook:
        add = UpdateOperation(
            type="ADD",
            section=section,
            skill_id=skill_md.skill_id,
            issue=skill_md.issue,
            insight=skill_md.insight,
            keywords=skill_md.keywords,
            insight_source=source,
        )
        try:  # the id is kept only when this skillbook never handed it out (ids are never reused)
            return skillbook.apply_update(UpdateBatch(reasoning=f"import {quote(str(path))}", operations=(add,)))[0]
        except SkillbookError:
            pass
    return skillbook.add_skill(section, skill_md.issue, skill_md.keywords, skill_md.insight, insight_source=source)


def _writing(data: bytes) -> Callable[[IO[bytes]], object]:
    """What `write_atomic_at` calls to fill the new file with `data`."""
    return lambda handle: handle.write(data)
