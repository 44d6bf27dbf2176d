"""CachedEmbedder: texts are embedded once across processes; a foreign or broken cache is ignored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ace.retrieval.cached_embedder import CachedEmbedder


class CountingEmbedder:
    dim = 4

    def __init__(self, name: str = "test/counting") -> None:
        self.name = name
        self.embedded: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        rows = np.array([[len(t), t.count("a"), 1.0, 0.5] for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_a_saved_cache_answers_the_next_process_without_embedding(tmp_path: Path) -> None:
    path = tmp_path / "book.match-vectors.npz"
    first = CachedEmbedder(CountingEmbedder(), path)
    vectors = first.embed(["alpha", "beta"])
    first.save()

    inner = CountingEmbedder()
    again = CachedEmbedder(inner, path).embed(["beta", "alpha", "gamma"])

    assert inner.embedded == ["gamma"]
    np.testing.assert_array_equal(again[:2], vectors[::-1])


def test_a_cache_of_another_embedder_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "cache.npz"
    cached = CachedEmbedder(CountingEmbedder("test/one"), path)
    cached.embed(["alpha"])
    cached.save()

    inner = CountingEmbedder("test/two")
    CachedEmbedder(inner, path).embed(["alpha"])

    assert inner.embedded == ["alpha"]


def test_an_unreadable_cache_is_recomputed_and_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "cache.npz"
    path.write_bytes(b"not a zip file")
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, path)

    cached.embed(["alpha"])
    cached.save()

    assert inner.embedded == ["alpha"]
    assert CachedEmbedder(CountingEmbedder(), path).embed(["alpha"]).shape == (1, 4)


def test_save_without_new_vectors_does_not_touch_the_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.npz"
    CachedEmbedder(CountingEmbedder(), path).save()
    assert not path.exists()
