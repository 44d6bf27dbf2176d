"""UpdateStep: the SkillManager turns the reflections into skillbook mutations, with provenance."""

from __future__ import annotations

from ace.roles import SkillManagerLike
from ace.roles.provenance import trace_refs_for
from ace.skillbook import InsightSource, Skillbook
from ace.steps.context import ACEStepContext, Sample
from ace.steps.recheck import Recheck
from ace.traces import infer_trace_identity
from ace.traces.fields import trace_feedback, trace_ground_truth, trace_question

__all__ = ["UpdateStep", "insight_source_for"]


def insight_source_for(ctx: ACEStepContext) -> InsightSource:
    """The provenance record of `ctx`: trace identity, question, epoch, step, the first
    reflection's error_identification and key_insight, and `trace_refs` anchoring what the
    reflections cite in the trace (`ace.roles.provenance.trace_refs_for`). The relation to each
    skill is decided per mutation by the SkillManager."""
    sample_id = ctx.sample.id if isinstance(ctx.sample, Sample) else None
    identity = infer_trace_identity(ctx.trace, metadata=ctx.metadata, sample_id=sample_id)
    first = ctx.reflections[0] if ctx.reflections else None
    usable = first if first is not None and not first.failed else None
    return InsightSource(
        source_system=identity.source_system,
        trace_id=identity.trace_id,
        display_name=identity.display_name,
        sample_question=trace_question(ctx.sample, ctx.trace) or None,
        epoch=ctx.epoch,
        step=ctx.sample_index,
        error_identification=usable.error_identification if usable else None,
        learning_text=usable.key_insight if usable else None,
        trace_refs=trace_refs_for(ctx.trace, ctx.reflections),
    )


class UpdateStep:
    """Run one SkillManager session for the sample; the skillbook is mutated when it returns.

    The SkillManager is shown the run's outcome (the trace's feedback) next to the injected skills.
    A sample the ReflectStep skipped (`ctx.learning_skipped`) passes through untouched. With a
    `recheck`, a session that added or updated a skill keeps it only if the agent then gets the
    sample fully right (`Recheck`); otherwise the output lists the undone mutations.

    `max_workers = 1`: updates are serialised, so each session sees the previous one's skills.
    """

    requires = frozenset({"trace", "reflections", "injected_skill_ids"})
    provides = frozenset({"skill_manager_output"})
    max_workers = 1

    def __init__(
        self, skill_manager: SkillManagerLike, skillbook: Skillbook, *, recheck: Recheck | None = None
    ) -> None:
        self._skill_manager = skill_manager
        self._skillbook = skillbook
        self._recheck = recheck

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        if ctx.learning_skipped is not None:
            return ctx
        output = await self._skill_manager.update_skills(
            reflections=ctx.reflections,
            skillbook=self._skillbook,
            source=insight_source_for(ctx),
            injected_skill_ids=ctx.injected_skill_ids,
            question_context=trace_question(ctx.sample, ctx.trace),
            progress=f"epoch {ctx.epoch}/{ctx.total_epochs}, sample {ctx.sample_index + 1}/{ctx.samples_per_epoch}",
            outcome=trace_feedback(ctx.trace) or "",
            ground_truth=trace_ground_truth(ctx.sample, ctx.trace),
            check=self._recheck.check_for(ctx) if self._recheck is not None else None,
        )
        return ctx.replace(skill_manager_output=output)
