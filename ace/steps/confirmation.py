"""ConfirmationStep: did the injected skills make the agent get a task right that it gets wrong without them?

A lesson learned from one task is a hypothesis about that task. Measured with a 1.5B model on the
learning benchmark, the lessons that broke control items were each learned from a single task
whose failure no rule explained (a refund the agent denied), then matched to every task like it.
When a sample into which skills were injected is fully right, the agent answers it again with no
skill and the environment grades that answer. If it is now not fully right, each injected skill
this trace does not back yet (it was neither learned from it nor confirmed by it) gets a helpful
TAG record of relation `CONFIRMATION` with the sample's question: evidence from a second task.
`retire_unconfirmed` then soft-removes the learned skills backed by fewer tasks than asked
(`Skill.backing_trace_uids`).

All injected skills share the credit: the step cannot tell which of them fixed the task.
"""

from __future__ import annotations

from ace.errors import UsageError
from ace.skillbook import CONFIRMATION, Skill, Skillbook
from ace.steps._injected_skills import tag_unchanged
from ace.steps.agent import AgentStep
from ace.steps.context import ACEStepContext, Sample
from ace.steps.evaluate import EvaluateStep
from ace.steps.update import insight_source_for
from ace.traces.fields import trace_reward

__all__ = ["ConfirmationStep", "retire_unconfirmed"]

_ANSWER_CHARS = 200
"""How much of each answer the confirmation record quotes."""


class ConfirmationStep:
    """Check a fully right sample without its injected skills (see the module docstring). Put it
    after AgentStep + EvaluateStep; a sample with no injected skill, a failure or no grade passes
    through untouched, and the sample's context is never changed."""

    requires = frozenset({"sample", "trace", "agent_output", "injected_skill_ids"})
    provides: frozenset[str] = frozenset()

    def __init__(self, agent_step: AgentStep, evaluate_step: EvaluateStep, skillbook: Skillbook) -> None:
        """`agent_step` answers again (unaided), `evaluate_step` grades, `skillbook` gets the records."""
        self._agent_step = agent_step
        self._evaluate_step = evaluate_step
        self._skillbook = skillbook

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        if not ctx.injected_skill_ids or trace_reward(ctx.trace) != 1.0:
            return ctx
        if not isinstance(ctx.sample, Sample) or ctx.agent_output is None:
            raise TypeError(f"ConfirmationStep needs a Sample and an agent output; got {type(ctx.sample).__name__}")
        source = insight_source_for(ctx)
        taken = {
            skill_id: skill.created_at
            for skill_id in ctx.injected_skill_ids
            if (skill := self._skillbook.get_skill(skill_id)) is not None
            and source.trace_uid not in skill.backing_trace_uids
        }
        if not taken:
            return ctx
        unaided = await self._agent_step.answer(ctx.sample, unaided=True)
        graded = self._evaluate_step(ctx.replace(agent_output=unaided, injected_skill_ids=()))
        reward = trace_reward(graded.trace)
        if reward is None or reward == 1.0:
            return ctx
        note = (
            f"answered right with skills {list(ctx.injected_skill_ids)} ({_quoted(ctx.agent_output.answer)}) "
            f"and wrong without them ({_quoted(unaided.answer)}, reward {reward:g})"
        )
        tag_unchanged(self._skillbook, taken, 1, source.replace(relation=CONFIRMATION, learning_text=note))
        return ctx


def retire_unconfirmed(skillbook: Skillbook, *, min_tasks: int = 2) -> list[Skill]:
    """Soft-remove every active skill learned from traces that fewer than `min_tasks` distinct
    traces back (`Skill.backing_trace_uids`: those that added or updated it, and its confirmations),
    with a reason naming them; hand-made skills are kept. Returns the retired skills (inactive,
    history kept: `activate_skill` undoes it). Raises UsageError when `min_tasks` < 1."""
    if min_tasks < 1:
        raise UsageError(f"min_tasks must be at least 1, got {min_tasks}")
    retired = []
    for skill in skillbook.skills():
        backing = skill.backing_trace_uids
        if skill.learned_from_traces and len(backing) < min_tasks:
            reason = (
                f"not confirmed: backed by {len(backing)} task(s) {list(backing)}, fewer than {min_tasks}; a lesson "
                "must also fix a task it was not learned from"
            )
            retired.append(skillbook.remove_skill(skill.id, reason))
    return retired


def _quoted(answer: str) -> str:
    return repr(answer if len(answer) <= _ANSWER_CHARS else answer[:_ANSWER_CHARS] + "...")
