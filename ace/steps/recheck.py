"""Recheck: does a lesson fix the task it was learned from?

After a SkillManager session that added or changed a skill, the agent answers the same sample
again with the skillbook as the session left it (the loop's own injection policy, no use counted)
and the environment grades the answer. A lesson that does not make the agent get its own task
fully right is undone (`SkillManager.update_skills(check=...)`): on a small model most such
lessons are empty, wrong or inverted, and a skill that cannot fix its own example is unlikely to
fix others. The skills are handed out with this sample's worked example withheld
(`ace.roles.worked_examples`): an example that quotes the task and its answer would let the agent
copy the answer, so the insight alone must carry the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from ace.roles import SessionCheck
from ace.roles.worked_examples import worked_example
from ace.skillbook import UpdateOperation
from ace.steps.agent import AgentStep
from ace.steps.context import ACEStepContext, Sample
from ace.steps.evaluate import EvaluateStep
from ace.traces.fields import trace_feedback, trace_ground_truth, trace_question, trace_reward

__all__ = ["Recheck"]

_ANSWER_CHARS = 200
"""How much of the rechecked answer the reason quotes."""


class Recheck:
    """Answer a sample again and say whether it is now fully right (see the module docstring)."""

    def __init__(self, agent_step: AgentStep, evaluate_step: EvaluateStep) -> None:
        """`agent_step` answers (with its injection policy); `evaluate_step` grades."""
        self._agent_step = agent_step
        self._evaluate_step = evaluate_step

    async def failure(self, ctx: ACEStepContext) -> str | None:
        """None when the agent now answers `ctx.sample` with reward 1.0, or when the environment
        gives no grade (nothing to judge by); otherwise why the recheck failed, quoting the answer
        and the feedback. Raises TypeError when `ctx.sample` is not a `Sample`."""
        if not isinstance(ctx.sample, Sample):
            raise TypeError(f"Recheck needs a Sample as ctx.sample; got {type(ctx.sample).__name__}")
        example = worked_example(trace_question(ctx.sample, ctx.trace), trace_ground_truth(ctx.sample, ctx.trace))
        output = await self._agent_step.answer(ctx.sample, withheld=example)
        graded = self._evaluate_step(ctx.replace(agent_output=output, injected_skill_ids=output.injected_skill_ids))
        reward = trace_reward(graded.trace)
        if reward is None or reward == 1.0:
            return None
        answer = output.answer if len(output.answer) <= _ANSWER_CHARS else output.answer[:_ANSWER_CHARS] + "..."
        withheld = example is not None and self._held_by_any(example.text, output.injected_skill_ids)
        return (
            f"the lesson did not fix its own task: answering it again with skills "
            f"{list(output.injected_skill_ids) or 'none'}{' without its worked example' if withheld else ''}, "
            f"the agent said {answer!r} "
            f"(reward {reward:g}; feedback: {trace_feedback(graded.trace) or 'none'})"
        )

    def _held_by_any(self, text: str, skill_ids: Sequence[str]) -> bool:
        skills = (self._agent_step.skillbook.get_skill(skill_id) for skill_id in skill_ids)
        return any(skill is not None and text in (skill.insight or "") for skill in skills)

    def check_for(self, ctx: ACEStepContext) -> SessionCheck:
        """The `check` of `ctx`'s SkillManager session: a session that added or updated a skill is
        rechecked on `ctx.sample`; one that only tagged or removed keeps its mutations."""

        async def check(operations: Sequence[UpdateOperation]) -> str | None:
            if not any(operation.type in ("ADD", "UPDATE") for operation in operations):
                return None
            return await self.failure(ctx)

        return check
