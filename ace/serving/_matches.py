"""What every front door answers for a task: the limits on it and the JSON of a match."""

from __future__ import annotations

from typing import Any

from ace.retrieval.matching import SkillMatch

__all__ = ["MAX_TASK_CHARS", "match_json"]

MAX_TASK_CHARS = 500_000
"""Longest task (or search query) accepted, in characters, by the HTTP API, the MCP tools and
`ace match`."""


def match_json(match: SkillMatch) -> dict[str, Any]:
    """One match as every front door answers it: `id`, `score`, `matched_on`, `section`,
    `keywords`, `issue` (the HTTP API's `SkillMatchOut`)."""
    return {
        "id": match.skill_id,
        "score": match.score,
        "matched_on": match.matched_on,
        "section": match.section,
        "keywords": list(match.keywords),
        "issue": match.issue,
    }
