"""CounterexampleStep: did the injected skills make the agent get a task wrong that it gets right without them?

A skill is matched by what its issue says, and a neighbouring task that shares its words gets it
too: measured with a 1.5B agent, a skill for refunds of clearance items was matched to regular-price
refunds, and the agent followed it every time. When a sample into which skills were injected is not
fully right, the agent answers it again with no skill and the environment grades that answer. If
it is now fully right, the injected skills are what went wrong: each gets a harmful TAG record of
relation `COUNTEREXAMPLE` with the sample's question (the matcher then withholds the skill from a
task sharing more of the words only its counterexamples have than of the words only its own
questions have), and the sample is not learned from (there is no lesson in it but that one;
`ctx.learning_skipped` says so).
"""

from __future__ import annotations

from ace.skillbook import COUNTEREXAMPLE, Skillbook
from ace.steps._injected_skills import identities, tag_unchanged
from ace.steps.agent import AgentStep
from ace.steps.context import ACEStepContext, Sample
from ace.steps.evaluate import EvaluateStep
from ace.steps.update import insight_source_for
from ace.traces.fields import trace_reward

__all__ = ["CounterexampleStep"]

_ANSWER_CHARS = 200
"""How much of each answer the counterexample record quotes."""


class CounterexampleStep:
    """Check a failed sample without its injected skills (see the module docstring). Put it after
    AgentStep + EvaluateStep and before the learning tail; a sample with no injected skill, a full
    success or no grade passes through untouched."""

    requires = frozenset({"sample", "trace", "agent_output", "injected_skill_ids"})
    provides = frozenset({"learning_skipped"})

    def __init__(self, agent_step: AgentStep, evaluate_step: EvaluateStep, skillbook: Skillbook) -> None:
        """`agent_step` answers again (unaided), `evaluate_step` grades, `skillbook` gets the records."""
        self._agent_step = agent_step
        self._evaluate_step = evaluate_step
        self._skillbook = skillbook

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        reward = trace_reward(ctx.trace)
        if not ctx.injected_skill_ids or reward is None or reward == 1.0:
            return ctx
        if not isinstance(ctx.sample, Sample) or ctx.agent_output is None:
            raise TypeError(f"CounterexampleStep needs a Sample and an agent output; got {type(ctx.sample).__name__}")
        taken = identities(self._skillbook, ctx.injected_skill_ids)
        unaided = await self._agent_step.answer(ctx.sample, unaided=True)
        graded = self._evaluate_step(ctx.replace(agent_output=unaided, injected_skill_ids=()))
        if trace_reward(graded.trace) != 1.0:
            return ctx
        note = (
            f"answered wrong with skills {list(ctx.injected_skill_ids)} ({_quoted(ctx.agent_output.answer)}, "
            f"reward {reward:g}) and right without them ({_quoted(unaided.answer)})"
        )
        source = insight_source_for(ctx).replace(relation=COUNTEREXAMPLE, learning_text=note)
        tag_unchanged(self._skillbook, taken, -1, source)
        return ctx.replace(learning_skipped=f"a counterexample of the injected skills: {note}")


def _quoted(answer: str) -> str:
    return repr(answer if len(answer) <= _ANSWER_CHARS else answer[:_ANSWER_CHARS] + "...")
