"""A read-only view of a Skillbook, for code that must read skills but never change them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ace.skillbook._skill import Skill

if TYPE_CHECKING:
    from ace.skillbook._skillbook import Skillbook

__all__ = ["SkillbookView"]


class SkillbookView:
    """Live, read-only access to a Skillbook: it reflects later mutations but offers none.

    Returns the same immutable Skill objects as the Skillbook itself.
    """

    __slots__ = ("_skillbook",)

    def __init__(self, skillbook: Skillbook) -> None:
        self._skillbook = skillbook

    def __repr__(self) -> str:
        return f"SkillbookView({self._skillbook!r})"

    def is_view_of(self, skillbook: object) -> bool:
        """Whether this view reads from `skillbook` (without handing out the writable object)."""
        return self._skillbook is skillbook

    def vector_cache(self) -> Skillbook:
        """The Skillbook this view reads, for one purpose: storing vectors through it
        (`set_embeddings`), which are a cache rather than content - retrieval keeps its indexes'
        vectors there so the next start is cheap. Code that must not change skills never calls it."""
        return self._skillbook

    def __len__(self) -> int:
        """The number of skills, inactive ones included."""
        return len(self._skillbook)

    def __contains__(self, skill_id: object) -> bool:
        return skill_id in self._skillbook

    def get_skill(self, skill_id: str) -> Skill | None:
        """The skill with this id (active or not), or None."""
        return self._skillbook.get_skill(skill_id)

    def skills(self, include_inactive: bool = False) -> list[Skill]:
        """Skills in id order; only active ones by default."""
        return self._skillbook.skills(include_inactive)

    def as_prompt(self) -> str:
        """Active skills rendered as Markdown grouped by section."""
        return self._skillbook.as_prompt()

    def stats(self) -> dict[str, Any]:
        """See `Skillbook.stats`."""
        return self._skillbook.stats()

    def source_map(self) -> dict[str, list[dict[str, Any]]]:
        """See `Skillbook.source_map`."""
        return self._skillbook.source_map()

    def source_summary(self) -> dict[str, Any]:
        """See `Skillbook.source_summary`."""
        return self._skillbook.source_summary()

    @property
    def version(self) -> int:
        """The skillbook's current version."""
        return self._skillbook.version

    def changed_ids_since(self, version: int, *, content_only: bool = False) -> frozenset[str] | None:
        """See `Skillbook.changed_ids_since`."""
        return self._skillbook.changed_ids_since(version, content_only=content_only)

    @property
    def embedding_model(self) -> str | None:
        """See `Skillbook.embedding_model`."""
        return self._skillbook.embedding_model
