"""The offline scripted models `ace-eval bench` uses by default (model name "scripted").

They let the whole benchmark run - learning through the ACE loop, matching, every arm, the paired
statistics, the report - on a machine with no model and no key, in seconds. They are deterministic
rule-based pydantic-ai `FunctionModel`s, not language models, and the agent never reads its skills
or its context: every arm scores the same by design. A run on them measures plumbing, never learning.

- agent: answers with the last number in the question, else `APPROVE`;
- reflector: an analysis that quotes the question and the feedback;
- skill manager: tags the injected skills by the outcome (helpful when correct), searches for the
  question, updates the skill found or adds one whose issue names the task, then finalizes.
"""

from __future__ import annotations

import re

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.scripted.messages import between, first_user_prompt, line_after, structured_response, tool_returns

__all__ = ["scripted_agent", "scripted_reflector", "scripted_skill_manager"]

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SKILL_ID = re.compile(r"^- \[((?:context|harness)-\d+)\]", re.M)


def scripted_agent() -> FunctionModel:
    """The agent: the last number of the question, or APPROVE when it holds none."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        question = between(first_user_prompt(messages), "<question>", "</question>")
        numbers = _NUMBER.findall(question)
        answer = numbers[-1] if numbers else "APPROVE"
        arguments = {"reasoning": "scripted: the last number of the question", "answer": answer}
        return structured_response(info, arguments)

    return FunctionModel(respond, model_name="scripted-bench-agent")


def scripted_reflector() -> FunctionModel:
    """A one-pass reflection quoting the question and the feedback."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = first_user_prompt(messages)
        question = between(prompt, "<question>", "</question>").strip() or "the task"
        feedback = between(prompt, "<feedback>", "</feedback>").strip() or "no feedback"
        correct = feedback.startswith("Correct")
        analysis = {
            "reasoning": f"The feedback was: {feedback}",
            "error_identification": "none; the answer was right" if correct else f"the answer was wrong ({feedback})",
            "root_cause_analysis": "n/a" if correct else "the agent did not know the expected form",
            "correct_approach": "answer the same way" if correct else f"answer as the feedback says: {feedback}",
            "key_insight": f"For tasks like '{question[:80]}': {feedback}",
        }
        return structured_response(info, analysis)

    return FunctionModel(respond, model_name="scripted-bench-reflector")


def scripted_skill_manager() -> FunctionModel:
    """Tag the injected skills by outcome and search for the question; then update the skill found
    or add one; then finalize."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = first_user_prompt(messages)
        question = line_after(prompt, "question:") or "the task"
        returns = tool_returns(messages)
        if not returns:
            delta = 1 if between(prompt, "<outcome>", "</outcome>").strip().startswith("Correct") else -1
            injected = _SKILL_ID.findall(between(prompt, "<injected_skills>", "</injected_skills>"))
            tags = [ToolCallPart("tag_skill", {"skill_id": skill_id, "delta": delta}) for skill_id in injected]
            return ModelResponse(parts=[*tags, ToolCallPart("search_skills", {"query": question, "top_k": 1})])
        if not any(part.tool_name in ("add_skill", "update_skill") for part in returns):
            found = next(part.content for part in returns if part.tool_name == "search_skills")
            insight = f"Answer as the feedback on '{question[:80]}' showed."
            if isinstance(found, list) and found:
                update = {"skill_id": found[0]["id"], "issue": found[0]["issue"], "insight": insight}
                return ModelResponse(parts=[ToolCallPart("update_skill", update)])
            add = {
                "section": "context",
                "issue": f"Tasks like: {question[:160]}",
                "keywords": _keywords(question),
                "insight": insight,
            }
            return ModelResponse(parts=[ToolCallPart("add_skill", add)])
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "curated the skill of this task"})])

    return FunctionModel(respond, model_name="scripted-bench-skill-manager")


def _keywords(question: str) -> list[str]:
    words = [word.lower() for word in re.findall(r"[A-Za-z]{5,}", question)]
    return list(dict.fromkeys(words))[:2] or ["task"]
