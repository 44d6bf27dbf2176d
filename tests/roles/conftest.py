"""Fixtures for the role tests: a small skillbook, a trace source, a recorded tau2 simulation."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ace.skillbook import InsightSource, Skillbook

RECORDED_RUN = "tau2trace_gpt-4.1-mini_airline_1sim.json"


class BagOfWordsEmbedder:
    """A deterministic, offline embedder: hashed word counts, L2-normalised."""

    name = "test/bag-of-words"
    dim = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                matrix[row, int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            matrix[row, 0] += 1e-3  # never an all-zero row
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


@pytest.fixture
def embedder() -> BagOfWordsEmbedder:
    return BagOfWordsEmbedder()


@pytest.fixture
def skillbook() -> Skillbook:
    return Skillbook()


@pytest.fixture
def source() -> InsightSource:
    return InsightSource(
        source_system="tau2-airline",
        trace_id="task-7-trial-0",
        sample_question="Cancel reservation EHGLP3",
        epoch=1,
        error_identification="cancelled a basic-economy booking without insurance",
        learning_text="check cancellation eligibility first",
    )


@pytest.fixture(scope="session")
def recorded_simulation(recorded_dir: Path) -> dict[str, Any]:
    """The one simulation of a real recorded tau2 airline run (gpt-4.1-mini, reward 1.0)."""
    results = json.loads((recorded_dir / RECORDED_RUN).read_text())
    return results["simulations"][0]


class Script:
    """A FunctionModel that plays scripted turns and keeps every request it received.

    Each turn is a list of parts to answer with, or a callable taking the messages so far and
    returning that list (to react to tool results). Asking for more turns than scripted fails.
    """

    def __init__(self, *turns: Any) -> None:
        from pydantic_ai.models.function import FunctionModel

        self.turns = list(turns)
        self.requests: list[list[Any]] = []
        self.model = FunctionModel(self._respond)

    def _respond(self, messages: list[Any], info: Any) -> Any:
        from pydantic_ai.messages import ModelResponse

        self.requests.append(list(messages))
        if len(self.requests) > len(self.turns):
            raise AssertionError(f"the model was asked for turn {len(self.requests)}, only {len(self.turns)} scripted")
        turn = self.turns[len(self.requests) - 1]
        parts = turn(messages) if callable(turn) else turn
        return ModelResponse(parts=parts)


@pytest.fixture
def script() -> type[Script]:
    return Script
