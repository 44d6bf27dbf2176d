"""The Agent role: answers a task with learned skills injected into its prompt."""

from __future__ import annotations

from collections.abc import Sequence

import logfire
from pydantic import BaseModel, Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models import Model

from ace.models import resolve_model
from ace.roles.injected_skills import InjectedSkills
from ace.roles.outputs import AgentOutput
from ace.roles.prompts import AGENT_INSTRUCTIONS
from ace.skillbook import Skill

__all__ = ["Agent"]


class _Answer(BaseModel):
    reasoning: str = Field(description="How you reached the answer, naming any skill relied on.")
    answer: str = Field(description="The final answer alone, exactly as it should be returned.")


class Agent:
    """Answers one task per call, with skills rendered into the prompt.

    The ids reported in `AgentOutput.injected_skill_ids` are exactly those rendered into the
    prompt; this role does not touch any counter (the step that calls it bumps `used_count`).
    """

    def __init__(self, model: str | Model, *, instructions: str = AGENT_INSTRUCTIONS) -> None:
        """`model` is a model string (see `ace.models.resolve_model`) or a pydantic-ai Model."""
        self._agent = PydanticAgent(
            resolve_model(model), output_type=_Answer, instructions=instructions, name="ace-agent"
        )
        self._agent.instrument = True  # model-request spans, like the RecursiveAgent roles

    async def answer(
        self,
        question: str,
        *,
        context: str = "",
        skills: Sequence[Skill] | InjectedSkills = (),
    ) -> AgentOutput:
        """Answer `question` given optional `context` and `skills`.

        `skills` is either the skills to render (e.g. the ones matched to the task) or an
        `InjectedSkills` already rendered (e.g. `InjectedSkills.from_skillbook(view)` for every
        active skill). Model errors propagate unchanged.
        """
        injected = skills if isinstance(skills, InjectedSkills) else InjectedSkills.from_skills(skills)
        with logfire.span("agent.answer", injected_skill_ids=list(injected.skill_ids)):
            result = await self._agent.run(_user_prompt(question, context, injected))
        return AgentOutput(
            answer=result.output.answer,
            reasoning=result.output.reasoning,
            injected_skill_ids=injected.skill_ids,
        )


def _user_prompt(question: str, context: str, injected: InjectedSkills) -> str:
    parts = []
    if injected.text:
        parts.append(f"<skills>\n{injected.text}\n</skills>")
    if context:
        parts.append(f"<context>\n{context}\n</context>")
    parts.append(f"<question>\n{question}\n</question>")
    return "\n\n".join(parts)
