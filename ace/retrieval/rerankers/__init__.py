"""Rerankers: score a task's shortlist of skills in [0, 1] (see `Reranker`).

`FieldAwareReranker` is the offline default; `OnnxCrossEncoderReranker` (a local model folder),
`LiteLLMReranker` (hosted rerank APIs) and `LLMJudgeReranker` (any chat model) are opt-in. The
opt-in ones are imported on first use, so importing the matcher loads no LLM client or ONNX runtime.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._protocol import RerankCandidate, Reranker, RerankError, match_text
from .field_aware import DEFAULT_FIELD_WEIGHTS, FieldAwareReranker, FieldWeights
from .litellm_reranker import LiteLLMReranker

if TYPE_CHECKING:
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

_LAZY: dict[str, str] = {
    "JUDGE_INSTRUCTIONS": ".llm_judge",
    "LLMJudgeReranker": ".llm_judge",
    "SkillVerdict": ".llm_judge",
    "OnnxCrossEncoderReranker": ".onnx_cross_encoder",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
