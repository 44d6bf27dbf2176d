"""BM25 over skill texts, backed by bm25s (sparse, precomputed scores: microseconds per query).

rank-bm25, the seed's choice, scores every document in a Python loop per query term; at 5,000
skills it measured 2.9 ms p50 per query (6.4 ms in a busier run) against bm25s's 0.03 ms
(benchmarks/retrieval.py; figures in docs/retrieval.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np

__all__ = ["LexicalIndex"]


class LexicalIndex:
    """An immutable BM25 (Lucene variant, k1=1.5, b=0.75) index over documents given as term lists."""

    def __init__(self, documents: Sequence[list[str]]) -> None:
        """Index `documents` (each a list of terms, from `_terms.terms_of`); document i is row i."""
        self._size = len(documents)
        self._bm25: bm25s.BM25 | None = None
        if any(documents):
            self._bm25 = bm25s.BM25()
            self._bm25.index(list(documents), show_progress=False)

    def scores(self, query_terms: list[str]) -> np.ndarray:
        """BM25 score of every document for `query_terms` (float32, length = number of documents)."""
        if self._bm25 is None:
            return np.zeros(self._size, dtype=np.float32)
        known = self._bm25.get_tokens_ids(query_terms)
        if not known:
            return np.zeros(self._size, dtype=np.float32)
        return self._bm25.get_scores_from_ids(known)
