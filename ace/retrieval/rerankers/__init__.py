"""Rerankers: score a task's shortlist of skills in [0, 1] (see `Reranker`).

`FieldAwareReranker` is the offline default; `OnnxCrossEncoderReranker` (a local model folder),
`LiteLLMReranker` (hosted rerank APIs) and `LLMJudgeReranker` (any chat model) are opt-in.
"""

from ._protocol import RerankCandidate, Reranker, RerankError, match_text
from .field_aware import DEFAULT_FIELD_WEIGHTS, FieldAwareReranker, FieldWeights
from .litellm_reranker import LiteLLMReranker
from .llm_judge import JUDGE_INSTRUCTIONS, LLMJudgeReranker, SkillVerdict
from .onnx_cross_encoder import OnnxCrossEncoderReranker

__all__ = [
    "DEFAULT_FIELD_WEIGHTS",
    "JUDGE_INSTRUCTIONS",
    "FieldAwareReranker",
    "FieldWeights",
    "LLMJudgeReranker",
    "LiteLLMReranker",
    "OnnxCrossEncoderReranker",
    "RerankCandidate",
    "RerankError",
    "Reranker",
    "SkillVerdict",
    "match_text",
]
