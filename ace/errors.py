"""The root of the errors ace raises on purpose: `except AceError` catches anything from this library.

Every error class of `ace` and `ace_eval` derives from `AceError`, and keeps the built-in base it
had (a `SkillbookError` is still a `ValueError`, a `SkillNotFoundError` still a `KeyError`), so
existing `except ValueError` clauses keep working. An argument value a function refuses is a
`UsageError`, by one rule (docs/errors.md, "Usage errors"). See docs/errors.md for the whole family.
"""

from __future__ import annotations

__all__ = ["AceError", "UsageError"]


class AceError(Exception):
    """Base class of every error `ace` and `ace_eval` raise on purpose.

    Catch it to handle "anything this library refused" in one clause; catch a subclass
    (`SkillbookError`, `PipelineError`, `EmbeddingError`, ...) to handle one kind. Errors that are
    not an `AceError` come from elsewhere: Python itself (`OSError` for a file that cannot be read,
    `TypeError` for a wrong argument type) or a dependency.
    """


class UsageError(AceError, ValueError):
    """A caller passed an argument value the function does not accept: out of range (`epochs=0`,
    `top_k=0`), not one of a closed set (`mode="fuzzy"`), blank where text is required, or options
    that exclude each other.

    Raised before anything runs or changes; the message names the argument, the value given and
    what is accepted. Fix the call: the same arguments fail the same way every time. An argument of
    the wrong *type* is Python's `TypeError` instead. Packages whose refusals carry a meaning of
    their own derive their class from this one (`PipelineConfigError`, `ModelResolutionError`,
    `E2EInputError`), so `except UsageError` catches every refused argument.
    """
