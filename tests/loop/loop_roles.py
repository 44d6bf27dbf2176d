"""Role models for the loop tests (imported by the tests as `loop_roles`): stateless FunctionModels that react to what they are sent,
and the environment and refund tasks several tests share.

Samples run concurrently, so each model decides from the messages alone, never from call order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.roles import AgentOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook
from ace.steps import EnvironmentResult, Sample
from ace_eval.scripted import first_user_prompt, tool_returns


class GroundTruthEnvironment:
    """Right (reward 1.0) exactly when the answer is the sample's ground truth."""

    def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
        correct = agent_output.answer == sample.ground_truth
        return EnvironmentResult(feedback="correct" if correct else "wrong", metrics={"correct": float(correct)})


def refund_question(item: str, bought: str, days: int) -> str:
    """A refund task of the conventions family: `item` bought `bought` (e.g. "in the clearance sale")."""
    return (
        f"Refund request: a customer returns {item} bought {bought} {days} days ago. Our standard policy "
        "refunds purchases within 30 days. Answer APPROVE or DENY."
    )


def undone_before_second_answer(skillbook: Skillbook, answer: FunctionModel) -> FunctionModel:
    """`answer`, except that before its second answer `skillbook` loses every skill and gets another
    under the freed id: what a concurrent SkillManager rollback followed by an ADD does."""
    empty, calls = Skillbook().snapshot(), [0]

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls[0] += 1
        if calls[0] == 2:
            skillbook.restore(empty)
            other = InsightSource(source_system="test", trace_id="t9", sample_question="q9")
            skillbook.add_skill("context", "Dates", ["date"], "Use YYYY.MM.DD.", insight_source=other)
        assert answer.function is not None
        return answer.function(messages, info)  # type: ignore[return-value]

    return FunctionModel(respond)


CLEARANCE = refund_question("a lamp", "in the clearance sale", 12)
CLEARANCE_AGAIN = refund_question("boots", "in the clearance sale", 7)
REGULAR = refund_question("a kettle", "at the regular price", 4)
REGULAR_AGAIN = refund_question("a jacket", "at the regular price", 20)
CLEARANCE_RULE = "Items bought in a clearance sale are never refunded: answer DENY."


class ClearanceRuleAgent:
    """Answers DENY when `CLEARANCE_RULE` is in its prompt - with `everywhere=False` only to a
    clearance-sale refund - else APPROVE; keeps every prompt it is sent."""

    def __init__(self, *, everywhere: bool) -> None:
        self.prompts: list[str] = []
        self.everywhere = everywhere

    def model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            prompt = user_prompt(messages)
            self.prompts.append(prompt)
            ruled, _, question = prompt.rpartition(CLEARANCE_RULE)
            deny = bool(ruled) and (self.everywhere or "clearance sale" in question)
            answer = "DENY" if deny else "APPROVE"
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"reasoning": "r", "answer": answer})])

        return FunctionModel(respond)


def finalizing_skill_manager() -> SkillManager:
    """A SkillManager that changes nothing: it finalizes at once."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "nothing to change"})])

    return SkillManager(FunctionModel(respond))


class BagOfWordsEmbedder:
    """A deterministic, offline embedder: hashed word counts, L2-normalised."""

    name = "test/bag-of-words"
    dim = 64

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                matrix[row, int(hashlib.sha1(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            matrix[row, 0] += 1e-3
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def user_prompt(messages: list[ModelMessage]) -> str:
    """The text of the first user prompt in `messages` (a request without one fails the test)."""
    prompt = first_user_prompt(messages)
    assert prompt, "no user prompt in the request"
    return prompt


def agent_model(fail_on: str | None = None) -> FunctionModel:
    """Answers "42"; raises for a question containing `fail_on`."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = user_prompt(messages)
        if fail_on is not None and fail_on in prompt:
            raise RuntimeError(f"agent model failed on purpose for {fail_on!r}")
        args = {"reasoning": "looked it up", "answer": "42"}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(respond)


def reflector_model() -> FunctionModel:
    """Reflects with an insight naming the question's first word."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = re.search(r"<question>\s*(.*?)\s*</question>", user_prompt(messages), re.S)
        topic = (question.group(1).split() or ["task"])[0] if question else "task"
        args = {
            "reasoning": f"the trace is about {topic}",
            "error_identification": f"missed a {topic} detail",
            "root_cause_analysis": "did not check",
            "correct_approach": f"check {topic} first",
            "key_insight": f"always check {topic}",
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(respond)


def skill_manager_model() -> FunctionModel:
    """First request: tag every injected skill helpful and add one skill for the trace's question;
    next request: finalize."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if tool_returns(messages):
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "tagged and added"})])
        prompt = user_prompt(messages)
        injected_block = re.search(r"<injected_skills>(.*?)</injected_skills>", prompt, re.S)
        injected = re.findall(r"\[((?:context|harness)-\d+)\]", injected_block.group(1)) if injected_block else []
        question = re.search(r"question: (.*)", prompt)
        topic = question.group(1).strip() if question else "unknown"
        calls = [ToolCallPart("tag_skill", {"skill_id": skill_id, "delta": 1}) for skill_id in injected]
        calls.append(
            ToolCallPart(
                "add_skill",
                {
                    "section": "context",
                    "issue": f"Questions like '{topic}' need care.",
                    "keywords": ["loop-test"],
                    "insight": f"Answer '{topic}' carefully.",
                },
            )
        )
        return ModelResponse(parts=calls)

    return FunctionModel(respond)
