"""The UI's refusal of a request parameter (answered with a page saying why, status 400)."""

from __future__ import annotations

from ace.errors import AceError

__all__ = ["UiInputError"]


class UiInputError(AceError):
    """A UI request with a bad parameter; the message says which and what is accepted."""
