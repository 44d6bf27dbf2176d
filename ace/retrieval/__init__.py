"""Retrieval over a skillbook: embedders, the embedding cache, and hybrid BM25 + dense + RRF search."""

from .embedder import Embedder, EmbeddingError, normalise_rows
from .fusion import RRF_K, reciprocal_rank_fusion
from .index import SearchMode, SkillIndex
from .litellm_embedder import LiteLLMEmbedder
from .local_embedder import LocalEmbedder, ModelChecksumError, default_embedder
from .search import retrieve_top_k, skill_index

__all__ = [
    "Embedder",
    "EmbeddingError",
    "LiteLLMEmbedder",
    "LocalEmbedder",
    "ModelChecksumError",
    "RRF_K",
    "SearchMode",
    "SkillIndex",
    "default_embedder",
    "normalise_rows",
    "reciprocal_rank_fusion",
    "retrieve_top_k",
    "skill_index",
]
