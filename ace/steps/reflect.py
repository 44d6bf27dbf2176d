"""ReflectStep: the Reflector (one pass or recursive) analyses the trace; starts the background part."""

from __future__ import annotations

from ace.errors import UsageError
from ace.roles import ReflectorLike
from ace.steps.context import ACEStepContext
from ace.steps.learn_from import LEARN_FROM, LearnFrom, skip_reason
from ace.traces.fields import trace_feedback, trace_ground_truth, trace_question

__all__ = ["DEFAULT_REFLECT_WORKERS", "ReflectStep"]

DEFAULT_REFLECT_WORKERS = 4
"""How many reflections run at once unless configured otherwise."""


class ReflectStep:
    """Reflect on `ctx.trace`; the result lands in `ctx.reflections` (one entry).

    Accepts a `Reflector` or a `RecursiveReflector` alike (anything `ReflectorLike`). It is the
    async boundary: learning runs in the background while the next samples are answered. A failed
    reflection is kept as such (`failed=True`); UpdateStep will not learn from it. With
    `learn_from="failures"` an unaided full success is not reflected on: `ctx.learning_skipped`
    says so and UpdateStep leaves it alone; a sample an earlier step already skipped passes through.
    """

    requires = frozenset({"trace", "injected_skill_ids"})
    provides = frozenset({"reflections"})
    async_boundary = True

    def __init__(
        self, reflector: ReflectorLike, *, max_workers: int = DEFAULT_REFLECT_WORKERS, learn_from: LearnFrom = "all"
    ) -> None:
        """Raises UsageError for a `learn_from` that is not one of `LEARN_FROM`."""
        if learn_from not in LEARN_FROM:
            raise UsageError(f"learn_from must be one of {', '.join(LEARN_FROM)}; got {learn_from!r}")
        self._reflector = reflector
        self.max_workers = max_workers
        """How many reflections may run at once."""
        self.learn_from: LearnFrom = learn_from
        """Which samples are reflected on (`ace.steps.learn_from.LearnFrom`)."""

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        if ctx.learning_skipped is not None:  # an earlier step (e.g. CounterexampleStep) ruled it out
            return ctx
        skipped = skip_reason(self.learn_from, ctx.trace, ctx.injected_skill_ids)
        if skipped is not None:
            return ctx.replace(learning_skipped=skipped)
        if ctx.injected_skill_ids and ctx.skillbook is None:
            # Without the view the reflector would be told that no skill was injected, which is false.
            raise UsageError(
                f"ReflectStep: skills {list(ctx.injected_skill_ids)} were injected but the context carries "
                "no skillbook view to read them from; set ctx.skillbook (the runners do)"
            )
        injected = []
        if ctx.skillbook is not None:
            injected = [s for s in map(ctx.skillbook.get_skill, ctx.injected_skill_ids) if s is not None]
        reflection = await self._reflector.reflect(
            trace=ctx.trace,
            question=trace_question(ctx.sample, ctx.trace),
            ground_truth=trace_ground_truth(ctx.sample, ctx.trace),
            feedback=trace_feedback(ctx.trace),
            injected_skills=injected,
        )
        return ctx.replace(reflections=(reflection,))
