"""Skills as they are injected into a prompt: the rendered text together with the exact ids in it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ace.skillbook import SECTIONS, Skill, Skillbook, SkillbookView, render_prompt

__all__ = ["InjectedSkills"]


@dataclass(frozen=True)
class InjectedSkills:
    """Prompt text holding skills, and the ids of exactly the skills it renders."""

    text: str
    """The skills as rendered into the prompt ("" when none), in `Skillbook.as_prompt` layout."""
    skill_ids: tuple[str, ...]
    """Ids of the skills in `text`, in the order they appear."""

    @classmethod
    def from_skills(cls, skills: Iterable[Skill]) -> InjectedSkills:
        """Render `skills` (e.g. the ones matched to a task) grouped by section; within a section
        the given order (e.g. match rank) is kept."""
        ordered = _in_section_order(skills)
        return cls(text=render_prompt(ordered), skill_ids=tuple(skill.id for skill in ordered))

    @classmethod
    def from_skillbook(cls, skillbook: Skillbook | SkillbookView) -> InjectedSkills:
        """Every active skill of `skillbook`; the text equals its `as_prompt()` at that moment."""
        return cls.from_skills(skillbook.skills())


def _in_section_order(skills: Iterable[Skill]) -> list[Skill]:
    rank = {section: index for index, section in enumerate(SECTIONS)}
    # sorted() is stable: within a section the caller's order is kept.
    return sorted(skills, key=lambda skill: rank[skill.section])
