"""Reciprocal Rank Fusion (Cormack et al., 2009) over rankings of item positions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ace.errors import UsageError

__all__ = ["RRF_K", "reciprocal_rank_fusion"]

RRF_K = 60
"""The RRF damping constant; 60 is the value from the original paper and the seed."""


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int] | np.ndarray], size: int, *, k: int = RRF_K) -> np.ndarray:
    """Fuse rankings of items `0..size-1` into one score per item.

    Each ranking lists item positions best first; the item at 1-based rank r gets `1 / (k + r)` from
    that ranking, and an item a ranking leaves out gets nothing from it. Returns a float64 array of
    length `size` holding each item's summed score (0 for items no ranking mentions).

    Raises ValueError for `k < 0`, an item outside `0..size-1`, or an item listed twice in one ranking.
    """
    if k < 0:
        raise UsageError(f"k must be >= 0, got {k}")
    scores = np.zeros(size, dtype=np.float64)
    for ranking in rankings:
        items = np.asarray(ranking, dtype=np.intp)
        if items.size == 0:
            continue
        if items.min() < 0 or items.max() >= size:
            raise UsageError(f"ranking holds items outside 0..{size - 1}: {items.tolist()[:10]}")
        if np.bincount(items, minlength=size).max() > 1:
            raise UsageError(f"ranking lists an item twice: {items.tolist()[:10]}")
        scores[items] += 1.0 / (k + np.arange(1, items.size + 1, dtype=np.float64))
    return scores
