"""What one sample carries through the ACE loop: the task, its trace, and what each role made of it."""

from __future__ import annotations

import dataclasses
from typing import Any

from ace.pipeline import StepContext
from ace.roles import AgentOutput, ReflectorOutput, Sample, SkillManagerOutput
from ace.skillbook import SkillbookView

__all__ = ["ACEStepContext", "Sample"]


@dataclasses.dataclass(frozen=True)
class ACEStepContext(StepContext):
    """The immutable context of the ACE loop; steps return `ctx.replace(...)`.

    `skillbook` is a read-only view: steps that mutate the skillbook receive the real one through
    their constructor.
    """

    trace: Any = None
    """What happened on the sample: an agent run with feedback, or a recorded trace to learn from."""
    agent_output: AgentOutput | None = None
    """The Agent's answer, when an agent ran."""
    reflections: tuple[ReflectorOutput, ...] = ()
    """The Reflector's analyses of `trace` (a failed one has `failed=True`)."""
    skill_manager_output: SkillManagerOutput | None = None
    """The audit log of the SkillManager session that learned from this sample."""
    injected_skill_ids: tuple[str, ...] = ()
    """Ids of the skills that were rendered into the agent's prompt for this sample."""
    skillbook: SkillbookView | None = None
    """Read-only view of the skillbook being learned."""
    epoch: int = 1
    """1-based epoch of this pass over the samples."""
    total_epochs: int = 1
    """How many epochs the run makes."""
    step_index: int = 0
    """0-based position of the sample within its epoch."""
    total_steps: int = 0
    """How many samples an epoch has."""
    global_sample_index: int = 0
    """0-based position of the sample across all epochs of the run."""
