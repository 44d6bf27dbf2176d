"""`LLMJudgeReranker`: pointwise "does this skill apply?" verdicts from any chat model via pydantic-ai."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.models import Model

from ace.models import resolve_model

from ._protocol import RerankCandidate, RerankError

__all__ = ["JUDGE_INSTRUCTIONS", "LLMJudgeReranker", "SkillVerdict"]

JUDGE_INSTRUCTIONS = """\
You decide whether a learned skill applies to a task. The skill is described only by WHEN it
applies (its issue and keywords). It applies when the task is about the situation the issue
describes, not when the task merely mentions the same topic or words. Answer with `applies` and
your `confidence` in that answer."""


class SkillVerdict(BaseModel):
    """The judge's answer for one (task, skill) pair."""

    applies: bool
    """Whether the skill's situation is the task's situation."""
    confidence: float = Field(ge=0.0, le=1.0)
    """Confidence in `applies`, from 0 (a guess) to 1 (certain)."""


class LLMJudgeReranker:
    """Asks a chat model, one candidate at a time, whether the skill applies to the task.

    The score is `0.5 + confidence / 2` for "applies" and `0.5 - confidence / 2` otherwise, so the
    default floor 0.5 keeps exactly the skills the judge said yes to. One model call per candidate:
    pair it with a short shortlist (`SkillMatcher(shortlist_size=5)`). Call it from synchronous code
    (a thread), not from inside a running event loop.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        instructions: str = JUDGE_INSTRUCTIONS,
        api_base: str | None = None,
        api_key: str | None = None,
    ) -> None:
        """Judge with `model`: a pydantic-ai `Model`, or a model string resolved like every model of
        ace (`ace.models.resolve_model`: `"openai/gpt-4.1-mini"`, `"openai:gpt-4.1-mini"`, `"test"`),
        with `api_base`/`api_key` for a local OpenAI-compatible server.

        Raises `ModelResolutionError` for a string that names no model; a missing API key surfaces
        as `RerankError` at rerank time, not at construction."""
        resolved = resolve_model(model, api_base=api_base, api_key=api_key)
        self._agent = Agent(resolved, output_type=SkillVerdict, instructions=instructions)
        self.name = f"llm-judge/{model.strip() if isinstance(model, str) else model.model_name}"

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        """One verdict per candidate, as a score in [0, 1]. Raises RerankError when a call fails."""
        scores = []
        for candidate in candidates:
            prompt = f"Task:\n{task}\n\nSkill {candidate.skill_id} applies when:\n{candidate.text}"
            try:
                verdict = self._agent.run_sync(prompt).output
            except Exception as error:
                raise RerankError(f"{self.name} failed to judge {candidate.skill_id}: {error}") from error
            half = verdict.confidence / 2
            scores.append(0.5 + half if verdict.applies else 0.5 - half)
        return scores
