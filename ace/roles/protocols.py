"""The three role contracts steps depend on; the pydantic-ai implementations satisfy them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from ace.roles.injected_skills import InjectedSkills
from ace.roles.outputs import AgentOutput, ReflectorOutput, SkillManagerOutput
from ace.roles.skill_source import SkillSource
from ace.skillbook import InsightSource, Skill, Skillbook, UpdateOperation
from ace.traces import Sample

__all__ = ["AgentLike", "ReflectorLike", "SessionCheck", "SkillManagerLike"]

SessionCheck = Callable[[Sequence[UpdateOperation]], Awaitable[str | None]]
"""Judges a finished SkillManager session by its mutations, applied: None keeps them, a reason
undoes them (e.g. `ace.steps.Recheck`: the lesson must fix the task it came from)."""


@runtime_checkable
class AgentLike(Protocol):
    """Answers a task with learned skills."""

    async def answer(
        self,
        question: str,
        *,
        context: str = "",
        skills: Sequence[Skill] | InjectedSkills | SkillSource = (),
        sample: Sample | None = None,
    ) -> AgentOutput:
        """Answer `question`. `skills` are the skills to use, or a `SkillSource` to ask for them
        when the task is known; `sample` is the whole task when the loop runs the agent (agents
        that need its `metadata` read it there). `injected_skill_ids` of the result are exactly
        the skills the agent was given."""
        ...


@runtime_checkable
class ReflectorLike(Protocol):
    """Analyses one trace; never decides anything about skills."""

    async def reflect(
        self,
        *,
        trace: Any,
        question: str = "",
        ground_truth: str | None = None,
        feedback: str | None = None,
        injected_skills: Sequence[Skill] = (),
    ) -> ReflectorOutput:
        """Reflect on `trace`. A reflector either raises (the sample fails with that error) or
        returns `failed=True` when no real analysis could be made; it never invents one."""
        ...


@runtime_checkable
class SkillManagerLike(Protocol):
    """Turns reflections into skillbook mutations, applied directly to `skillbook`."""

    async def update_skills(
        self,
        *,
        reflections: Sequence[ReflectorOutput],
        skillbook: Skillbook,
        source: InsightSource,
        injected_skill_ids: Sequence[str] = (),
        question_context: str = "",
        progress: str = "",
        outcome: str = "",
        ground_truth: str | None = None,
        check: SessionCheck | None = None,
    ) -> SkillManagerOutput:
        """Mutate `skillbook` from `reflections`; `outcome` is the environment's verdict on the run
        (e.g. its reward), by which injected skills are tagged; `ground_truth` is the run's expected
        answer when the environment gave one. `check`, when given, runs after a
        finished session with its mutations applied; a reason it returns undoes them all. Returns
        the audit log."""
        ...
