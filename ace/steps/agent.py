"""AgentStep: the agent answers the sample with the learned skills its injection policy hands out."""

from __future__ import annotations

from ace.errors import UsageError
from ace.retrieval.matching import SkillMatcher
from ace.roles import AgentLike, AgentOutput, SkillInjection, SkillSource
from ace.roles.worked_examples import WorkedExample
from ace.skillbook import Skillbook, SkillbookView
from ace.steps.context import ACEStepContext, Sample

__all__ = ["AgentStep"]


class AgentStep:
    """Answer `ctx.sample` (a `Sample`) with learned skills; record which ones and count their use.

    Each sample gets its own `SkillSource` over `skillbook` with the step's `injection` policy
    (`matched`: the matcher's skills for the task, often none; `all`: every active skill; `tool`:
    a catalog plus a `read_skill` tool). The agent asks the source for skills when it knows the
    task. `injected_skill_ids` are the ids the agent reports; each must have been handed out by the
    source (an agent claiming another fails the sample with ValueError), and each gets
    `used_count + 1` (one undone by a concurrent SkillManager rollback since is not counted).
    """

    requires = frozenset({"sample"})
    provides = frozenset({"agent_output", "injected_skill_ids"})

    def __init__(
        self,
        agent: AgentLike,
        skillbook: Skillbook,
        *,
        injection: SkillInjection | None = None,
        matcher: SkillMatcher | None = None,
        match_limit: int = 3,
    ) -> None:
        """`injection` defaults to `matched` with a matcher and `all` without one. Raises
        ValueError for a policy that does not fit the matcher (see `SkillSource`)."""
        self._agent = agent
        self._skillbook = skillbook
        self._injection: SkillInjection = injection or ("matched" if matcher is not None else "all")
        self._matcher = matcher
        self._match_limit = match_limit
        self._new_source()  # validates the policy now, not at the first sample

    @property
    def injection(self) -> SkillInjection:
        """The injection policy of this step."""
        return self._injection

    @property
    def skillbook(self) -> SkillbookView:
        """A read-only view of the skillbook the step hands skills out from."""
        return self._skillbook.view()

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        if not isinstance(ctx.sample, Sample):
            raise TypeError(f"AgentStep needs a Sample as ctx.sample; got {type(ctx.sample).__name__}")
        output = await self.answer(ctx.sample)
        self._skillbook.mark_used(output.injected_skill_ids, missing_ok=True)
        return ctx.replace(agent_output=output, injected_skill_ids=output.injected_skill_ids)

    async def answer(
        self, sample: Sample, *, unaided: bool = False, withheld: WorkedExample | None = None
    ) -> AgentOutput:
        """The agent's answer to `sample` with the skills the policy hands out now (`unaided`: with
        none; `withheld`: a worked example cut out of their insights), counting no use (a recheck
        of a lesson is not a use). Raises UsageError when the agent reports a skill its source
        never handed out."""
        source = self._new_source(withheld)
        skills = () if unaided else source
        output = await self._agent.answer(sample.question, context=sample.context, skills=skills, sample=sample)
        handed_out = set(source.used_skill_ids)
        claimed = [skill_id for skill_id in output.injected_skill_ids if skill_id not in handed_out]
        if claimed:
            raise UsageError(
                f"the agent reported skills {claimed} as injected, but its SkillSource never handed them "
                f"out (it handed out {sorted(handed_out) or 'none'}); report source.used_skill_ids"
            )
        return output

    def _new_source(self, withheld: WorkedExample | None = None) -> SkillSource:
        return SkillSource(
            self._skillbook.view(),
            injection=self._injection,
            matcher=self._matcher,
            match_limit=self._match_limit,
            withheld=withheld,
        )
