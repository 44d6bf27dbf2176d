"""Tagging the skills a sample was given, after an await: only if each is still the skill it was.

A SkillManager session running beside the sample can undo the ADD of a skill that was handed out;
the undo gives its id back, so the next ADD reuses it for another skill. A step that answers again
and then tags the injected ids would tag that other skill: it takes `identities` before the await
and tags through `tag_unchanged` after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ace.skillbook import InsightSource, Skillbook, SkillNotFoundError

__all__ = ["identities", "tag_unchanged"]


def identities(skillbook: Skillbook, skill_ids: Iterable[str]) -> dict[str, str]:
    """Each id of `skill_ids` still in `skillbook`, with its skill's `created_at`."""
    skills = ((skill_id, skillbook.get_skill(skill_id)) for skill_id in skill_ids)
    return {skill_id: skill.created_at for skill_id, skill in skills if skill is not None}


def tag_unchanged(skillbook: Skillbook, taken: Mapping[str, str], delta: int, source: InsightSource) -> list[str]:
    """Tag (`delta`, `source`) each skill of `taken` that is still the one whose identity was taken;
    one removed or replaced meanwhile is skipped. Returns the ids tagged."""
    tagged = []
    for skill_id, created_at in taken.items():
        skill = skillbook.get_skill(skill_id)
        if skill is None or skill.created_at != created_at:
            continue
        try:
            skillbook.tag_skill(skill_id, delta, insight_source=source)
        except SkillNotFoundError:
            continue  # removed between the look and the tag
        tagged.append(skill_id)
    return tagged
