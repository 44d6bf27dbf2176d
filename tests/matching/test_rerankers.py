"""The shipped rerankers: field-aware default, ONNX cross-encoder, LiteLLM rerank API, LLM judge."""

from __future__ import annotations

import shutil
from types import SimpleNamespace

import numpy as np
import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from tokenizers import Tokenizer

from ace.retrieval.local_embedder import MINILM_TOKENIZER_PATH
from ace.retrieval.matching import SkillMatcher
from ace.retrieval.rerankers import (
    FieldAwareReranker,
    LiteLLMReranker,
    LLMJudgeReranker,
    OnnxCrossEncoderReranker,
    RerankCandidate,
    RerankError,
)

from .fixture_skills import CRASHLOOP

POD = RerankCandidate("context-00001", "Pods in CrashLoopBackOff show empty logs.", ("k8s", "crashloop"), 0.5, 0.2, 0.3)
SQL = RerankCandidate(
    "context-00002", "Integer division in SQL truncates ratios to 0.", ("sql", "ratios"), 0.5, 0.2, 0.3
)


def candidate(similarity: float, issue_overlap: float, skill_id: str = "context-00009") -> RerankCandidate:
    return RerankCandidate(skill_id, "issue", ("kw",), similarity, issue_overlap, 0.0)


# -- FieldAwareReranker -------------------------------------------------------------------------


def test_field_aware_scores_rise_with_similarity_and_with_issue_terms_shared():
    reranker = FieldAwareReranker()
    [low] = reranker.rerank("t", [candidate(0.3, 0.1)])
    [high] = reranker.rerank("t", [candidate(0.6, 0.1)])
    [few_terms] = reranker.rerank("t", [candidate(0.4, 0.05)])
    [many_terms] = reranker.rerank("t", [candidate(0.4, 0.4)])

    assert 0.0 < low < high < 1.0
    assert 0.0 < few_terms < many_terms < 1.0


def test_field_aware_scores_a_candidate_lower_when_another_is_much_closer_to_the_task():
    reranker = FieldAwareReranker()
    [alone] = reranker.rerank("t", [candidate(0.45, 0.2)])
    trailing = reranker.rerank("t", [candidate(0.45, 0.2), candidate(0.8, 0.2, "context-00010")])[0]

    assert trailing < alone


def test_field_aware_returns_nothing_for_an_empty_shortlist():
    assert FieldAwareReranker().rerank("t", []) == []


# -- OnnxCrossEncoderReranker -------------------------------------------------------------------


def build_token_counting_cross_encoder(folder, token_id: int) -> None:
    """A tiny ONNX 'cross-encoder': logit = 4 * (occurrences of `token_id` in the pair) - 2."""
    onnx = pytest.importorskip("onnx", reason="the onnx package (dev extra) builds the test model")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [
            helper.make_node("Equal", ["input_ids", "token"], ["hit"]),
            helper.make_node("Cast", ["hit"], ["hit_f"], to=TensorProto.FLOAT),
            helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["hit_f", "mask_f"], ["counted"]),
            helper.make_node("ReduceSum", ["counted", "axes"], ["hits"], keepdims=1),
            helper.make_node("Mul", ["hits", "four"], ["scaled"]),
            helper.make_node("Sub", ["scaled", "two"], ["logits"]),
        ],
        "token_counter",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            helper.make_tensor("token", TensorProto.INT64, [], [token_id]),
            helper.make_tensor("axes", TensorProto.INT64, [1], [1]),
            helper.make_tensor("four", TensorProto.FLOAT, [], [4.0]),
            helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    shutil.copy(MINILM_TOKENIZER_PATH, folder / "tokenizer.json")


@pytest.fixture
def cross_encoder_dir(tmp_path):
    token_id = Tokenizer.from_file(str(MINILM_TOKENIZER_PATH)).token_to_id("pods")
    build_token_counting_cross_encoder(tmp_path, token_id)
    return tmp_path


def test_onnx_cross_encoder_scores_each_pair_with_the_local_model(cross_encoder_dir):
    scores = OnnxCrossEncoderReranker(cross_encoder_dir).rerank("why does it crash?", [POD, SQL])

    assert scores == pytest.approx([1 / (1 + np.exp(-2.0)), 1 / (1 + np.exp(2.0))])


def test_onnx_cross_encoder_drives_the_matcher(cross_encoder_dir, skillbook, embedder):
    # "pods" appears in the crashloop skill's issue only (CrashLoopBackOff skill: "For pods in ...").
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=OnnxCrossEncoderReranker(cross_encoder_dir))

    assert [m.skill_id for m in matcher.match("something unrelated to any skill")] == [CRASHLOOP]


def test_onnx_cross_encoder_without_model_file_names_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        OnnxCrossEncoderReranker(tmp_path)


# -- LiteLLMReranker ----------------------------------------------------------------------------


class FakeRerankAPI:
    def __init__(self, results=None, error: Exception | None = None) -> None:
        self.results = results
        self.error = error
        self.calls: list[dict] = []

    def __call__(self, **kwargs):
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        return SimpleNamespace(results=self.results)


def test_litellm_reranker_maps_provider_scores_back_to_input_order():
    api = FakeRerankAPI([{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}])
    reranker = LiteLLMReranker("cohere/rerank-english-v3.0", rerank=api, api_key="k")

    assert reranker.rerank("fix the crash", [POD, SQL]) == [0.2, 0.9]
    assert api.calls == [
        {
            "model": "cohere/rerank-english-v3.0",
            "query": "fix the crash",
            "documents": [POD.text, SQL.text],
            "top_n": 2,
            "api_key": "k",
        }
    ]


@pytest.mark.parametrize(
    "api",
    [
        FakeRerankAPI(error=ConnectionError("no network")),
        FakeRerankAPI([{"index": 0, "relevance_score": 0.4}]),
        FakeRerankAPI([{"index": 0, "relevance_score": 3.2}, {"index": 1, "relevance_score": 0.1}]),
        FakeRerankAPI([{"position": 0}]),
        FakeRerankAPI([{"index": 0, "relevance_score": 0.4}, {"index": -1, "relevance_score": 0.3}]),
        FakeRerankAPI(
            [
                {"index": 0, "relevance_score": 0.4},
                {"index": 1, "relevance_score": 0.3},
                {"index": 0, "relevance_score": 0.9},
            ]
        ),
    ],
    ids=["call-fails", "missing-candidate", "score-out-of-range", "malformed", "negative-index", "repeated-index"],
)
def test_litellm_reranker_failures_raise_rerank_error(api):
    with pytest.raises(RerankError, match="litellm/cohere/rerank-english-v3.0"):
        LiteLLMReranker("cohere/rerank-english-v3.0", rerank=api).rerank("task", [POD, SQL])


# -- LLMJudgeReranker ---------------------------------------------------------------------------


def judge_says_yes_for_crashloop(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = next(part.content for part in messages[-1].parts if isinstance(part, UserPromptPart))
    applies = "CrashLoopBackOff" in prompt.split("applies when:")[1]
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"applies": applies, "confidence": 0.8})])


def test_llm_judge_turns_each_verdict_into_a_score_around_one_half():
    reranker = LLMJudgeReranker(FunctionModel(judge_says_yes_for_crashloop))

    assert reranker.rerank("pod keeps restarting", [POD, SQL]) == pytest.approx([0.9, 0.1])


def test_llm_judge_model_failure_raises_rerank_error():
    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError("model server down")

    with pytest.raises(RerankError, match="context-00001"):
        LLMJudgeReranker(FunctionModel(broken)).rerank("task", [POD])
