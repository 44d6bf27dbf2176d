"""uvicorn's access log with long request lines cut: a 100 KB query string must not become a 100 KB log line."""

from __future__ import annotations

import copy
import logging
from typing import Any

from ace.redaction import RedactSecrets

__all__ = ["MAX_LOGGED_TARGET_CHARS", "CutLongRequestTargets", "access_log_config"]

MAX_LOGGED_TARGET_CHARS = 200
"""Characters of a request's path and query string the access log keeps; the rest is replaced by
its length."""


class CutLongRequestTargets(logging.Filter):
    """Shortens the request target (path + query string) of uvicorn access records to `limit`
    characters, noting the full length: `GET /memory/skills?task=abc... (100,031 characters)`."""

    def __init__(self, limit: int = MAX_LOGGED_TARGET_CHARS) -> None:
        super().__init__()
        self.limit = limit

    def filter(self, record: logging.LogRecord) -> bool:
        # uvicorn logs `'%s - "%s %s HTTP/%s" %d'` with (client, method, target, http version, status);
        # its AccessFormatter reads the same tuple, so replacing the target covers both formats.
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str) and len(args[2]) > self.limit:
            target = args[2]
            record.args = (*args[:2], f"{target[: self.limit]}... ({len(target):,} characters)", *args[3:])
        return True


def access_log_config(limit: int = MAX_LOGGED_TARGET_CHARS) -> dict[str, Any]:
    """uvicorn's default `log_config` with `CutLongRequestTargets(limit)` on the `uvicorn.access`
    logger and every handler's records redacted (`ace.redaction`)."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    filters = config.setdefault("filters", {})
    filters["cut_long_request_targets"] = {"()": CutLongRequestTargets, "limit": limit}
    filters["redact_secrets"] = {"()": RedactSecrets}
    config["loggers"]["uvicorn.access"].setdefault("filters", []).append("cut_long_request_targets")
    for handler in config["handlers"].values():
        handler.setdefault("filters", []).append("redact_secrets")
    return config
