"""Role models for the loop tests (imported by the tests as `loop_roles`): stateless FunctionModels that react to what they are sent.

Samples run concurrently, so each model decides from the messages alone, never from call order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.scripted import first_user_prompt, tool_returns


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
