"""The match index: vectors and terms of the active skills' issue + keywords, swapped atomically.

The vectors are the skills' own match vectors (`Skill.match_embedding`, persisted in the skillbook's
`.embeddings.npz` sidecar): a stored vector made by the matcher's embedder is used as is, a missing
one is embedded and stored back through `Skillbook.set_embeddings(..., kind="match")` (not a content
change), like the search index does for search vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ace import tracing
from ace.skillbook import Skill, Skillbook, skill_id_order

from ._matching_terms import FieldTerms, TermStatistics, field_terms
from .embedder import Embedder, checked_embed
from .index import backing_skillbook

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

    def changed_ids_since(self, version: int, *, content_only: bool = False) -> frozenset[str] | None: ...

    def get_skill(self, skill_id: str) -> Skill | None: ...

    def skills(self, include_inactive: bool = False) -> list[Skill]: ...


@dataclass(frozen=True, slots=True)
class MatchEntry:
    """One indexed skill: the skill itself, its match text and its field terms."""

    skill: Skill
    """The active skill as it was when indexed."""
    text: str
    """`skill.match_text()`: what was embedded."""
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

    Only skills in `source.changed_ids_since(previous.version, content_only=True)` are re-read (all
    of them when the change log cannot answer). A skill's vector comes from `previous` when its text
    is unchanged, else from the skill's stored match vector when `embedder` made it, else it is
    embedded; vectors the skillbook lacks are stored in it (when `source` is a `Skillbook` or its
    view). Returns `previous` itself when the version did not move. Raises `EmbeddingError` if the
    embedder fails or returns vectors of the wrong shape.
    """
    version = source.version
    if version == previous.version:
        return previous
    changed = None
    if previous.version is not None:
        # Counter and vector changes leave the issue, keywords and active flag alone: nothing to re-read.
        changed = source.changed_ids_since(previous.version, content_only=True)
    if changed is None:
        kept: list[MatchEntry] = []
        updated = [skill for skill in source.skills() if skill.active]
    else:
        kept = [entry for entry in previous.entries if entry.skill.id not in changed]
        updated = [skill for skill in map(source.get_skill, changed) if skill is not None and skill.active]
    entries = tuple(sorted([*kept, *map(_entry_for, updated)], key=lambda entry: skill_id_order(entry.skill.id)))
    owner = _owner(source)
    vectors = _vectors_for(entries, previous, embedder, owner)
    if owner is not None:
        _store_missing(owner, entries, vectors, embedder, version)
    return MatchSnapshot(entries, vectors, _statistics(entries), version)


def _entry_for(skill: Skill) -> MatchEntry:
    return MatchEntry(skill, skill.match_text(), field_terms(skill.issue, skill.keywords))


def _owner(source: MatchableSkillbook) -> Skillbook | None:
    """The Skillbook whose skills carry the match vectors; None for another source (vectors then
    live only in the index)."""
    try:
        return backing_skillbook(source)  # type: ignore[arg-type]
    except TypeError:
        return None


def _usable(skill: Skill, owner: Skillbook | None, embedder: Embedder) -> np.ndarray | None:
    """The skill's stored match vector when `embedder` made it, else None."""
    stored = skill.match_embedding
    if owner is None or stored is None or owner.match_embedding_model != embedder.name:
        return None
    return stored if stored.shape == (embedder.dim,) else None


def _statistics(entries: tuple[MatchEntry, ...]) -> TermStatistics:
    return TermStatistics(entry.terms.all for entry in entries)


def _vectors_for(
    entries: tuple[MatchEntry, ...], previous: MatchSnapshot, embedder: Embedder, owner: Skillbook | None
) -> np.ndarray:
    known = {entry.text: previous.vectors[row] for row, entry in enumerate(previous.entries)}
    for entry in entries:
        if entry.text not in known and (stored := _usable(entry.skill, owner, embedder)) is not None:
            known[entry.text] = stored
    missing = sorted({entry.text for entry in entries if entry.text not in known})
    if missing:
        with tracing.span("retrieval.embed_match_texts", count=len(missing), embedder=embedder.name):
            known.update(zip(missing, checked_embed(embedder, missing, f"{len(missing)} skill match texts")))
    vectors = np.zeros((len(entries), embedder.dim), dtype=np.float32)
    for row, entry in enumerate(entries):
        vectors[row] = known[entry.text]
    vectors.setflags(write=False)
    return vectors


def _store_missing(
    owner: Skillbook, entries: tuple[MatchEntry, ...], vectors: np.ndarray, embedder: Embedder, version: int
) -> None:
    """Store in `owner` the vectors (made from texts read at `version`) its skills do not carry, so
    the next save persists them in the sidecar. In a new vector space every entry's vector is stored,
    because storing clears the skills' vectors of the old one."""
    same_space = owner.match_embedding_model == embedder.name
    missing = {}
    for row, entry in enumerate(entries):
        # The skill as stored now: an entry kept from an older snapshot holds an older Skill object.
        current = owner.get_skill(entry.skill.id)
        if current is not None and (not same_space or _usable(current, owner, embedder) is None):
            missing[entry.skill.id] = vectors[row]
    if missing:
        # The skillbook skips vectors of skills edited or deleted since `version` (stale).
        owner.set_embeddings(missing, model=embedder.name, kind="match", computed_at_version=version)
