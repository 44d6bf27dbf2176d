"""The skills HTTP API: `create_app(skillbook_path)` (run it with `ace serve SKILLBOOK.json`).

The app (`.app`) needs the `server` extra (FastAPI) and is imported on first use of its names. What
it shares with `ace mcp` (the followed skillbook, the match JSON) is the serving core, `ace.serving`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import (
        BODY_TIMEOUT_S,
        LOOPBACK_HOSTS,
        MAX_BODY_BYTES,
        MAX_BUFFERED_BODY_BYTES,
        MAX_LIMIT,
        MAX_TASK_CHARS,
        SkillMatchOut,
        SkillSummary,
        allowed_host_patterns,
        create_app,
    )

__all__ = [
    "BODY_TIMEOUT_S",
    "LOOPBACK_HOSTS",
    "MAX_BODY_BYTES",
    "MAX_BUFFERED_BODY_BYTES",
    "MAX_LIMIT",
    "MAX_TASK_CHARS",
    "SkillMatchOut",
    "SkillSummary",
    "allowed_host_patterns",
    "create_app",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
