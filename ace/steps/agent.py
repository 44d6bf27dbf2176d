"""AgentStep: the agent answers the sample with the skills that apply injected into its prompt."""

from __future__ import annotations

import asyncio

from ace.retrieval.matching import SkillMatcher
from ace.roles import AgentLike, InjectedSkills
from ace.skillbook import Skillbook
from ace.steps.context import ACEStepContext, Sample

__all__ = ["AgentStep"]


class AgentStep:
    """Answer `ctx.sample` (a `Sample`) with injected skills; record which ones and count their use.

    With a matcher, the injected skills are the matcher's skills for the question (often none);
    without one, every active skill (`as_prompt()`). `injected_skill_ids` comes from the agent's
    output — the ids actually rendered — and each gets `used_count + 1`. A matched id missing from
    `skillbook` (a matcher built on another skillbook) fails the sample with ValueError.
    """

    requires = frozenset({"sample"})
    provides = frozenset({"agent_output", "injected_skill_ids"})

    def __init__(
        self, agent: AgentLike, skillbook: Skillbook, *, matcher: SkillMatcher | None = None, match_limit: int = 3
    ) -> None:
        self._agent = agent
        self._skillbook = skillbook
        self._matcher = matcher
        self._match_limit = match_limit

    async def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        if not isinstance(ctx.sample, Sample):
            raise TypeError(f"AgentStep needs a Sample as ctx.sample; got {type(ctx.sample).__name__}")
        injected = await self._skills_for(ctx.sample.question)
        output = await self._agent.answer(ctx.sample.question, context=ctx.sample.context, skills=injected)
        self._skillbook.mark_used(output.injected_skill_ids)
        return ctx.replace(agent_output=output, injected_skill_ids=output.injected_skill_ids)

    async def _skills_for(self, question: str) -> InjectedSkills:
        if self._matcher is None:
            return InjectedSkills.from_skillbook(self._skillbook)
        matches = await asyncio.to_thread(self._matcher.match, question, self._match_limit)
        skills = []
        for match in matches:
            skill = self._skillbook.get_skill(match.skill_id)
            if skill is None:
                raise ValueError(
                    f"the matcher returned skill {match.skill_id!r}, which is not in the skillbook this "
                    "AgentStep learns into; build the SkillMatcher on that same skillbook"
                )
            skills.append(skill)
        return InjectedSkills.from_skills(skills)
