"""The errors raised by the skillbook: invalid input, unreadable files, unknown skill ids, storage."""

from __future__ import annotations

from ace.errors import AceError
from ace.untrusted import quote

__all__ = ["SkillbookError", "SkillbookFormatError", "SkillbookStorageError", "SkillNotFoundError"]


class SkillbookError(AceError, ValueError):
    """A value breaks a skillbook invariant (bad section, empty issue, missing insight, ...), or a
    mutation does not apply to the skill (e.g. activating one that is active).

    The message names the field and the offending value; fix the input and call again. Base class
    of `SkillbookFormatError` and `SkillNotFoundError`, so `except SkillbookError` catches every
    error the skillbook raises on purpose.
    """


class SkillbookFormatError(SkillbookError):
    """A skillbook file cannot be loaded: wrong schema version, malformed JSON, or a stored skill
    that breaks an invariant. The message names the file or the skill id and field.

    A file of another schema version must be regenerated; a damaged `.embeddings.npz` sidecar can
    simply be deleted (embeddings are a cache and are recomputed).
    """


class SkillNotFoundError(SkillbookError, KeyError):
    """No skill has the given id. Check the id (e.g. `context-00001`) against `Skillbook.skills()`.

    Also a `KeyError` (a lookup by id failed), and a `ValueError` through `SkillbookError`; its
    message reads `no skill with id '<id>'` (not `KeyError`'s quoted repr).
    """

    def __init__(self, skill_id: str) -> None:
        super().__init__(skill_id)
        self.skill_id = skill_id
        """The id that was looked up."""

    def __str__(self) -> str:
        return f"no skill with id {quote(self.skill_id)}"


class SkillbookStorageError(SkillbookError):
    """The skillbook's database could not be reached or refused the operation (connection refused,
    authentication failed, the `postgres` extra missing, a schema newer than this code).

    The message is one line naming the database (never its password) and the cause; check the URL
    and that the server is up, then retry. Raised by the PostgreSQL backend only; a file backend
    raises `OSError` as before.
    """
