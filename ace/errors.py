"""The root of the errors ace raises on purpose: `except AceError` catches anything from this library.

Every error class of `ace` and `ace_eval` derives from `AceError`, and keeps the built-in base it
had (a `SkillbookError` is still a `ValueError`, a `SkillNotFoundError` still a `KeyError`), so
existing `except ValueError` clauses keep working. See docs/errors.md for the whole family.
"""

from __future__ import annotations

__all__ = ["AceError"]


class AceError(Exception):
    """Base class of every error `ace` and `ace_eval` raise on purpose.

    Catch it to handle "anything this library refused" in one clause; catch a subclass
    (`SkillbookError`, `PipelineError`, `EmbeddingError`, ...) to handle one kind. Errors that are
    not an `AceError` come from elsewhere: Python itself (`OSError` for a file that cannot be read,
    `TypeError` for a wrong argument type) or a dependency.
    """
