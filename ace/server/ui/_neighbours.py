"""The skills nearest to one skill, as deduplication compares them: active skills of the same
section, by cosine of their search vectors (issue + insight + keywords)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ace.deduplication import DeduplicationConfig
from ace.retrieval import Embedder, skill_index
from ace.retrieval.embedder import checked_embed
from ace.skillbook import Skill, Skillbook, skill_id_order

__all__ = ["DUPLICATE_THRESHOLD", "NearestSkills", "Neighbour"]

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


class NearestSkills:
    """Finds the skills nearest to a skill. The search vectors of each section are stacked into one
    matrix per skillbook state (object and `version`) and kept, so a page costs one product."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        """The embedder of the search vectors (the served matcher's)."""
        self._state: tuple[weakref.ref[Skillbook], int, dict[str, tuple[list[str], np.ndarray]]] | None = None
        self._lock = threading.Lock()

    def nearest(self, skillbook: Skillbook, skill: Skill, limit: int = 5) -> list[Neighbour]:
        """Up to `limit` active skills of `skill`'s section other than itself, most similar first
        (ties by id). Uses the skillbook's shared search index (built on first use); an inactive
        skill, which the index does not hold, has its text embedded here.

        Raises `EmbeddingError` when a text cannot be embedded.
        """
        index = skill_index(skillbook, self.embedder)
        index.refresh()  # may store vectors (a version bump), so read the version after it
        ids, matrix = self._sections(skillbook, index.vectors).get(skill.section, ([], _EMPTY))
        if not ids:
            return []
        row = ids.index(skill.id) if skill.id in ids else None
        own = (
            matrix[row]
            if row is not None
            else checked_embed(self.embedder, [skill.embedding_text()], f"skill {skill.id}")[0]
        )
        similarities = np.einsum("ij,j->i", matrix, own)
        if row is not None:
            similarities[row] = -np.inf
        count = min(limit, len(ids) - (row is not None))
        best = np.argpartition(-similarities, count - 1)[:count] if count else np.array([], dtype=int)
        ranked = sorted(best.tolist(), key=lambda i: (-similarities[i], skill_id_order(ids[i])))
        return [
            Neighbour(skill=neighbour, similarity=round(float(similarities[i]), 4))
            for i in ranked
            if (neighbour := skillbook.get_skill(ids[i])) is not None
        ]

    def _sections(
        self, skillbook: Skillbook, vectors: Callable[[], dict[str, np.ndarray]]
    ) -> dict[str, tuple[list[str], np.ndarray]]:
        state = self._state
        if state is not None and state[0]() is skillbook and state[1] == skillbook.version:
            return state[2]
        with self._lock:
            version = skillbook.version
            by_section: dict[str, tuple[list[str], list[np.ndarray]]] = {}
            for skill_id, vector in vectors().items():
                other = skillbook.get_skill(skill_id)
                if other is not None and other.active:
                    ids, rows = by_section.setdefault(other.section, ([], []))
                    ids.append(skill_id)
                    rows.append(vector)
            sections = {section: (ids, np.stack(rows)) for section, (ids, rows) in by_section.items()}
            self._state = (weakref.ref(skillbook), version, sections)
            return sections


_EMPTY = np.zeros((0, 0), dtype=np.float32)
