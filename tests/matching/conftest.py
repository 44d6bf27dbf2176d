"""Fixtures for the matching tests: the acceptance skillbook and the real offline embedder."""

from __future__ import annotations

import pytest

from ace.retrieval import default_embedder
from ace.retrieval.embedder import Embedder
from ace.skillbook import Skillbook

from .fixture_skills import CountingEmbedder, build_acceptance_skillbook


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The offline MiniLM embedder, shared by the whole session (loading costs ~0.3 s)."""
    return default_embedder()


@pytest.fixture
def skillbook() -> Skillbook:
    return build_acceptance_skillbook()


@pytest.fixture
def counting_embedder(embedder: Embedder) -> CountingEmbedder:
    return CountingEmbedder(embedder)
