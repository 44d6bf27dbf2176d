"""`SkillIndex`: BM25 + dense search over one skillbook's active skills, kept current incrementally."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, get_args

import numpy as np

from ace import tracing
from ace.errors import UsageError
from ace.skillbook import Skill, Skillbook, SkillbookView, normalize_keywords

from ._snapshot import IndexSnapshot, row_for
from ._terms import terms_of
from .embedder import Embedder, checked_embed
from .fusion import reciprocal_rank_fusion

__all__ = ["SearchMode", "SkillIndex", "backing_skillbook"]

SearchMode = Literal["hybrid", "lexical", "dense"]
_MODES: frozenset[str] = frozenset(get_args(SearchMode))
_SECTIONS = {"context": True, "harness": False}


def backing_skillbook(skillbook: Skillbook | SkillbookView) -> Skillbook:
    """The Skillbook behind `skillbook` (itself, or the one a read-only view reads from).

    Retrieval may write through a view on purpose: the vectors it computes are a cache
    (`set_embeddings` is not a content change), and persisting them is what makes the next start cheap.
    """
    if isinstance(skillbook, Skillbook):
        return skillbook
    if isinstance(skillbook, SkillbookView):
        return skillbook.vector_cache()
    raise TypeError(f"expected a Skillbook or SkillbookView, got {type(skillbook).__name__}")


class SkillIndex:
    """Hybrid search over the active skills of one skillbook with one embedder.

    The index is built on first use and then updated from `changed_ids_since` whenever the
    skillbook's version moved: only new or edited skills are embedded and re-tokenised (BM25's
    corpus statistics are recomputed from the kept terms). Missing skill vectors are embedded in
    batches and written back with `Skillbook.set_embeddings`, so they persist in the `.embeddings.npz`
    sidecar; stored vectors from another embedder are never used. Thread-safe. The index holds only a
    weak reference to the skillbook.
    """

    def __init__(self, skillbook: Skillbook | SkillbookView, embedder: Embedder, *, batch_size: int = 256) -> None:
        """Bind the index to `skillbook` (a Skillbook or its read-only view) and `embedder`. Nothing
        is built until the first `search` or `refresh`. Raises ValueError for a `batch_size` below 1."""
        if batch_size < 1:
            raise UsageError(f"batch_size must be >= 1, got {batch_size}")
        self._skillbook = weakref.ref(backing_skillbook(skillbook))
        self.embedder = embedder
        """The embedder that makes this index's vectors (and embeds queries)."""
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._snapshot = IndexSnapshot.empty()

    @property
    def skill_ids(self) -> tuple[str, ...]:
        """Ids of the indexed skills (active ones, sorted) as of the last refresh."""
        return self._snapshot.ids

    def vectors(self) -> dict[str, np.ndarray]:
        """Skill id -> its indexed unit vector, as of the last refresh (read-only arrays)."""
        snapshot = self._snapshot
        return dict(zip(snapshot.ids, snapshot.matrix))

    def refresh(self) -> None:
        """Bring the index up to the skillbook's current version (a no-op when nothing changed).

        Raises `EmbeddingError` when skills must be embedded and the embedder fails, and
        ReferenceError when the skillbook no longer exists.
        """
        self._current()

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        section: str | None = None,
        keywords: Iterable[str] | None = None,
        mode: SearchMode = "hybrid",
    ) -> list[Skill]:
        """The `top_k` active skills best matching `query`, best first. See `retrieve_top_k`."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {query!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise UsageError(f"top_k must be a positive integer, got {top_k!r}")
        if mode not in _MODES:
            raise UsageError(f"mode must be one of {sorted(_MODES)}, got {mode!r}")
        if section is not None and section not in _SECTIONS:
            raise UsageError(f"section must be one of {sorted(_SECTIONS)} or None, got {section!r}")
        wanted_keywords = normalize_keywords(keywords) if keywords else ()
        with tracing.memory_span("search_memory", "SEARCH", mode=mode, top_k=top_k, section=section) as span:
            query_vector = None
            if mode != "lexical":
                query_vector = checked_embed(self.embedder, [query], f"the query {query[:80]!r}")[0]
            snapshot, skillbook = self._current()
            if not snapshot.ids:
                span.set_attribute(tracing.MEMORY_RECORD_COUNT, 0)
                return []
            candidates = _candidate_rows(snapshot, section, wanted_keywords)
            rankings = []
            if mode != "dense":
                rankings.append(_lexical_ranking(snapshot, query, candidates))
            if query_vector is not None:
                # einsum runs single-threaded; `matrix @ vector` goes to multi-threaded BLAS, whose
                # thread wake-ups cost up to 45 ms per query on a busy 2-core machine (measured).
                # Scoring every row and then selecting avoids copying the candidates' rows.
                cosines = np.einsum("ij,j->i", snapshot.matrix, query_vector)[candidates]
                rankings.append(np.argsort(-cosines, kind="stable"))
            fused = reciprocal_rank_fusion(rankings, candidates.size)
            ids = [snapshot.ids[candidates[i]] for i in _best_positions(fused, top_k)]
            found = (skillbook.get_skill(skill_id) for skill_id in ids)
            skills = [skill for skill in found if skill is not None and skill.active]
            span.set_attributes(
                {tracing.SKILL_IDS: [skill.id for skill in skills], tracing.MEMORY_RECORD_COUNT: len(skills)}
            )
        return skills

    def _current(self) -> tuple[IndexSnapshot, Skillbook]:
        skillbook = self._skillbook()
        if skillbook is None:
            raise ReferenceError("the skillbook this SkillIndex was built for no longer exists")
        snapshot = self._snapshot
        if snapshot.version == skillbook.version:
            return snapshot, skillbook
        with self._lock:
            self._snapshot = self._updated(self._snapshot, skillbook)
            return self._snapshot, skillbook

    def _updated(self, snapshot: IndexSnapshot, skillbook: Skillbook) -> IndexSnapshot:
        # Read the version first: a mutation racing with this update then shows up next time.
        version = skillbook.version
        if version == snapshot.version:
            return snapshot
        changed_ids = None
        if snapshot.version >= 0:
            changed_ids = skillbook.changed_ids_since(snapshot.version, content_only=True)
        if changed_ids is None:
            active = {skill.id: skill for skill in skillbook.skills()}
            gone = frozenset(name for name in snapshot.ids if name not in active)
        else:
            fetched = {name: skillbook.get_skill(name) for name in changed_ids}
            active = {name: skill for name, skill in fetched.items() if skill is not None and skill.active}
            gone = frozenset(name for name in fetched if name not in active)
        known = dict(zip(snapshot.ids, snapshot.rows))
        edited = {
            name: skill
            for name, skill in active.items()
            if name not in known or known[name].text != skill.embedding_text()
        }
        removed = gone & known.keys()
        if not edited and not removed:
            return snapshot.at_version(version)
        with tracing.span("retrieval.index.update", added_or_edited=len(edited), removed=len(removed), version=version):
            vectors = self._vectors_for(skillbook, version, edited, snapshot, removed)
            changed = {
                name: (
                    row_for(skill.embedding_text(), skill.section == "context", skill.keywords),
                    vectors[name],
                )
                for name, skill in edited.items()
            }
            return snapshot.updated(version, changed, removed)

    def _vectors_for(
        self,
        skillbook: Skillbook,
        version: int,
        skills: Mapping[str, Skill],
        snapshot: IndexSnapshot,
        removed: frozenset[str],
    ) -> dict[str, np.ndarray]:
        """Vectors of `skills`: the stored ones when this embedder made them, the rest embedded now
        (in batches) and written back to the skillbook."""
        same_space = skillbook.embedding_model == self.embedder.name
        vectors: dict[str, np.ndarray] = {}
        missing: list[Skill] = []
        for name, skill in skills.items():
            stored = skill.embedding
            if same_space and stored is not None and stored.shape == (self.embedder.dim,):
                vectors[name] = stored
            else:
                missing.append(skill)
        for start in range(0, len(missing), self._batch_size):
            batch = missing[start : start + self._batch_size]
            fresh = dict(zip((skill.id for skill in batch), self._embed_skills(batch)))
            vectors.update(fresh)
            if not same_space:
                # Storing in a new vector space clears every other stored vector: hand over those
                # this index already holds for unchanged skills, so the sidecar stays complete.
                fresh = {**_unchanged_vectors(snapshot, skills.keys() | removed), **fresh}
                same_space = True
            self._store(skillbook, version, fresh)
        return vectors

    def _embed_skills(self, skills: Sequence[Skill]) -> np.ndarray:
        with tracing.span("retrieval.embed_skills", count=len(skills), embedder=self.embedder.name):
            texts = [skill.embedding_text() for skill in skills]
            return checked_embed(self.embedder, texts, f"{len(skills)} skills ({skills[0].id}, ...)")

    def _store(self, skillbook: Skillbook, version: int, vectors: dict[str, np.ndarray]) -> None:
        """Write `vectors` (made from texts read at `version`) to the skillbook: they persist in its
        `.embeddings.npz` sidecar."""
        # The skillbook skips vectors of skills changed or deleted after `version` (stale); checking
        # here instead would race with a concurrent purge.
        skillbook.set_embeddings(vectors, model=self.embedder.name, computed_at_version=version)


def _unchanged_vectors(snapshot: IndexSnapshot, excluded: Iterable[str]) -> dict[str, np.ndarray]:
    skip = set(excluded)
    return {name: vector for name, vector in zip(snapshot.ids, snapshot.matrix) if name not in skip}


def _candidate_rows(snapshot: IndexSnapshot, section: str | None, keywords: Sequence[str]) -> np.ndarray:
    """Row numbers (ascending) passing the section and keyword filters."""
    mask = np.ones(len(snapshot.ids), dtype=bool)
    if section is not None:
        mask &= snapshot.is_context if _SECTIONS[section] else ~snapshot.is_context
    if keywords:
        with_keyword = np.zeros_like(mask)
        for keyword in keywords:
            rows = snapshot.keyword_rows.get(keyword)
            if rows is not None:
                with_keyword[rows] = True
        mask &= with_keyword
    return np.flatnonzero(mask)


def _lexical_ranking(snapshot: IndexSnapshot, query: str, candidates: np.ndarray) -> np.ndarray:
    """Candidate positions with a positive BM25 score, best first (ties in id order)."""
    scores = snapshot.lexical.scores(terms_of(query))[candidates]
    matching = np.flatnonzero(scores > 0.0)
    return matching[np.argsort(-scores[matching], kind="stable")]


def _best_positions(scores: np.ndarray, top_k: int) -> np.ndarray:
    """Positions of the `top_k` highest positive scores, best first; equal scores in position order
    (candidates are in id order, so ties go by skill id)."""
    positive = np.flatnonzero(scores > 0.0)
    if positive.size > top_k:
        # Keep everything tied with the k-th best so the stable sort below can order ties by id.
        kth_best = np.partition(scores[positive], positive.size - top_k)[positive.size - top_k]
        positive = positive[scores[positive] >= kth_best]
    return positive[np.argsort(-scores[positive], kind="stable")][:top_k]
