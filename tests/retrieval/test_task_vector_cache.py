"""`TaskVectorCache`: bounded by entries and bytes, least recently used out, one model at a time."""

from __future__ import annotations

import numpy as np
import pytest

from ace.errors import UsageError
from ace.retrieval.task_vector_cache import TaskVectorCache


def _vector(seed: int, dim: int = 8) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_a_stored_vector_is_returned_for_the_same_model_and_text_only() -> None:
    cache = TaskVectorCache()
    cache.put("model-a", "refund a broken order", _vector(1))

    assert np.array_equal(cache.get("model-a", "refund a broken order"), _vector(1))
    assert cache.get("model-a", "refund a broken order ") is None
    assert cache.get("model-a", "Refund a broken order") is None


def test_asking_for_another_model_empties_the_cache_so_no_vector_crosses_models() -> None:
    cache = TaskVectorCache()
    cache.put("model-a", "task", _vector(1))

    assert cache.get("model-b", "task") is None
    assert (len(cache), cache.nbytes, cache.model) == (0, 0, "model-b")
    assert cache.get("model-a", "task") is None


def test_the_least_recently_used_entry_goes_first_when_entries_run_out() -> None:
    cache = TaskVectorCache(max_entries=2)
    cache.put("m", "one", _vector(1))
    cache.put("m", "two", _vector(2))
    assert cache.get("m", "one") is not None  # "two" is now the least recently used
    cache.put("m", "three", _vector(3))

    assert cache.get("m", "two") is None
    assert cache.get("m", "one") is not None and cache.get("m", "three") is not None
    assert len(cache) == 2


def test_bytes_bound_the_cache_as_well_as_entries() -> None:
    one_entry = TaskVectorCache()
    one_entry.put("m", "probe", _vector(0, dim=384))
    entry_bytes = one_entry.nbytes
    cache = TaskVectorCache(max_entries=1000, max_bytes=3 * entry_bytes)
    for index in range(10):
        cache.put("m", f"task {index}", _vector(index, dim=384))

    assert len(cache) == 3 and cache.nbytes == 3 * entry_bytes
    assert [cache.get("m", f"task {index}") is not None for index in range(10)] == [False] * 7 + [True] * 3


def test_a_vector_larger_than_the_byte_bound_is_not_held() -> None:
    cache = TaskVectorCache(max_bytes=100)
    cache.put("m", "huge", _vector(1, dim=384))

    assert cache.get("m", "huge") is None and cache.nbytes == 0


def test_held_vectors_are_read_only_copies_of_what_was_stored() -> None:
    cache = TaskVectorCache()
    original = _vector(1)
    cache.put("m", "task", original)
    original[0] = 42.0
    held = cache.get("m", "task")

    assert held is not None and held[0] != 42.0
    with pytest.raises(ValueError):
        held[0] = 1.0


def test_storing_a_text_again_replaces_its_vector_without_counting_it_twice() -> None:
    cache = TaskVectorCache()
    cache.put("m", "task", _vector(1))
    size = cache.nbytes
    cache.put("m", "task", _vector(2))

    assert np.array_equal(cache.get("m", "task"), _vector(2)) and cache.nbytes == size and len(cache) == 1


@pytest.mark.parametrize("bounds", [{"max_entries": 0}, {"max_bytes": -1}, {"max_entries": True}, {"max_bytes": 1.5}])
def test_bounds_below_one_or_not_integers_are_refused(bounds: dict[str, object]) -> None:
    with pytest.raises(UsageError, match="must be an integer >= 1"):
        TaskVectorCache(**bounds)  # type: ignore[arg-type]
