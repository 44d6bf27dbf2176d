"""How a skill is shown to a model by the read tools: its fields and its counters."""

from __future__ import annotations

from typing import Any

from ace.skillbook import Skill

__all__ = ["skill_detail", "skill_summary"]

_RECENT_OCCURRENCES = 5


def skill_summary(skill: Skill) -> dict[str, Any]:
    """The skill's id, section, keywords, issue, insight, active flag and counters."""
    return {
        "id": skill.id,
        "section": skill.section,
        "keywords": list(skill.keywords),
        "issue": skill.issue,
        "insight": skill.insight,
        "active": skill.active,
        "counters": {
            "used_count": skill.used_count,
            "helpful_count": skill.helpful_count,
            "harmful_count": skill.harmful_count,
            "neutral_count": skill.neutral_count,
        },
    }


def skill_detail(skill: Skill) -> dict[str, Any]:
    """`skill_summary` plus the occurrence count and the most recent occurrences."""
    occurrences = list(skill.occurrences)
    recent = occurrences[-_RECENT_OCCURRENCES:]
    return {
        **skill_summary(skill),
        "occurrence_count": len(occurrences),
        "recent_occurrences": [
            {
                "trace_id": source.trace_id,
                "operation_type": source.operation_type,
                "epoch": source.epoch,
                "sample_question": source.sample_question,
                "learning_text": source.learning_text,
            }
            for source in recent
        ],
    }
