"""Fixtures for the retrieval tests: the real local embedder (loaded once) and fast fake ones."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pytest

from ace.retrieval import LocalEmbedder, default_embedder
from ace.skillbook import Skillbook


class HashingEmbedder:
    """Deterministic bag-of-words vectors: each word adds 1 to a hashed bucket; a constant bias
    bucket keeps empty texts non-zero. Records every text it was asked to embed."""

    dim = 64

    def __init__(self, name: str = "test/hashing-bow", fail_on: str | None = None) -> None:
        self.name = name
        self.fail_on = fail_on
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.calls.append(texts)
        if self.fail_on is not None and self.fail_on in texts:
            raise ConnectionError(f"cannot embed {self.fail_on!r}")
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        vectors[:, 0] = 0.1
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = 1 + int(hashlib.md5(word.encode()).hexdigest(), 16) % (self.dim - 1)
                vectors[row, bucket] += 1.0
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    @property
    def embedded_texts(self) -> list[str]:
        return [text for call in self.calls for text in call]


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The process-wide MiniLM embedder; loading it costs ~0.3 s, so the whole session shares it."""
    return default_embedder()


@pytest.fixture
def hashing_embedder() -> HashingEmbedder:
    return HashingEmbedder()


@pytest.fixture
def airline_skillbook() -> Skillbook:
    """Five skills: three context, two harness; one context skill soft-removed."""
    skillbook = Skillbook()
    skillbook.add_skill(
        "context",
        "Passengers ask to change the date of a flight reservation",
        ["airline", "booking"],
        insight="Check the fare rules and cabin class before rebooking",
    )
    skillbook.add_skill(
        "context",
        "Baggage allowance questions for basic economy passengers",
        ["airline", "baggage"],
        insight="Look up the membership tier before quoting free bags",
    )
    skillbook.add_skill(
        "context",
        "Refund requests for cancelled flights",
        ["airline", "refund"],
        insight="Confirm the cancellation reason before issuing a refund",
    )
    skillbook.add_skill("harness", "The tau2 runner retries rate limits with long backoff", ["tau2", "rate_limit"])
    skillbook.add_skill("harness", "Flight search tool times out on long date ranges", ["tools", "timeout"])
    skillbook.remove_skill("context-00003", "superseded")
    return skillbook


@pytest.fixture
def make_hashing_embedder() -> type[HashingEmbedder]:
    """The fake embedder class, for tests that need a second name or a failure."""
    return HashingEmbedder
