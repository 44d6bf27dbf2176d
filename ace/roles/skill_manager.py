"""The SkillManager role: a tool loop that curates the skillbook from reflections, mutating it directly."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model

from ace.agentic import AgenticConfig, BudgetExhausted, RecursiveAgent
from ace.agentic.sandbox import Sandbox
from ace.errors import AceError, UsageError
from ace.models import RecoveryEvent, RequestSettings
from ace.retrieval import Embedder
from ace.roles._code_tool import LazySandbox, default_sandbox
from ace.roles._sm_tools import SANDBOX_EVAL_TOOL, SM_TOOLS, SMDeps
from ace.roles.outputs import ReflectorOutput, SkillManagerOutput
from ace.roles.prompts import skill_manager_instructions
from ace.roles.protocols import SessionCheck
from ace.roles.worked_examples import worked_example
from ace.skillbook import InsightSource, Skillbook, UpdateOperation

__all__ = ["DEFAULT_HARMFUL_THRESHOLD", "SMDeps", "SkillManager", "SkillManagerIncompleteError", "unbacked_claims"]

DEFAULT_HARMFUL_THRESHOLD = 3
"""The SkillManager's prompt tells it to remove a skill whose harmful_count reaches this when it
encounters one (a rule the model follows, as the SkillManager design asks; no code removes skills by count)."""


class SkillManagerIncompleteError(AceError, RuntimeError):
    """The SkillManager session stopped before `finalize` (budget exhausted, model misbehaving, a
    single tool-call pass that did not finalize).

    A session is all-or-nothing: the mutations it made were rolled back, so the skillbook is as it
    was before the session (other writers' changes kept). They are listed in `operations`. The
    original error, if any, is the `__cause__`. Raise the budget or retry the sample.
    """

    def __init__(self, message: str, operations: Sequence[UpdateOperation]) -> None:
        super().__init__(message)
        self.operations: tuple[UpdateOperation, ...] = tuple(operations)
        """The mutations the session made before it stopped; all rolled back."""


class SkillManager:
    """Curates a skillbook with atomic tools on a `RecursiveAgent(span_label="sm")`.

    Tools: add_skill, update_skill, tag_skill, remove_skill, search_skills, read_skill, and
    finalize(reasoning), which ends the session; with `sandbox_eval` enabled also sandbox_eval(code).
    Mutations hit the real skillbook immediately (later tool calls see them); a session that ends
    without finalize - an error, an exhausted budget, cancellation - has them rolled back. The
    returned `SkillManagerOutput.operations` is the audit log of what was done.
    """

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=1024, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given: a few tool calls per response."""

    def __init__(
        self,
        model: str | Model,
        *,
        config: AgenticConfig | None = None,
        embedder: Embedder | None = None,
        harmful_threshold: int = DEFAULT_HARMFUL_THRESHOLD,
        summary_model: str | Model | None = None,
        settings: RequestSettings | None = None,
        sandbox_eval: bool | Callable[[], Sandbox] = False,
        require_task_match: bool = False,
        check_revisions: int = 1,
        worked_examples: bool = False,
    ) -> None:
        """`model` is a model string or a pydantic-ai Model; `embedder` serves search_skills
        (None: retrieval's default); `harmful_threshold` is N in "remove skills whose
        harmful_count >= N"; `settings` go with every request (default `DEFAULT_SETTINGS`).
        `sandbox_eval` opts in to the `sandbox_eval(code)` tool: False (default) leaves it
        out; True gives each session a `Sandbox` cut like the RecursiveReflector's; a callable is
        the factory of each session's sandbox (e.g. `lambda: Sandbox(timeout_s=2)`).
        `require_task_match` refuses an add_skill / update_skill of a context skill whose issue the
        `SkillMatcher` would not match to the task being learned from (the source's
        `sample_question`): for matched injection on task texts, where such a skill is never
        offered for tasks like it. `check_revisions` is how many times a session whose `check`
        fails is told why (finalize is refused) and may revise before it is undone.
        `worked_examples` makes a context insight written (added, or updated with a new insight)
        in a session on a run with a known `ground_truth` carry it: unless the insight already
        quotes the expected answer, `Example: '<task>' -> '<expected answer>'` is appended (the
        example the instructions ask for, which a small model leaves out). Raises ValueError when
        `harmful_threshold` < 1 or `check_revisions` < 0."""
        if check_revisions < 0:
            raise UsageError(f"check_revisions must be >= 0; got {check_revisions}")
        self._check_revisions = check_revisions
        self._worked_examples = worked_examples
        self._embedder = embedder
        self._require_task_match = require_task_match
        self._sandbox_factory: Callable[[], Sandbox] | None
        if callable(sandbox_eval):
            self._sandbox_factory = sandbox_eval
        elif sandbox_eval is True:
            self._sandbox_factory = lambda: default_sandbox(self._agent.context_window)
        elif sandbox_eval is False:
            self._sandbox_factory = None
        else:
            raise UsageError(f"sandbox_eval must be True, False or a sandbox factory; got {sandbox_eval!r}")
        tools = [*SM_TOOLS, SANDBOX_EVAL_TOOL] if self._sandbox_factory is not None else list(SM_TOOLS)
        self._agent: RecursiveAgent[SMDeps, str] = RecursiveAgent(
            model,
            instructions=skill_manager_instructions(harmful_threshold=harmful_threshold),
            deps_type=SMDeps,
            output_type=ToolOutput(_finalize, name="finalize"),
            tools=tools,
            config=config or AgenticConfig(),
            span_label="sm",
            summary_model=summary_model,
            settings=settings or self.DEFAULT_SETTINGS,
        )

    @property
    def recoveries(self) -> Counter[RecoveryEvent]:
        """How often this role's model responses were repaired (see `ace.models.recovering`)."""
        return self._agent.recoveries

    async def update_skills(
        self,
        *,
        reflections: Sequence[ReflectorOutput],
        skillbook: Skillbook,
        source: InsightSource,
        injected_skill_ids: Sequence[str] = (),
        question_context: str = "",
        progress: str = "",
        outcome: str = "",
        ground_truth: str | None = None,
        check: SessionCheck | None = None,
    ) -> SkillManagerOutput:
        """Run one session that turns `reflections` into mutations of `skillbook`.

        `outcome` (the environment's verdict, e.g. the reward) is shown next to the injected
        skills, which the model tags by it. `ground_truth` (the run's expected answer) becomes the
        worked example of an insight the session writes, with `worked_examples`; a context issue
        that is only this answer is refused (it never matches a task). Failed reflections
        (`failed=True`) are never shown to the model; if every reflection failed (or none was
        given) no session runs and the output has `finished=False`, no operations and a reasoning
        that names the failure reasons.

        All-or-nothing: when the session stops before finalize, every mutation it made is rolled
        back and SkillManagerIncompleteError is raised; any other exception (cancellation included)
        rolls back too and propagates unchanged. `check(operations)` runs when a session that made
        mutations calls finalize, with them applied: its first `check_revisions` reasons refuse
        finalize (the model may revise and finalize again); after that a reason rolls the session
        back (the output lists the mutations in `undone`, with `undone_because`); an exception it
        raises rolls back too.
        """
        usable = [reflection for reflection in reflections if not reflection.failed]
        if not usable:
            return SkillManagerOutput(reasoning=_nothing_to_learn(reflections), operations=(), finished=False)
        deps = SMDeps(
            skillbook=skillbook,
            current_source=source,
            injected_skill_ids=tuple(injected_skill_ids),
            embedder=self._embedder,
            require_task_match=self._require_task_match,
            check=check,
            revisions_left=self._check_revisions,
            worked_example=worked_example(source.sample_question, ground_truth) if self._worked_examples else None,
            expected_answer=ground_truth,
        )
        if self._sandbox_factory is not None:
            deps.sandbox = LazySandbox(self._sandbox_factory, lambda: _sandbox_variables(usable, skillbook, deps))
        prompt = _user_prompt(usable, skillbook, source, deps.injected_skill_ids, question_context, progress, outcome)
        try:
            result = await self._agent.run(prompt, deps=deps)
        except (BudgetExhausted, UnexpectedModelBehavior) as exc:
            raise _rolled_back(deps, str(exc)) from exc
        except BaseException:
            deps.journal.rollback()
            raise
        finally:
            if deps.sandbox is not None:
                deps.sandbox.close()
        reasoning = result.output
        if not result.finished or reasoning is None:  # a single tool-call pass (max_requests=1) without finalize
            raise _rolled_back(deps, "the single tool-call pass ended without finalize")
        operations = tuple(deps.operations)
        output = SkillManagerOutput(
            reasoning=reasoning,
            operations=operations,
            finished=True,
            unbacked_claims=unbacked_claims(reasoning, operations),
        )
        if deps.undone_because is None:
            return output
        deps.journal.rollback()
        return dataclasses.replace(output, operations=(), undone=operations, undone_because=deps.undone_because)


def _rolled_back(deps: SMDeps, why: str) -> SkillManagerIncompleteError:
    """Undo the session's mutations and say so."""
    operations = tuple(deps.operations)
    deps.journal.rollback()
    return SkillManagerIncompleteError(
        f"SkillManager stopped before finalize ({why}); its {len(operations)} operation(s) were rolled back",
        operations,
    )


_CLAIMS = {
    "ADD": re.compile(r"\b(added|created)\b", re.I),
    "UPDATE": re.compile(r"\b(updated|widened|broadened|rewrote|rewritten|merged|refined)\b", re.I),
    "TAG": re.compile(r"\b(tagged|marked)\b", re.I),
    "REMOVE": re.compile(r"\b(removed|deleted|deactivated|soft-deleted)\b", re.I),
}
_NEGATION = re.compile(r"\b(no|not|nothing|never|none|without)\b|n't\b", re.I)


def unbacked_claims(reasoning: str, operations: Sequence[UpdateOperation]) -> tuple[str, ...]:
    """The operation kinds `reasoning` claims (a past-tense verb such as "added" or "removed", not
    negated in the words just before it) that `operations` does not contain, in ADD, UPDATE, TAG,
    REMOVE order."""
    done = {operation.type for operation in operations}
    claimed = []
    for kind, verb in _CLAIMS.items():
        for match in verb.finditer(reasoning):
            before = " ".join(reasoning[: match.start()].split()[-4:])
            if not _NEGATION.search(before):
                claimed.append(kind)
                break
    return tuple(kind for kind in claimed if kind not in done)


async def _finalize(ctx: RunContext[SMDeps], reasoning: str) -> str:
    """End the session: a short account of what you changed and why (or why nothing)."""
    deps = ctx.deps
    if deps.check is None or not deps.operations:
        return reasoning
    reason = await deps.check(tuple(deps.operations))
    if reason is None:
        return reasoning
    if deps.revisions_left > 0:
        deps.revisions_left -= 1
        raise ModelRetry(
            f"finalize refused: {reason}. Revise the skill with update_skill (same skill_id and issue) so that "
            "its insight states exactly the form of the expected answer, then call finalize again."
        )
    deps.undone_because = reason
    return reasoning


def _sandbox_variables(reflections: Sequence[ReflectorOutput], skillbook: Skillbook, deps: SMDeps) -> dict[str, Any]:
    """The data `sandbox_eval` code sees, as plain JSON (see `SANDBOX_VARIABLES`)."""
    return {
        "reflections": [_reflection_fields(reflection) for reflection in reflections],
        "skills": [skill.to_dict() for skill in skillbook.skills(include_inactive=True)],
        "injected_skill_ids": list(deps.injected_skill_ids),
        "trace_uid": deps.current_source.trace_uid,
    }


def _nothing_to_learn(reflections: Sequence[ReflectorOutput]) -> str:
    if not reflections:
        return "No reflection was given; the skillbook was not changed."
    reasons = "; ".join(reflection.failure_reason or "no reason given" for reflection in reflections)
    return f"All {len(reflections)} reflection(s) failed ({reasons}); the skillbook was not changed."


def _user_prompt(
    reflections: Sequence[ReflectorOutput],
    skillbook: Skillbook,
    source: InsightSource,
    injected_skill_ids: tuple[str, ...],
    question_context: str,
    progress: str,
    outcome: str,
) -> str:
    identity = f"trace: {source.trace_uid}"
    if source.sample_question:
        identity += f"\nquestion: {source.sample_question}"
    parts = [f"<trace>\n{identity}\n</trace>"]
    if question_context:
        parts.append(f"<question_context>\n{question_context}\n</question_context>")
    if progress:
        parts.append(f"<progress>\n{progress}\n</progress>")
    parts.append(f"<skillbook>\n{_render_size(skillbook)}\n</skillbook>")
    if outcome:
        parts.append(f"<outcome>\n{outcome}\n</outcome>")
    parts.append(f"<injected_skills>\n{_render_injected(skillbook, injected_skill_ids)}\n</injected_skills>")
    for index, reflection in enumerate(reflections, start=1):
        parts.append(f'<reflection index="{index}">\n{_render_reflection(reflection)}\n</reflection>')
    parts.append(_first_step(skillbook, injected_skill_ids))  # last, where a small model looks
    return "\n\n".join(parts)


def _first_step(skillbook: Skillbook, injected_skill_ids: tuple[str, ...]) -> str:
    """The procedure's first step for this session, so a small model starts where the rules say."""
    if injected_skill_ids:
        return "First, tag_skill each injected skill by the outcome; then follow the procedure."
    if not skillbook.skills():
        return (
            "First step: the skillbook is empty, so if the reflection holds a lesson, keep it with add_skill "
            "(issue: when it applies; insight: the rule with its example); then finalize."
        )
    return "First step: search_skills for the reflection's key insight; then update or add, then finalize."


def _render_size(skillbook: Skillbook) -> str:
    """How many skills there are: an empty skillbook has nothing to search, update or tag (a small
    model otherwise tries to update the trace's id)."""
    active = len(skillbook.skills())
    if not active:
        return "empty: there is no skill to search, update or tag yet; keep a new lesson with add_skill"
    return f"{active} active skill(s): search_skills finds the ones related to the lesson"


def _render_injected(skillbook: Skillbook, injected_skill_ids: tuple[str, ...]) -> str:
    if not injected_skill_ids:
        return "(no skills were injected into the agent's prompt: there is nothing to tag)"
    lines = []
    for skill_id in injected_skill_ids:
        skill = skillbook.get_skill(skill_id)
        lines.append(f"- [{skill_id}] {skill.issue if skill is not None else '(no longer in the skillbook)'}")
    lines.append("Use read_skill to see a skill's insight and counters.")
    return "\n".join(lines)


def _reflection_fields(reflection: ReflectorOutput) -> dict[str, str]:
    return {
        "reasoning": reflection.reasoning,
        "error_identification": reflection.error_identification,
        "root_cause_analysis": reflection.root_cause_analysis,
        "correct_approach": reflection.correct_approach,
        "key_insight": reflection.key_insight,
    }


def _render_reflection(reflection: ReflectorOutput) -> str:
    return json.dumps(_reflection_fields(reflection), indent=2, ensure_ascii=False)
