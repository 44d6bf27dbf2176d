"""The serving core shared by the front doors (`ace serve` and its UI, `ace mcp`, `ace match`):
the followed skillbook (`follow`, `FollowedSkillbook`, with `close()` for shutdown), the JSON of a
match (`match_json`) and the limit on a task's length (`MAX_TASK_CHARS`).

The names below are imported on first use, so a command line that only parses its flags loads
none of the matching stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.serving._followed import FollowedSkillbook, ServedSkillbook, catalog_json, closing_lifespan, follow
    from ace.serving._matches import MAX_TASK_CHARS, match_json

__all__ = [
    "MAX_TASK_CHARS",
    "FollowedSkillbook",
    "ServedSkillbook",
    "catalog_json",
    "closing_lifespan",
    "follow",
    "match_json",
]

_EXPORTS: dict[str, str] = {
    "FollowedSkillbook": "ace.serving._followed",
    "ServedSkillbook": "ace.serving._followed",
    "catalog_json": "ace.serving._followed",
    "closing_lifespan": "ace.serving._followed",
    "follow": "ace.serving._followed",
    "MAX_TASK_CHARS": "ace.serving._matches",
    "match_json": "ace.serving._matches",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
