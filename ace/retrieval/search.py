"""`retrieve_top_k`: hybrid skill search with one long-lived index per (skillbook, embedder)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable

from ace.skillbook import Skill, Skillbook, SkillbookView

from .embedder import Embedder
from .index import SearchMode, SkillIndex, backing_skillbook
from .local_embedder import default_embedder

__all__ = ["retrieve_top_k", "skill_index"]

# Skillbook -> {embedder name -> index}. Weak keys: an index lives exactly as long as its skillbook
# (the index holds the skillbook only weakly, so this does not keep it alive).
_indexes: weakref.WeakKeyDictionary[Skillbook, dict[str, SkillIndex]] = weakref.WeakKeyDictionary()
_indexes_lock = threading.Lock()


def skill_index(skillbook: Skillbook | SkillbookView, embedder: Embedder | None = None) -> SkillIndex:
    """The shared `SkillIndex` of `skillbook` (or the skillbook behind a view) for `embedder`
    (default: `default_embedder()`), created on first use. Embedders are told apart by `name`."""
    owner = backing_skillbook(skillbook)
    embedder = embedder if embedder is not None else default_embedder()
    with _indexes_lock:
        per_embedder = _indexes.setdefault(owner, {})
        index = per_embedder.get(embedder.name)
        if index is None:
            index = per_embedder[embedder.name] = SkillIndex(owner, embedder)
        return index


def retrieve_top_k(
    skillbook: Skillbook | SkillbookView,
    query: str,
    *,
    top_k: int = 5,
    section: str | None = None,
    keywords: Iterable[str] | None = None,
    embedder: Embedder | None = None,
    mode: SearchMode = "hybrid",
) -> list[Skill]:
    """The `top_k` active skills that best match `query`, best first (fewer if fewer qualify).

    1. `section` ("context" | "harness") keeps only that section.
    2. `keywords` keeps only skills carrying at least one of them (normalised like skill keywords).
    3. `mode="lexical"`: BM25 over issue + insight + keywords; only skills sharing a term with the
       query are returned. `mode="dense"`: cosine of `embedder` vectors. `mode="hybrid"` (default):
       both rankings fused by Reciprocal Rank Fusion, k=60.
    Inactive skills never appear; equal scores are ordered by skill id. The index behind it is
    built on first use (embedding every skill that has no stored vector from this embedder) and
    then updated incrementally, never rebuilt per query.

    Raises `EmbeddingError` when the query (or a skill) cannot be embedded — there is no silent
    lexical fallback; ValueError/TypeError for invalid arguments; `SkillbookError` for bad keywords.
    """
    return skill_index(skillbook, embedder).search(query, top_k=top_k, section=section, keywords=keywords, mode=mode)
