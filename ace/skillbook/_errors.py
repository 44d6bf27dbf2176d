"""The errors raised by the skillbook: invalid input, unreadable files, unknown skill ids."""

from __future__ import annotations

from ace.untrusted import quote

__all__ = ["SkillbookError", "SkillbookFormatError", "SkillNotFoundError"]


class SkillbookError(ValueError):
    """A value breaks a skillbook invariant (bad section, empty issue, missing insight, ...).

    The message names the field and the offending value; fix the input and call again.
    """


class SkillbookFormatError(SkillbookError):
    """A skillbook file cannot be loaded: wrong schema version, malformed JSON, or a stored skill
    that breaks an invariant. The message names the file or the skill id and field.

    A file of another schema version must be regenerated; a damaged `.embeddings.npz` sidecar can
    simply be deleted (embeddings are a cache and are recomputed).
    """


class SkillNotFoundError(KeyError):
    """No skill has the given id. Check the id (e.g. `context-00001`) against `Skillbook.skills()`."""

    def __init__(self, skill_id: str) -> None:
        super().__init__(skill_id)
        self.skill_id = skill_id
        """The id that was looked up."""

    def __str__(self) -> str:
        return f"no skill with id {quote(self.skill_id)}"
