"""Skills as they are injected into a prompt: the rendered text together with the exact ids in it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ace.skillbook import Skill, Skillbook, SkillbookView

__all__ = ["InjectedSkills", "render_skills"]

_SECTION_ORDER = ("context", "harness")


@dataclass(frozen=True)
class InjectedSkills:
    """Prompt text holding skills, and the ids of exactly the skills it renders."""

    text: str
    """The skills as rendered into the prompt ("" when none)."""
    skill_ids: tuple[str, ...]
    """Ids of the skills in `text`, in the order they appear."""

    @classmethod
    def from_skills(cls, skills: Iterable[Skill]) -> InjectedSkills:
        """Render `skills` (e.g. the ones matched to a task) grouped by section."""
        ordered = _in_section_order(skills)
        return cls(text=render_skills(ordered), skill_ids=tuple(skill.id for skill in ordered))

    @classmethod
    def from_skillbook(cls, skillbook: Skillbook | SkillbookView) -> InjectedSkills:
        """Every active skill of `skillbook`, rendered by its own `as_prompt()`."""
        return cls(
            text=skillbook.as_prompt(),
            skill_ids=tuple(skill.id for skill in _in_section_order(skillbook.skills())),
        )


def render_skills(skills: Iterable[Skill]) -> str:
    """Render skills grouped by section, one block per skill: id, keywords, issue, insight.

    The layout is the skillbook's `as_prompt()` layout, so a prompt reads the same whichever way
    its skills were chosen. Returns "" for no skills.
    """
    blocks: list[str] = []
    current_section: str | None = None
    for skill in _in_section_order(skills):
        if skill.section != current_section:
            current_section = skill.section
            blocks.append(f"## {current_section}")
        lines = [f"- [{skill.id}]", f"  Keywords: {', '.join(skill.keywords)}", f"  Issue: {skill.issue}"]
        if skill.insight:
            lines.append(f"  Insight: {skill.insight}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def _in_section_order(skills: Iterable[Skill]) -> list[Skill]:
    listed = list(skills)
    rank = {section: index for index, section in enumerate(_SECTION_ORDER)}
    # sorted() is stable: within a section the caller's order (e.g. match rank) is kept.
    return sorted(listed, key=lambda skill: rank.get(skill.section, len(rank)))
