"""Retrieval over a skillbook: embedders, the embedding cache, hybrid BM25 + dense + RRF search, and
task -> skills matching (recall -> rerank -> floor).

The opt-in LLM and ONNX rerankers are imported on first use (see `ace.retrieval.rerankers`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .embedder import Embedder, EmbeddingError, normalise_rows
from .fusion import RRF_K, reciprocal_rank_fusion
from .index import SearchMode, SkillIndex
from .litellm_embedder import LiteLLMEmbedder
from .local_embedder import LocalEmbedder, ModelChecksumError, default_embedder
from .matching import MatchExplanation, SkillMatch, SkillMatcher
from .rerankers import FieldAwareReranker, LiteLLMReranker, RerankCandidate, Reranker, RerankError
from .search import retrieve_top_k, skill_index

if TYPE_CHECKING:
    from .rerankers import LLMJudgeReranker, OnnxCrossEncoderReranker

__all__ = [
    "Embedder",
    "EmbeddingError",
    "FieldAwareReranker",
    "LLMJudgeReranker",
    "LiteLLMReranker",
    "MatchExplanation",
    "OnnxCrossEncoderReranker",
    "RerankCandidate",
    "RerankError",
    "Reranker",
    "SkillMatch",
    "SkillMatcher",
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


def __getattr__(name: str) -> Any:
    if name in ("LLMJudgeReranker", "OnnxCrossEncoderReranker"):
        from . import rerankers

        return getattr(rerankers, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
