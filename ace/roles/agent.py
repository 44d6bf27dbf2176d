"""The Agent role: answers a task with learned skills injected into its prompt."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import ModelRetry, Tool
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset

from ace import tracing
from ace.models import RecoveryEvent, RequestSettings, recovering, resolve_model
from ace.roles._schema_bounds import schema_bounds
from ace.roles.injected_skills import InjectedSkills
from ace.roles.outputs import AgentOutput
from ace.roles.prompts import AGENT_INSTRUCTIONS
from ace.roles.skill_source import READ_SKILL_DESCRIPTION, READ_SKILL_TOOL, SkillSource, UnknownSkillError
from ace.skillbook import Skill
from ace.traces import Sample

__all__ = ["Agent"]


class _Answer(BaseModel):
    """The agent's answer; its bounds (`ace.roles._schema_bounds`) together fit the default output cap
    even at one token per character."""

    reasoning: str = Field(
        description=(
            "One or two short sentences: how you reached the answer, naming the skill from <skills> you applied, "
            "if any."
        ),
        json_schema_extra=schema_bounds(max_length=300),
    )
    answer: str = Field(
        description="The final answer alone, exactly as it should be returned.",
        json_schema_extra=schema_bounds(max_length=600),
    )


class Agent:
    """Answers one task per call, with skills rendered into the prompt.

    The ids reported in `AgentOutput.injected_skill_ids` are exactly those rendered into the
    prompt (or, with a `SkillSource` in `tool` mode, read through the `read_skill` tool); this
    role does not touch any counter (the step that calls it bumps `used_count`).
    """

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=1024, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given."""

    def __init__(
        self, model: str | Model, *, instructions: str = AGENT_INSTRUCTIONS, settings: RequestSettings | None = None
    ) -> None:
        """`model` is a model string (see `ace.models.resolve_model`) or a pydantic-ai Model;
        `settings` go with every request (default `DEFAULT_SETTINGS`)."""
        self.settings = settings or self.DEFAULT_SETTINGS
        """What every request carries (output cap, temperature, timeout)."""
        self._model = recovering(resolve_model(model))
        self._agent = PydanticAgent(
            self._model,
            output_type=self.settings.output_type(_Answer),
            instructions=instructions,
            name="ace-agent",
            model_settings=self.settings.model_settings(),
        )
        self._agent.instrument = tracing.instrumentation()  # model-request spans, like the RecursiveAgent roles

    @property
    def recoveries(self) -> Counter[RecoveryEvent]:
        """How often this role's model responses were repaired (see `ace.models.recovering`)."""
        return self._model.recoveries

    async def answer(
        self,
        question: str,
        *,
        context: str = "",
        skills: Sequence[Skill] | InjectedSkills | SkillSource = (),
        sample: Sample | None = None,
    ) -> AgentOutput:
        """Answer `question` given optional `context` and `skills`.

        `skills` is the skills to render (e.g. the ones matched to the task), an `InjectedSkills`
        already rendered, or a `SkillSource` asked for the skills of `question` (in `tool` mode the
        prompt holds the catalog and the agent gets a `read_skill` tool). `sample` is not needed by
        this agent. Model errors propagate unchanged.
        """
        source = skills if isinstance(skills, SkillSource) else None
        if isinstance(skills, SkillSource):
            injected = await skills.for_task(question)
        else:
            injected = skills if isinstance(skills, InjectedSkills) else InjectedSkills.from_skills(skills)
        toolsets: list[AbstractToolset[Any]] | None = None
        if source is not None and source.injection == "tool":
            toolsets = [_read_skill_toolset(source)]
        with tracing.span("agent.answer", injected_skill_ids=list(injected.skill_ids)) as span:
            result = await self._agent.run(_user_prompt(question, context, injected), toolsets=toolsets)
            used = source.used_skill_ids if source is not None else injected.skill_ids
            span.set_attribute("used_skill_ids", list(used))
        return AgentOutput(answer=result.output.answer, reasoning=result.output.reasoning, injected_skill_ids=used)


def _read_skill_toolset(source: SkillSource) -> FunctionToolset[Any]:
    async def read_skill(skill_id: str) -> str:
        try:
            return source.read(skill_id)
        except UnknownSkillError as exc:
            raise ModelRetry(str(exc)) from exc

    return FunctionToolset([Tool(read_skill, name=READ_SKILL_TOOL, description=READ_SKILL_DESCRIPTION)])


def _user_prompt(question: str, context: str, injected: InjectedSkills) -> str:
    parts = []
    if injected.text:
        parts.append(f"<skills>\n{injected.text}\n</skills>")
    if context:
        parts.append(f"<context>\n{context}\n</context>")
    parts.append(f"<question>\n{question}\n</question>")
    return "\n\n".join(parts)
