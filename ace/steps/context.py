"""What one sample carries through the ACE loop: the task, its trace, and what each role made of it."""

from __future__ import annotations

import dataclasses
from typing import Any

from ace import tracing
from ace.pipeline import StepContext
from ace.roles import AgentOutput, ReflectorOutput, SkillManagerOutput
from ace.skillbook import SkillbookView
from ace.traces import Sample, infer_trace_identity

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
    """The Reflector's analyses of `trace` (a failed one has `failed=True`; see `reflection_failure`)."""
    skill_manager_output: SkillManagerOutput | None = None
    """The audit log of the SkillManager session that learned from this sample."""
    learning_skipped: str | None = None
    """Why the learning tail left this sample alone (e.g. a success under `learn_from="failures"`);
    None when it was reflected on."""
    injected_skill_ids: tuple[str, ...] = ()
    """Ids of the skills that were rendered into the agent's prompt for this sample."""
    skillbook: SkillbookView | None = None
    """Read-only view of the skillbook being learned."""
    epoch: int = 1
    """1-based epoch of this pass over the samples."""
    total_epochs: int = 1
    """How many epochs the run makes."""
    sample_index: int = 0
    """0-based position of the sample within its epoch (not a pipeline step)."""
    samples_per_epoch: int = 0
    """How many samples each epoch has."""
    global_sample_index: int = 0
    """0-based position of the sample across all epochs of the run."""

    @property
    def reflection_failure(self) -> str | None:
        """Why this sample's reflection failed, or None when it did not (or none ran yet).

        A failed reflection is data, not an error: the sample still finishes (`SampleResult.error`
        stays None) but teaches nothing, since UpdateStep's SkillManager skips it. Check this
        after `SampleResult.error` on `result.output` to tell "failed" from "learned".
        """
        failed = next((reflection for reflection in self.reflections if reflection.failed), None)
        if failed is None:
            return None
        return failed.failure_reason or "the reflector gave no reason"

    def span_attributes(self) -> dict[str, Any]:
        """`ace.sample_id` (the sample's id, else `#<position in the epoch>`), `ace.epoch` and, once
        the sample has a trace, `ace.trace_uid` as the provenance of what it teaches will name it."""
        sample_id = self.sample.id if isinstance(self.sample, Sample) else None
        attributes: dict[str, Any] = {
            tracing.SAMPLE_ID: sample_id or f"#{self.sample_index}",
            tracing.EPOCH: self.epoch,
        }
        if self.trace is not None:
            try:
                identity = infer_trace_identity(self.trace, metadata=self.metadata, sample_id=sample_id)
            except ValueError:
                return attributes  # a bad trace_uid in metadata fails the step that needs it, not the span
            attributes[tracing.TRACE_UID] = identity.trace_uid
        return attributes
