"""Rerankers: score a task's shortlist of skills in [0, 1] (see `Reranker`).

`FieldAwareReranker` is the offline default; `OnnxCrossEncoderReranker`, `LiteLLMReranker` and
`LLMJudgeReranker` are opt-in.
"""

from ._protocol import RerankCandidate, Reranker, RerankError, match_text
from .field_aware import DEFAULT_FIELD_WEIGHTS, FieldAwareReranker, FieldWeights

__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "FieldAwareReranker",
    "FieldWeights",
    "RerankCandidate",
    "RerankError",
    "Reranker",
    "match_text",
]
