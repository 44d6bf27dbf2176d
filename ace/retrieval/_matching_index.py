"""The match index: vectors and terms of the active skills' issue + keywords, swapped atomically."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ace.skillbook import Skill, skill_id_order

from ._matching_terms import FieldTerms, TermStatistics, field_terms
from .embedder import Embedder, checked_embed
from .rerankers._protocol import match_text

__all__ = [
    "MatchEntry",
    "MatchSnapshot",
    "MatchableSkillbook",
    "empty_snapshot",
    "refresh_snapshot",
]


class MatchableSkillbook(Protocol):
    """The skillbook reads the matcher needs (a `Skillbook` and its read-only view provide them)."""

    @property
    def version(self) -> int: ...

    def changed_ids_since(self, version: int) -> frozenset[str] | None: ...

    def get_skill(self, skill_id: str) -> Skill | None: ...

    def skills(self, include_inactive: bool = False) -> list[Skill]: ...


@dataclass(frozen=True, slots=True)
class MatchEntry:
    """One indexed skill: the skill itself, its match text and its field terms."""

    skill: Skill
    """The active skill as it was when indexed."""
    text: str
    """`match_text(skill.issue, skill.keywords)`: what was embedded."""
    terms: FieldTerms
    """Terms of the issue and of the keywords."""


@dataclass(frozen=True, slots=True)
class MatchSnapshot:
    """An immutable state of the index; readers take one reference and never see a half update."""

    entries: tuple[MatchEntry, ...]
    """Indexed skills in id order."""
    vectors: np.ndarray
    """`(len(entries), dim)` unit rows: the embedding of each entry's `text`."""
    statistics: TermStatistics
    """Document frequencies over the entries' terms."""
    version: int | None
    """Skillbook version the snapshot reflects (None before the first build)."""


def empty_snapshot(dim: int) -> MatchSnapshot:
    """A snapshot with no skills, for an index that was never built."""
    return MatchSnapshot((), np.zeros((0, dim), dtype=np.float32), TermStatistics(()), None)


def refresh_snapshot(previous: MatchSnapshot, source: MatchableSkillbook, embedder: Embedder) -> MatchSnapshot:
    """The snapshot for `source`'s current version, reusing everything `previous` already holds.

    Only skills in `source.changed_ids_since(previous.version)` are re-read (all of them when the
    change log cannot answer) and only texts `previous` never embedded are embedded. Returns
    `previous` itself when the version did not move. Raises `EmbeddingError` if the embedder fails
    or returns vectors of the wrong shape.
    """
    version = source.version
    if version == previous.version:
        return previous
    changed = None if previous.version is None else source.changed_ids_since(previous.version)
    if changed is None:
        kept: list[MatchEntry] = []
        updated = [skill for skill in source.skills() if skill.active]
    else:
        kept = [entry for entry in previous.entries if entry.skill.id not in changed]
        updated = [skill for skill in map(source.get_skill, changed) if skill is not None and skill.active]
    entries = tuple(
        sorted([*kept, *map(_entry_for, updated)], key=lambda entry: skill_id_order(entry.skill.id))
    )
    return MatchSnapshot(entries, _vectors_for(entries, previous, embedder), _statistics(entries), version)


def _entry_for(skill: Skill) -> MatchEntry:
    return MatchEntry(skill, match_text(skill.issue, skill.keywords), field_terms(skill.issue, skill.keywords))


def _statistics(entries: tuple[MatchEntry, ...]) -> TermStatistics:
    return TermStatistics(entry.terms.all for entry in entries)


def _vectors_for(entries: tuple[MatchEntry, ...], previous: MatchSnapshot, embedder: Embedder) -> np.ndarray:
    known = {entry.text: row for row, entry in enumerate(previous.entries)}
    missing = sorted({entry.text for entry in entries if entry.text not in known})
    fresh: dict[str, np.ndarray] = {}
    if missing:
        fresh = dict(zip(missing, checked_embed(embedder, missing, f"{len(missing)} skill match texts")))
    vectors = np.zeros((len(entries), embedder.dim), dtype=np.float32)
    for row, entry in enumerate(entries):
        old_row = known.get(entry.text)
        vectors[row] = previous.vectors[old_row] if old_row is not None else fresh[entry.text]
    vectors.setflags(write=False)
    return vectors
