"""Logging of the long-running commands (`ace serve`, `ace mcp`): quiet by default, one
`--log-level` flag, third-party libraries never below INFO, every record redacted."""

from __future__ import annotations

import argparse
import logging
import sys

from ace.redaction import RedactSecrets

__all__ = ["LOG_LEVELS", "add_log_level_option", "configure_logging"]

LOG_LEVELS = ("debug", "info", "warning", "error")
"""The choices of `--log-level`."""

_OWN = ("ace",)
"""Loggers that follow `--log-level` down to DEBUG; every other library stops at INFO."""


def add_log_level_option(parser: argparse.ArgumentParser) -> None:
    """Add `--log-level` (default warning: only problems are logged)."""
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="warning",
        help="what to log on stderr (default warning: problems only; info adds one line per request)",
    )


def configure_logging(level: str) -> None:
    """Send log records of `level` and above to stderr, one line each, redacted; libraries other
    than ace log at INFO at most verbose (their DEBUG output stays off)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    numeric = logging.getLevelName(level.upper())
    root.setLevel(max(numeric, logging.INFO))
    for name in _OWN:
        logging.getLogger(name).setLevel(numeric)
