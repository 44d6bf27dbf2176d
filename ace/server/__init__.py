"""The skills HTTP API: `create_app(skillbook_path)` (run it with `ace serve SKILLBOOK.json`)."""

from .app import MAX_LIMIT, SkillMatchOut, SkillSummary, create_app

__all__ = ["MAX_LIMIT", "SkillMatchOut", "SkillSummary", "create_app"]
