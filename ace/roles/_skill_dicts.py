"""How a skill is shown to a model by the read tools: its fields, its counters, its occurrences."""

from __future__ import annotations

from typing import Any

from ace.skillbook import InsightSource, Skill

__all__ = ["READ_SKILL_OCCURRENCES", "skill_detail", "skill_summary"]

READ_SKILL_OCCURRENCES = 5
"""How many occurrences `read_skill` shows, newest first; the rest are only counted."""


def skill_summary(skill: Skill) -> dict[str, Any]:
    """The skill's id, section, keywords, issue, insight, active flag and counters."""
    return {
        "id": skill.id,
        "section": skill.section,
        "keywords": list(skill.keywords),
        "issue": skill.issue,
        "insight": skill.insight,
        "active": skill.active,
        "counters": skill.counters(),
    }


def skill_detail(skill: Skill) -> dict[str, Any]:
    """What `read_skill` returns (the Skillbook v2 tool surface): `skill_summary` plus `occurrences`, the newest
    `READ_SKILL_OCCURRENCES` provenance records newest first, and `older_occurrences`, how many
    older ones were left out."""
    occurrences = list(skill.occurrences)
    shown = occurrences[::-1][:READ_SKILL_OCCURRENCES]
    return {
        **skill_summary(skill),
        "occurrences": [_occurrence(source) for source in shown],
        "older_occurrences": len(occurrences) - len(shown),
    }


def _occurrence(source: InsightSource) -> dict[str, Any]:
    return {
        "trace_uid": source.trace_uid,
        "relation": source.relation,
        "operation_type": source.operation_type,
        "epoch": source.epoch,
        "sample_question": source.sample_question,
        "learning_text": source.learning_text,
    }
