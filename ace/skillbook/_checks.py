"""Field checks shared by the skillbook records. Every value that comes from a caller or a file
passes through one of these, so a bad one becomes a `SkillbookError` naming the field, with the
value quoted short (`ace.untrusted.quote`) however large it is."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ace.skillbook._errors import SkillbookError
from ace.untrusted import UntrustedInputError, check_text, quote

__all__ = ["MAX_INTEGER", "integer", "optional_text", "required_text", "text", "timestamp"]

MAX_INTEGER = 2**63 - 1
"""Counters, epochs, steps and indices fit a signed 64-bit integer (what other JSON readers keep)."""


def text(value: Any, field: str) -> str:
    """`value` when it is a string of valid Unicode (no lone surrogate, so it can be saved)."""
    if not isinstance(value, str):
        raise SkillbookError(f"{field} must be a string, got {quote(value)}")
    if value.isascii():  # O(1) in CPython, and most text is ASCII: no encoding needed
        return value
    try:
        return check_text(value, field)
    except UntrustedInputError as exc:
        raise SkillbookError(str(exc)) from None


def optional_text(value: Any, field: str) -> str | None:
    """A stripped string, or None for None and blank strings."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise SkillbookError(f"{field} must be a string or None, got {quote(value)}")
    return text(value, field).strip() or None


def required_text(value: Any, field: str) -> str:
    """A stripped, non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise SkillbookError(f"{field} must be a non-empty string, got {quote(value)}")
    return text(value, field).strip()


def integer(value: Any, field: str, *, minimum: int = -MAX_INTEGER, maximum: int = MAX_INTEGER) -> int:
    """An int (not a bool) in [minimum, maximum]."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise SkillbookError(f"{field} must be an integer from {minimum} to {maximum}, got {quote(value)}")
    return value


def timestamp(value: Any, field: str) -> str:
    """An ISO-8601 timestamp (anything `datetime.fromisoformat` reads), stripped."""
    stamp = required_text(value, field)
    try:
        datetime.fromisoformat(stamp)
    except ValueError:
        raise SkillbookError(f"{field} must be an ISO-8601 timestamp, got {quote(value)}") from None
    return stamp
