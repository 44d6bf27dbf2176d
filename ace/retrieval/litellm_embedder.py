"""`LiteLLMEmbedder`: embeddings from any provider litellm supports (OpenAI, Bedrock, Ollama, ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ace.errors import UsageError

from .embedder import EmbeddingError, normalise_rows

__all__ = ["LiteLLMEmbedder"]


class LiteLLMEmbedder:
    """Embeds through `litellm.embedding` / `litellm.aembedding`; rows are L2-normalised here.

    Needs the provider's credentials in the environment, as litellm expects them. litellm is imported
    on first use (its import takes seconds).
    """

    def __init__(self, model: str, *, batch_size: int = 128, dim: int | None = None, **kwargs: Any):
        """Args:
        model: a litellm model string, e.g. `"text-embedding-3-small"` or `"ollama/nomic-embed-text"`.
        batch_size: texts per provider request (providers cap it; >= 1).
        dim: the vector length if known; otherwise `dim` embeds a probe text on first access.
        **kwargs: passed to every litellm call (`api_base`, `api_key`, `dimensions`, ...).

        Raises ValueError for an empty `model` or a `batch_size` below 1.
        """
        if not model:
            raise UsageError("LiteLLMEmbedder needs a model name, e.g. 'text-embedding-3-small'")
        if batch_size < 1:
            raise UsageError(f"batch_size must be >= 1, got {batch_size}")
        self.model = model
        self._batch_size = batch_size
        self._dim = dim
        self._kwargs = kwargs

    @property
    def name(self) -> str:
        """`"litellm/<model>"`."""
        return f"litellm/{self.model}"

    @property
    def dim(self) -> int:
        """Vector length; if not given at construction, learnt by embedding one probe text."""
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed `texts` in batches: `(len(texts), dim)` float32 unit rows. Raises `EmbeddingError`."""
        from ace.models.configured_litellm import litellm

        parts = []
        for batch in self._batches(texts):
            try:
                response = litellm.embedding(model=self.model, input=batch, **self._kwargs)
            except Exception as error:
                raise self._error(len(batch), error) from error
            parts.append(self._vectors(response, len(batch)))
        return self._joined(parts)

    async def aembed(self, texts: Sequence[str]) -> np.ndarray:
        """Async `embed`, through `litellm.aembedding`. Raises `EmbeddingError`."""
        from ace.models.configured_litellm import litellm

        parts = []
        for batch in self._batches(texts):
            try:
                response = await litellm.aembedding(model=self.model, input=batch, **self._kwargs)
            except Exception as error:
                raise self._error(len(batch), error) from error
            parts.append(self._vectors(response, len(batch)))
        return self._joined(parts)

    def _batches(self, texts: Sequence[str]) -> list[list[str]]:
        texts = list(texts)
        return [texts[start : start + self._batch_size] for start in range(0, len(texts), self._batch_size)]

    def _error(self, count: int, error: Exception) -> EmbeddingError:
        return EmbeddingError(f"{self.name} failed to embed {count} texts: {error}")

    def _vectors(self, response: Any, expected: int) -> np.ndarray:
        try:
            items = sorted(response.data, key=lambda item: _field(item, "index"))
            rows = np.array([_field(item, "embedding") for item in items], dtype=np.float32)
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise EmbeddingError(f"{self.name} returned a malformed embedding response: {error}") from error
        if len(items) != expected:
            raise EmbeddingError(f"{self.name} returned {len(items)} vectors for {expected} texts")
        return normalise_rows(rows)

    def _joined(self, parts: list[np.ndarray]) -> np.ndarray:
        if not parts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        vectors = np.vstack(parts)
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise EmbeddingError(f"{self.name} returned {vectors.shape[1]}-d vectors, expected {self._dim}")
        self._dim = vectors.shape[1]
        return vectors


def _field(item: Any, key: str) -> Any:
    # litellm returns plain dicts for some providers and objects for others.
    return item[key] if isinstance(item, dict) else getattr(item, key)
