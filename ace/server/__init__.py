"""The skills HTTP API: `create_app(skillbook_path)` (run it with `ace serve SKILLBOOK.json`)."""

from .app import MAX_BODY_BYTES, MAX_LIMIT, MAX_TASK_CHARS, SkillMatchOut, SkillSummary, create_app

__all__ = ["MAX_BODY_BYTES", "MAX_LIMIT", "MAX_TASK_CHARS", "SkillMatchOut", "SkillSummary", "create_app"]
