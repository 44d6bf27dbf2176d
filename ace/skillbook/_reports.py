"""Read-only renderings of a list of skills: prompt text, statistics, provenance summaries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ace.skillbook._skill import Skill

__all__ = ["render_markdown", "render_prompt", "skill_stats", "source_map", "source_summary"]

_SECTION_ORDER = ("context", "harness")


def render_prompt(skills: Sequence[Skill]) -> str:
    """`skills` as Markdown, `## context` then `## harness`, each in the given order.

    Each skill is `- [id]` followed by indented `Keywords:`, `Issue:` and (when set) `Insight:`
    lines, with a blank line after it; sections without skills are left out; no skills gives "".
    The caller chooses the skills (`Skillbook.as_prompt` passes the active ones).
    """
    blocks: list[str] = []
    for section in _SECTION_ORDER:
        section_skills = [s for s in skills if s.section == section]
        if not section_skills:
            continue
        lines = [f"## {section}"]
        for skill in section_skills:
            lines.append(f"- [{skill.id}]")
            lines.append(f"  Keywords: {', '.join(skill.keywords)}")
            lines.append(f"  Issue: {skill.issue}")
            if skill.insight is not None:
                lines.append(f"  Insight: {skill.insight}")
            lines.append("")
        blocks.append("\n".join(lines))
    return "\n".join(blocks).rstrip("\n")


def skill_stats(skills: Sequence[Skill]) -> dict[str, Any]:
    """`{"sections": <sections holding an active skill>, "skills": <all>, "active_skills": <active>,
    "by_section": {"context": <active>, "harness": <active>}}`."""
    by_section = {section: 0 for section in _SECTION_ORDER}
    for skill in skills:
        if skill.active:
            by_section[skill.section] += 1
    return {
        "sections": sum(1 for count in by_section.values() if count),
        "skills": len(skills),
        "active_skills": sum(by_section.values()),
        "by_section": by_section,
    }


def source_map(skills: Sequence[Skill]) -> dict[str, list[dict[str, Any]]]:
    """`{skill_id: [occurrence dicts]}` for every skill (inactive ones too; [] when it has none)."""
    return {skill.id: [source.to_dict() for source in skill.occurrences] for skill in skills}


def source_summary(skills: Sequence[Skill]) -> dict[str, Any]:
    """Counts of occurrences by epoch, source_system, trace_uid and operation_type (None = unset),
    the total, and how many skills have or lack any occurrence."""
    sources = [source for skill in skills for source in skill.occurrences]
    with_sources = sum(1 for skill in skills if skill.occurrences)
    return {
        "total_sources": len(sources),
        "by_epoch": dict(Counter(source.epoch for source in sources)),
        "by_source_system": dict(Counter(source.source_system for source in sources)),
        "by_trace_uid": dict(Counter(source.trace_uid for source in sources)),
        "by_operation_type": dict(Counter(source.operation_type for source in sources)),
        "skills_with_sources": with_sources,
        "skills_without_sources": len(skills) - with_sources,
    }


def render_markdown(skills: Sequence[Skill], *, title: str = "Skillbook") -> str:
    """A human-readable Markdown document of `skills` (inactive ones marked), grouped by section,
    with keywords, issue, insight, counters and provenance count per skill."""
    active = sum(1 for skill in skills if skill.active)
    lines = [f"# {title}", "", f"{len(skills)} skills, {active} active.", ""]
    for section in _SECTION_ORDER:
        section_skills = [s for s in skills if s.section == section]
        if not section_skills:
            continue
        lines += [f"## {section}", ""]
        for skill in section_skills:
            lines.append(f"### {skill.id}" + ("" if skill.active else " (inactive)"))
            lines.append("")
            lines.append(f"- **Keywords:** {', '.join(skill.keywords)}")
            lines.append(f"- **Issue:** {skill.issue}")
            if skill.insight is not None:
                lines.append(f"- **Insight:** {skill.insight}")
            lines.append(f"- **Counters:** {skill.counters_text()}")
            traces = sorted({source.trace_uid for source in skill.occurrences})
            lines.append(
                f"- **Sources:** {len(traces)} trace(s) in {len(skill.occurrences)} record(s)"
                f"{': ' + ', '.join(traces) if traces else ''}"
            )
            lines.append("")
    return "\n".join(lines)
