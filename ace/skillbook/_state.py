"""A skillbook's whole content as plain data, and a change to it: what storage backends and the
mutation journal read from and give to a `Skillbook` (`snapshot`, `restore`, `apply_changes`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ace.skillbook._skill import SECTIONS, EmbeddingKind, Skill

__all__ = ["SkillbookChanges", "SkillbookState", "empty_last_numbers", "merged_last_numbers"]


def empty_last_numbers() -> dict[str, int]:
    """Every section's id counter at 0 (no id handed out yet)."""
    return dict.fromkeys(SECTIONS, 0)


def merged_last_numbers(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """Per section the higher of two id counters: a counter never goes back, so an id handed out
    by either side is never handed out again."""
    return {section: max(a.get(section, 0), b.get(section, 0)) for section in SECTIONS}


@dataclass(frozen=True, slots=True)
class SkillbookState:
    """Everything a skillbook holds at one moment. Skills are immutable, so states share them."""

    skills: Mapping[str, Skill] = field(default_factory=dict)
    """Every skill by id, inactive ones included."""
    last_numbers: Mapping[str, int] = field(default_factory=empty_last_numbers)
    """Per section, the highest id number ever handed out."""
    similarity_decisions: Mapping[str, Any] = field(default_factory=dict)
    """Deduplication decisions by pair key ("idA,idB"), kept verbatim."""
    embedding_models: Mapping[EmbeddingKind, str | None] = field(default_factory=dict)
    """Per vector kind, the embedder that made the stored vectors (absent or None: none stored)."""

    def moved_by(self, changes: SkillbookChanges) -> SkillbookState:
        """This state with `changes` applied (this one is left as it is)."""
        skills = dict(self.skills)
        for skill_id in changes.purged:
            skills.pop(skill_id, None)
        skills.update((skill.id, skill) for skill in changes.skills)
        decisions = dict(self.similarity_decisions)
        for pair, record in changes.decisions:
            if record is None:
                decisions.pop(pair, None)
            else:
                decisions[pair] = record
        return SkillbookState(
            skills,
            dict(changes.last_numbers if changes.last_numbers is not None else self.last_numbers),
            decisions,
            dict(changes.embedding_models if changes.embedding_models is not None else self.embedding_models),
        )


@dataclass(frozen=True, slots=True)
class SkillbookChanges:
    """A change to a skillbook's state: skills put (new or replaced) and purged, decisions set or
    removed, and, when given, the new id counters and embedder names."""

    skills: Sequence[Skill] = ()
    """Skills to store, each replacing the one of its id."""
    purged: Sequence[str] = ()
    """Ids of skills to delete."""
    decisions: Sequence[tuple[str, Any]] = ()
    """(pair key, decision record, or None to remove it), in order."""
    last_numbers: Mapping[str, int] | None = None
    """The id counters afterwards; None keeps them."""
    embedding_models: Mapping[EmbeddingKind, str | None] | None = None
    """The embedder names afterwards; None keeps them."""
