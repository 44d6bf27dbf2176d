"""`EmbeddingBatcher`: callers that need a vector while a call runs share the next call; each gets
what embedding its text alone gives, or the error of its own text."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from ace.errors import UsageError
from ace.retrieval import LocalEmbedder, default_embedder
from ace.retrieval.embedder import EmbeddingError, checked_embed
from ace.retrieval.embedding_batcher import EmbeddingBatcher


class HashingEmbedder:
    """Deterministic bag-of-characters vectors; records every call; raises on the text `fail_on`."""

    name = "test/hashing"
    dim = 16

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls.append(texts)
        if self.fail_on is not None and self.fail_on in texts:
            raise ConnectionError(f"cannot embed {self.fail_on!r}")
        vectors = np.full((len(texts), self.dim), 0.1, dtype=np.float32)
        for row, text in enumerate(texts):
            for character in text:
                vectors[row, ord(character) % self.dim] += 1.0
        return vectors


class GatedEmbedder(HashingEmbedder):
    """A `HashingEmbedder` whose first call waits until `release` is set, so callers can pile up."""

    def __init__(self, fail_on: str | None = None) -> None:
        super().__init__(fail_on)
        self.first_call_started = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not self.first_call_started.is_set():
            self.first_call_started.set()
            assert self.release.wait(timeout=30)
        return super().embed(texts)


def _eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.005)


def _embed_in_threads(batcher: EmbeddingBatcher, texts: list[str]) -> tuple[dict[str, object], list[threading.Thread]]:
    results: dict[str, object] = {}

    def run(text: str) -> None:
        try:
            results[text] = batcher.embed(text, f"the task {text!r}")
        except EmbeddingError as error:
            results[text] = error

    threads = [threading.Thread(target=run, args=(text,)) for text in texts]
    for thread in threads:
        thread.start()
    return results, threads


def _pile_up(batcher: EmbeddingBatcher, embedder: GatedEmbedder, first: str, others: list[str]) -> dict[str, object]:
    """`first` starts a call that blocks; `others` arrive meanwhile; then the call is released."""
    results, threads = _embed_in_threads(batcher, [first])
    assert embedder.first_call_started.wait(timeout=10)
    more, more_threads = _embed_in_threads(batcher, others)
    _eventually(lambda: batcher.pending == len(others))
    embedder.release.set()
    for thread in threads + more_threads:
        thread.join(timeout=30)
    return {**results, **more}


def test_a_lone_caller_is_embedded_at_once_and_gets_what_checked_embed_gives() -> None:
    embedder = HashingEmbedder()
    batcher = EmbeddingBatcher(embedder)

    vector = batcher.embed("refund a broken order", "the task")

    assert embedder.calls == [["refund a broken order"]]
    assert np.array_equal(vector, checked_embed(HashingEmbedder(), ["refund a broken order"], "the task")[0])


def test_callers_arriving_during_a_call_share_the_next_one_with_repeats_embedded_once() -> None:
    embedder = GatedEmbedder()
    batcher = EmbeddingBatcher(embedder)

    results = _pile_up(batcher, embedder, "first task", ["second task", "third task", "second task"])

    assert embedder.calls[0] == ["first task"]
    assert len(embedder.calls) == 2 and sorted(embedder.calls[1]) == ["second task", "third task"]
    for text in ("first task", "second task", "third task"):
        assert np.array_equal(results[text], checked_embed(HashingEmbedder(), [text], "t")[0])  # type: ignore[arg-type]


def test_no_call_embeds_more_than_max_batch_texts() -> None:
    embedder = GatedEmbedder()
    batcher = EmbeddingBatcher(embedder, max_batch=2)
    others = [f"task {index}" for index in range(5)]

    results = _pile_up(batcher, embedder, "first", others)

    assert max(len(call) for call in embedder.calls) == 2
    assert sorted(text for call in embedder.calls[1:] for text in call) == sorted(others)
    assert all(isinstance(results[text], np.ndarray) for text in others)


def test_a_failed_shared_call_fails_every_caller_with_its_own_text_named() -> None:
    embedder = GatedEmbedder(fail_on="poison")
    batcher = EmbeddingBatcher(embedder)

    results = _pile_up(batcher, embedder, "first", ["poison", "innocent"])

    assert isinstance(results["first"], np.ndarray)
    for text in ("poison", "innocent"):
        error = results[text]
        assert isinstance(error, EmbeddingError) and f"the task {text!r}" in str(error)
        assert isinstance(error.__cause__, ConnectionError)


class ZeroRowEmbedder(GatedEmbedder):
    """Gives the text "empty" an all-zero vector (which has no direction)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed(texts).copy()
        for row, text in enumerate(texts):
            if text == "empty":
                vectors[row] = 0.0
        return vectors


def test_a_zero_vector_fails_only_the_caller_whose_text_it_is() -> None:
    embedder = ZeroRowEmbedder()
    batcher = EmbeddingBatcher(embedder)

    results = _pile_up(batcher, embedder, "first", ["empty", "fine"])

    assert isinstance(results["empty"], EmbeddingError) and "zero or non-finite" in str(results["empty"])
    assert isinstance(results["fine"], np.ndarray)


class WrongShapeEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed(texts)[:, :10]


def test_a_wrong_shape_fails_the_caller_with_the_shapes_named() -> None:
    batcher = EmbeddingBatcher(WrongShapeEmbedder())

    with pytest.raises(EmbeddingError, match=r"could not embed the task: returned shape \(1, 10\)"):
        batcher.embed("anything", "the task")


def test_minilm_gives_each_text_of_a_shared_call_the_bytes_it_gives_the_text_alone() -> None:
    """The batcher's promise rests on this: a text's MiniLM vector does not depend on its batch."""
    local_embedder: LocalEmbedder = default_embedder()
    texts = [
        "refund",
        "the booking API times out after 30 seconds when the cabin class is missing",
        "réserver un vol",
        "x" * 3000,
        "pip install fails only in CI with a permission error",
    ]

    together = local_embedder.embed(texts)

    for row, text in enumerate(texts):
        assert together[row].tobytes() == local_embedder.embed([text])[0].tobytes()


def test_max_batch_below_one_is_refused() -> None:
    with pytest.raises(UsageError, match="max_batch must be an integer >= 1"):
        EmbeddingBatcher(HashingEmbedder(), max_batch=0)
