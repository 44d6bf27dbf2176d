"""Fixtures for the retrieval tests: the real local embedder (loaded once) and a fast fake one."""

from __future__ import annotations

import pytest

from ace.retrieval import LocalEmbedder, default_embedder


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The process-wide MiniLM embedder; loading it costs ~0.3 s, so the whole session shares it."""
    return default_embedder()
