"""Agent Skills: a skillbook's active skills as SKILL.md folders, and SKILL.md folders (ours or
anyone's) as skills. See docs/integrations.md, "Agent Skills (SKILL.md)".

`export_agent_skills(skillbook, out_dir)` writes one folder per active skill, named by the skill's
stable name; `import_agent_skills(folder, skillbook)` adds a skill per valid SKILL.md and reports,
per file, what it added, what it skipped as already present and what failed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ace.atomic_write import write_text_atomic
from ace.skillbook._checks import read_limited
from ace.skillbook._errors import SkillbookError
from ace.skillbook._operations import UpdateBatch, UpdateOperation
from ace.skillbook._provenance import InsightSource
from ace.skillbook._skill import Section, Skill, skill_id_order
from ace.skillbook._skill_md import ParsedSkillMd, SkillMdError, name_for, parse_skill_md, render_skill_md
from ace.skillbook._skillbook import Skillbook
from ace.untrusted import quote

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
    changed, our folders of skills no longer exported are removed, and any other folder is left
    alone. Raises `SkillMdError` before writing anything when `out_dir` is a file or a folder
    that is not ours already has the name of a skill; `OSError` when the file system refuses.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise SkillMdError(f"{out}: not a folder")
    files = {name_for(skill): render_skill_md(skill) for skill in skillbook.skills()}
    existing = _our_folders(out)
    for name in files:
        if (out / name).exists() and name not in existing:
            raise SkillMdError(
                f"{out / name}: exists and is not a skill exported by ace; move it away or export elsewhere"
            )
    written, unchanged = [], []
    for name, text in files.items():
        target = out / name / SKILL_MD
        if name in existing and target.read_bytes() == text.encode("utf-8"):
            unchanged.append(name)
            continue
        write_text_atomic(target, text)
        written.append(name)
    removed = sorted(existing.keys() - files.keys())
    for name in removed:
        (out / name / SKILL_MD).unlink()
        if not any((out / name).iterdir()):
            (out / name).rmdir()
    return ExportReport(tuple(written), tuple(unchanged), tuple(removed))


def _our_folders(out: Path) -> dict[str, ParsedSkillMd]:
    """Folders of `out` holding a SKILL.md exported by ace (front matter with `metadata.ace-skill-id`)."""
    if not out.is_dir():
        return {}
    ours = {}
    for folder in sorted(out.iterdir()):
        try:
            parsed = _read(folder / SKILL_MD, folder.name)
        except (SkillbookError, OSError):
            continue
        if parsed.skill_id is not None:
            ours[folder.name] = parsed
    return ours


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
    paths = [root / SKILL_MD] if (root / SKILL_MD).is_file() else [
        child / SKILL_MD for child in sorted(root.iterdir()) if child.is_dir() and not child.name.startswith(".")
    ]
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
    data = read_limited(path, MAX_SKILL_MD_BYTES)
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
            type="ADD", section=section, skill_id=skill_md.skill_id, issue=skill_md.issue,
            insight=skill_md.insight, keywords=skill_md.keywords, insight_source=source,
        )
        try:  # the id is kept only when this skillbook never handed it out (ids are never reused)
            return skillbook.apply_update(UpdateBatch(reasoning=f"import {quote(str(path))}", operations=(add,)))[0]
        except SkillbookError:
            pass
    return skillbook.add_skill(section, skill_md.issue, skill_md.keywords, skill_md.insight, insight_source=source)
