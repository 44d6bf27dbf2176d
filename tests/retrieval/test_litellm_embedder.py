from __future__ import annotations

from types import SimpleNamespace

import litellm
import numpy as np
import pytest

from ace.retrieval import EmbeddingError, LiteLLMEmbedder


def _fake_embedding(calls: list[list[str]]):
    """A stand-in for `litellm.embedding` that answers out of index order, with unnormalised rows."""

    def embedding(*, model, input, **kwargs):
        calls.append(list(input))
        items = [{"index": i, "embedding": [float(len(text)), 0.0, 3.0]} for i, text in enumerate(input)]
        return SimpleNamespace(data=list(reversed(items)))

    return embedding


def test_litellm_embedder_normalises_rows_and_keeps_input_order(monkeypatch):
    monkeypatch.setattr(litellm, "embedding", _fake_embedding([]))

    vectors = LiteLLMEmbedder("text-embedding-3-small").embed(["abcd", ""])

    np.testing.assert_allclose(vectors, [[0.8, 0.0, 0.6], [0.0, 0.0, 1.0]], atol=1e-6)
    assert vectors.dtype == np.float32


def test_litellm_embedder_sends_texts_in_batches(monkeypatch):
    calls: list[list[str]] = []
    monkeypatch.setattr(litellm, "embedding", _fake_embedding(calls))

    LiteLLMEmbedder("m", batch_size=2).embed(["a", "b", "c"])

    assert calls == [["a", "b"], ["c"]]


def test_litellm_embedder_learns_dim_from_a_probe(monkeypatch):
    monkeypatch.setattr(litellm, "embedding", _fake_embedding([]))

    assert LiteLLMEmbedder("m").dim == 3


def test_litellm_embedder_wraps_provider_failure_with_cause(monkeypatch):
    failure = ConnectionError("provider unreachable")

    def failing(**kwargs):
        raise failure

    monkeypatch.setattr(litellm, "embedding", failing)

    with pytest.raises(EmbeddingError, match="litellm/m") as caught:
        LiteLLMEmbedder("m").embed(["query"])
    assert caught.value.__cause__ is failure


async def test_litellm_embedder_aembed_uses_aembedding(monkeypatch):
    sync = _fake_embedding([])

    async def aembedding(**kwargs):
        return sync(**kwargs)

    monkeypatch.setattr(litellm, "aembedding", aembedding)

    vectors = await LiteLLMEmbedder("m").aembed(["abcd"])

    np.testing.assert_allclose(vectors, [[0.8, 0.0, 0.6]], atol=1e-6)


def test_litellm_embedder_rejects_a_malformed_response(monkeypatch):
    monkeypatch.setattr(litellm, "embedding", lambda **kwargs: SimpleNamespace(data=[{"index": 0}]))

    with pytest.raises(EmbeddingError, match="malformed"):
        LiteLLMEmbedder("m").embed(["query"])
