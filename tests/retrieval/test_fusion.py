from __future__ import annotations

import numpy as np
import pytest

from ace.retrieval import reciprocal_rank_fusion


def test_rrf_sums_reciprocal_ranks_over_rankings():
    scores = reciprocal_rank_fusion([[0, 1, 2], [2, 0]], size=4)

    expected = [1 / 61 + 1 / 62, 1 / 62, 1 / 63 + 1 / 61, 0.0]
    np.testing.assert_allclose(scores, expected)


def test_rrf_item_ranked_second_in_both_beats_item_first_in_one_only():
    scores = reciprocal_rank_fusion([[0, 1], [2, 1]], size=3)

    assert scores[1] > scores[0] == scores[2]


def test_rrf_uses_the_given_k():
    scores = reciprocal_rank_fusion([[1, 0]], size=2, k=0)

    np.testing.assert_allclose(scores, [1 / 2, 1 / 1])


def test_rrf_of_no_rankings_is_all_zero():
    np.testing.assert_array_equal(reciprocal_rank_fusion([], size=3), [0.0, 0.0, 0.0])


def test_rrf_rejects_an_item_listed_twice():
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([[0, 0]], size=2)


def test_rrf_rejects_an_item_outside_the_range():
    with pytest.raises(ValueError, match="outside"):
        reciprocal_rank_fusion([[0, 5]], size=2)
