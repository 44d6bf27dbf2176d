"""The skills HTTP API: `create_app(skillbook_path)` (run it with `ace serve SKILLBOOK.json`).

The app (`.app`) needs the `server` extra (FastAPI) and is imported on first use of its names. What
it shares with `ace mcp` (the followed skillbook, the match JSON) is the serving core, `ace.serving`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ._access_log import access_log_config
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
    "access_log_config",
    "allowed_host_patterns",
    "create_app",
]

_EXPORTS: dict[str, str] = {
    **{name: "ace.server.app" for name in __all__ if name != "access_log_config"},
    "access_log_config": "ace.server._access_log",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
