"""`SkillSource`: the learned skills one agent run may use, handed out by an injection policy.

The loop builds one source per sample (see `AgentStep`) and gives it to the agent, which asks for
skills when it knows what the task is (a one-shot agent at once; a conversational agent after the
user's first message). Three policies:

- `matched`: the `SkillMatcher`'s skills for the task text (recall, rerank, floor: often none);
- `all`: every active skill;
- `tool`: a catalog (each active skill's id and issue) in the prompt, and the insight only when the
  agent reads a skill with the `read_skill` tool (progressive disclosure).

The source records every skill it handed out - injected into a prompt or read through the tool -
in `used_skill_ids`; that record, not the agent's word, is what the loop counts as used.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from ace.errors import AceError, UsageError
from ace.retrieval.matching import SkillMatcher
from ace.roles.injected_skills import InjectedSkills
from ace.roles.injection import SKILL_INJECTIONS, SkillInjection
from ace.roles.worked_examples import WorkedExample, without_example
from ace.skillbook import Skill, Skillbook, SkillbookView

__all__ = [
    "READ_SKILL_DESCRIPTION",
    "READ_SKILL_TOOL",
    "SKILL_INJECTIONS",
    "SkillInjection",
    "SkillSource",
    "UnknownSkillError",
]

READ_SKILL_TOOL = "read_skill"
"""Name of the tool through which an agent in `tool` mode reads a skill."""

READ_SKILL_DESCRIPTION = (
    "Read one learned skill listed under 'Learned skills': its issue (when it applies) and its "
    "insight (what to do). Call it when a listed issue looks relevant to the task."
)
"""Description of the `read_skill` tool, shared by every agent that offers it."""

_CATALOG_HEADER = (
    "One skill per line: its id and the issue it addresses. When an issue applies to the task, call "
    f"{READ_SKILL_TOOL}(skill_id) to read what to do; skip the ones that do not apply."
)

_NOTHING_BUT_THE_EXAMPLE = "(withheld: this insight is only a worked example of the task at hand)"
"""The insight a withheld worked example leaves when it was the whole insight."""


class UnknownSkillError(AceError, ValueError):
    """`read_skill` named an id that is not an active skill of the catalog; the message lists the
    ids that are (an agent's tool returns it to the model so it can correct the call)."""


class SkillSource:
    """The skills of one agent run under one injection policy, with a record of what was handed out."""

    def __init__(
        self,
        skillbook: Skillbook | SkillbookView,
        *,
        injection: SkillInjection = "all",
        matcher: SkillMatcher | None = None,
        match_limit: int = 3,
        withheld: WorkedExample | None = None,
    ) -> None:
        """Bind the source to `skillbook` (read only). `withheld` is a worked example cut out of
        every insight handed out (a recheck withholds the example of the task it rechecks; which
        skills match is unchanged). Raises ValueError for an unknown `injection`, for `matched`
        without a `matcher` (or a matcher with another policy, which would be ignored), and for a
        `match_limit` below 1."""
        if injection not in SKILL_INJECTIONS:
            raise UsageError(f"injection must be one of {', '.join(SKILL_INJECTIONS)}; got {injection!r}")
        if (injection == "matched") != (matcher is not None):
            raise UsageError(
                "a matcher is needed for injection='matched' and only for it; "
                f"got injection={injection!r} with{'out' if matcher is None else ''} a matcher"
            )
        if isinstance(match_limit, bool) or not isinstance(match_limit, int) or match_limit < 1:
            raise UsageError(f"match_limit must be an integer >= 1, got {match_limit!r}")
        self._skillbook = skillbook
        self._injection: SkillInjection = injection
        self._matcher = matcher
        self._match_limit = match_limit
        self._withheld = withheld
        self._used: dict[str, None] = {}
        self._lock = threading.Lock()

    @property
    def injection(self) -> SkillInjection:
        """The policy this source follows."""
        return self._injection

    @property
    def used_skill_ids(self) -> tuple[str, ...]:
        """Ids of the skills handed out so far (injected or read), each once, in first-use order."""
        with self._lock:
            return tuple(self._used)

    async def for_task(self, task: str) -> InjectedSkills:
        """The skills text to put into the agent's prompt for `task` (the text the agent knows).

        `matched` and `all` render the chosen skills (`Skillbook.as_prompt` layout; "" when none)
        and record them as used; `tool` renders the catalog (a line on read_skill, then each active
        skill's id and issue; "" when there is none) and records nothing until a skill is read. The
        agent frames the text in its prompt. A blank task matches nothing. Raises ValueError when
        the matcher returns an id the skillbook does not hold, and the matcher's errors (e.g.
        `EmbeddingError`) unchanged.
        """
        if self._injection == "tool":
            return InjectedSkills(text=self._catalog(), skill_ids=())
        if self._injection == "matched":
            skills = await self._matched(task) if task.strip() else []
        else:
            skills = self._skillbook.skills()
        injected = InjectedSkills.from_skills(self._as_handed_out(skill) for skill in skills)
        self._record(injected.skill_ids)
        return injected

    def read(self, skill_id: str) -> str:
        """The text `read_skill(skill_id)` answers with (issue and insight), recording the skill as
        used. Raises `UnknownSkillError` for an id that is not an active skill, and RuntimeError
        unless the policy is `tool`."""
        if self._injection != "tool":
            raise RuntimeError(f"read_skill is only offered with injection='tool', not {self._injection!r}")
        skill = self._skillbook.get_skill(skill_id.strip())
        if skill is None or not skill.active:
            known = ", ".join(s.id for s in self._skillbook.skills()) or "none"
            raise UnknownSkillError(f"no learned skill {skill_id!r}; the skills you can read are: {known}")
        self._record((skill.id,))
        return _skill_text(self._as_handed_out(skill))

    async def _matched(self, task: str) -> list[Skill]:
        assert self._matcher is not None
        matches = await asyncio.to_thread(self._matcher.match, task, self._match_limit)
        skills = []
        for match in matches:
            skill = self._skillbook.get_skill(match.skill_id)
            if skill is None:
                raise UsageError(
                    f"the matcher returned skill {match.skill_id!r}, which is not in this skillbook; "
                    "build the SkillMatcher on the skillbook the skills are injected from"
                )
            skills.append(skill)
        return skills

    def _as_handed_out(self, skill: Skill) -> Skill:
        if self._withheld is None or not skill.insight or self._withheld.text not in skill.insight:
            return skill
        rest = without_example(skill.insight, self._withheld)
        return dataclasses.replace(skill, insight=rest or _NOTHING_BUT_THE_EXAMPLE)

    def _catalog(self) -> str:
        skills = self._skillbook.skills()
        if not skills:
            return ""
        lines = [f"- [{skill.id}] {skill.issue}" for skill in skills]
        return f"{_CATALOG_HEADER}\n\n" + "\n".join(lines)

    def _record(self, skill_ids: tuple[str, ...]) -> None:
        with self._lock:
            self._used.update(dict.fromkeys(skill_ids))


def _skill_text(skill: Skill) -> str:
    lines = [f"[{skill.id}] ({skill.section}; keywords: {', '.join(skill.keywords)})", f"Issue: {skill.issue}"]
    if skill.insight:
        lines.append(f"Insight: {skill.insight}")
    return "\n".join(lines)
