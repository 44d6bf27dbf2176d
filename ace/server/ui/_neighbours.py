"""The skills nearest to one skill, as deduplication compares them: active skills of the same
section, by cosine of their search vectors (issue + insight + keywords)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ace.deduplication import DeduplicationConfig
from ace.retrieval import Embedder, skill_index
from ace.retrieval.embedder import checked_embed
from ace.skillbook import Skill, Skillbook, skill_id_order

__all__ = ["DUPLICATE_THRESHOLD", "Neighbour", "nearest_skills"]

DUPLICATE_THRESHOLD = DeduplicationConfig().similarity_threshold
"""Cosine at or above which deduplication (default settings) treats two skills as duplicates."""


@dataclass(frozen=True, slots=True)
class Neighbour:
    """Another skill and how close it is."""

    skill: Skill
    """The other skill (active, same section)."""
    similarity: float
    """Cosine of the two search vectors, in [-1, 1]."""

    @property
    def duplicate(self) -> bool:
        """True when deduplication with default settings would merge the pair."""
        return self.similarity >= DUPLICATE_THRESHOLD


def nearest_skills(skillbook: Skillbook, skill: Skill, embedder: Embedder, limit: int = 5) -> list[Neighbour]:
    """Up to `limit` active skills of `skill`'s section other than itself, most similar first
    (ties by id). Uses the skillbook's shared search index (built on first use); an inactive
    skill, which the index does not hold, has its text embedded once here.

    Raises `EmbeddingError` when a text cannot be embedded.
    """
    vectors = skill_index(skillbook, embedder).vectors()
    others = [
        other for other_id in vectors
        if other_id != skill.id
        and (other := skillbook.get_skill(other_id)) is not None
        and other.active
        and other.section == skill.section
    ]
    if not others:
        return []
    own = vectors.get(skill.id)
    if own is None:
        own = checked_embed(embedder, [skill.embedding_text()], f"skill {skill.id}")[0]
    similarities = np.einsum("ij,j->i", np.stack([vectors[other.id] for other in others]), own)
    ranked = sorted(zip(similarities.tolist(), others), key=lambda pair: (-pair[0], skill_id_order(pair[1].id)))
    return [Neighbour(skill=other, similarity=round(similarity, 4)) for similarity, other in ranked[:limit]]
