"""Retrieval over a skillbook: embedders, the embedding cache, and hybrid BM25 + dense + RRF search."""

from .embedder import Embedder, EmbeddingError, normalise_rows
from .litellm_embedder import LiteLLMEmbedder
from .local_embedder import LocalEmbedder, ModelChecksumError, default_embedder

__all__ = [
    "Embedder",
    "EmbeddingError",
    "LiteLLMEmbedder",
    "LocalEmbedder",
    "ModelChecksumError",
    "default_embedder",
    "normalise_rows",
]
