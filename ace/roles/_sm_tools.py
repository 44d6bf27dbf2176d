"""The SkillManager's tools: atomic mutations of the real skillbook, each with its own provenance.

Every mutation is one `UpdateOperation` applied through the session's `MutationJournal`
(`SMDeps.journal`), so the audit log is the mutation and a session that does not finish can be
rolled back as a unit. Each operation carries an InsightSource derived from `SMDeps.current_source`
(same trace identity and trace_refs, its own operation_type, learning_text and relation: "primary"
for the skill's primary trace, else "supporting", see `ace.roles.provenance`). Invalid arguments
raise ModelRetry with the fix. `sandbox_eval` (opt-in) runs code over the session's data in a
sandbox. Tools are async so they run on the event loop one at a time, never racing on the skillbook.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field
from pydantic_ai import ModelRetry, RunContext, Tool
from pydantic_ai.tools import ToolDefinition

from ace.errors import UsageError
from ace.retrieval import Embedder, SkillMatcher
from ace.roles._code_tool import LazySandbox, format_execution
from ace.roles._schema_bounds import schema_bounds
from ace.roles._skill_dicts import skill_detail, skill_summary
from ace.roles._skill_scope import lost_questions, misses_question
from ace.roles.protocols import SessionCheck
from ace.roles.worked_examples import WorkedExample, with_example
from ace.skillbook import (
    TAG_OUTCOMES,
    InsightSource,
    MutationJournal,
    Section,
    Skill,
    Skillbook,
    SkillbookError,
    SkillNotFoundError,
    TagDelta,
    UpdateOperation,
    normalize_keywords,
)

__all__ = ["SANDBOX_EVAL_TOOL", "SANDBOX_VARIABLES", "SM_TOOLS", "SMDeps"]


@dataclass
class SMDeps:
    """What the SkillManager's tools see during one session."""

    skillbook: Skillbook
    """The real skillbook; tools mutate it through `journal`."""
    current_source: InsightSource
    """Provenance of the trace being learned from; each mutation derives its own from it."""
    injected_skill_ids: tuple[str, ...] = ()
    """Skills that were in the agent's prompt: the only ones tag_skill accepts."""
    embedder: Embedder | None = None
    """Embedder for search_skills (None: retrieval's default)."""
    require_task_match: bool = False
    """Refuse a context skill whose issue does not match the source's sample_question."""
    journal: MutationJournal = field(init=False)
    """The session's mutations, applied at once and undone together if the session does not finish."""
    sandbox: LazySandbox | None = None
    """The session's sandbox for `sandbox_eval` (started on first use); None when the tool is off."""
    check: SessionCheck | None = None
    """Judges the session's mutations when the model finalizes (see `SkillManager.update_skills`)."""
    revisions_left: int = 0
    """How many more failed checks refuse finalize (with the reason) before the session is undone."""
    undone_because: str | None = None
    """The failed check's reason once no revision is left: the session ends and is undone."""
    worked_example: WorkedExample | None = None
    """(expected answer, example sentence) that add_skill / update_skill append to a context
    insight not quoting the answer."""
    expected_answer: str | None = None
    """The run's expected answer when known: a context issue that is only this answer is refused."""
    issues_missing_task: set[str] = field(default_factory=set)
    """Issues refused this session for not matching the task learned from: sent again, the refusal
    names the task itself as the issue to use."""

    def __post_init__(self) -> None:
        self.journal = self.skillbook.journal()

    @functools.cached_property
    def matcher(self) -> SkillMatcher:
        """The session's matcher over the skillbook (it follows the session's own mutations): what
        search_skills calls related."""
        return SkillMatcher(self.skillbook, embedder=self.embedder)

    @property
    def operations(self) -> list[UpdateOperation]:
        """The audit log: every mutation applied in this session, in order."""
        return self.journal.operations


_ISSUE_MAX_CHARS = 400
_Issue = Annotated[str, Field(json_schema_extra=schema_bounds(max_length=_ISSUE_MAX_CHARS))]
_Insight = Annotated[str, Field(json_schema_extra=schema_bounds(max_length=600))]
_Keywords = Annotated[
    list[Annotated[str, Field(json_schema_extra=schema_bounds(max_length=40))]],
    Field(json_schema_extra=schema_bounds(max_items=5)),
]
"""The bounds of the skill fields in the add_skill / update_skill schemas (see `ace.roles._schema_bounds`)."""


def _source_for(deps: SMDeps, operation_type: str, learning_text: str, skill_id: str | None = None) -> InsightSource:
    """The mutation's own record: the session's source with its operation, learning and relation
    to the skill (`skill_id` None: a new skill, of which this trace is the primary one)."""
    skill = deps.skillbook.get_skill(skill_id) if skill_id is not None else None
    return deps.current_source.replace(
        operation_type=operation_type,
        learning_text=learning_text,
        relation="primary" if skill is None else skill.relation_of(deps.current_source.trace_uid),
    )


def _apply(deps: SMDeps, tool: str, **fields: Any) -> Skill:
    """Apply the `UpdateOperation` of `fields` through the session's journal; an unknown id or a
    broken invariant becomes a ModelRetry the model can act on."""
    try:
        return deps.journal.apply(UpdateOperation(**fields))
    except SkillNotFoundError as exc:
        raise _unknown_skill(deps, fields.get("skill_id") or "") from exc
    except SkillbookError as exc:
        raise ModelRetry(f"{tool} rejected: {exc}. Fix the arguments and call {tool} again.") from exc


async def add_skill(
    ctx: RunContext[SMDeps],
    section: Section,
    issue: _Issue,
    keywords: _Keywords,
    insight: _Insight | None,
) -> dict[str, Any]:
    """Add a new skill. Call search_skills first: never add what an existing skill covers.

    section: "context" (agent-facing knowledge; insight required) or "harness" (runtime problem;
    insight may be null). issue: WHEN it applies - the problem, with its scope inline, narrow at
    first. keywords: 1-5 short labels. insight: WHAT to do - the imperative action.
    """
    if section == "context" and not (insight and insight.strip()):
        raise ModelRetry(
            "add_skill rejected: a context skill needs an insight, the imperative action the agent "
            "should take. Split what you wrote: issue = the problem and when it occurs (e.g. "
            "'Users asking to cancel a basic economy booking without insurance'), insight = what to "
            "do (e.g. 'Check the insurance before cancelling; refuse politely if absent'). Call "
            "add_skill again with both, or use section='harness' if the agent has no action to take."
        )
    _refuse_answer_as_issue(ctx.deps, "add_skill", section, issue)
    _refuse_missed_task(ctx.deps, "add_skill", section, issue, keywords, insight)
    insight = _with_worked_example(ctx.deps, section, insight)
    source = _source_for(ctx.deps, "ADD", insight or issue)
    skill = _apply(
        ctx.deps,
        "add_skill",
        type="ADD",
        section=section,
        issue=issue,
        insight=insight,
        keywords=keywords,
        insight_source=source,
    )
    return {"ok": True, "skill_id": skill.id}


async def update_skill(
    ctx: RunContext[SMDeps],
    skill_id: str,
    issue: _Issue,
    keywords: _Keywords | None = None,
    insight: _Insight | None = None,
) -> dict[str, Any]:
    """Rewrite a skill's issue (required, e.g. widened to cover a new domain) and optionally its
    keywords and insight (omit either to keep the current value)."""
    current = ctx.deps.skillbook.get_skill(skill_id)
    if current is not None:
        insight = _with_worked_example(ctx.deps, current.section, insight)
    repeat = _refuse_unchanged(ctx.deps, skill_id, issue, keywords, insight)
    if repeat is not None:
        return repeat
    _refuse_replaced_scope(ctx.deps, skill_id, issue, keywords)
    if current is not None:
        _refuse_answer_as_issue(ctx.deps, "update_skill", current.section, issue)
        _refuse_missed_task(
            ctx.deps,
            "update_skill",
            current.section,
            issue,
            current.keywords if keywords is None else keywords,
            current.insight if insight is None else insight,
        )
    source = _source_for(ctx.deps, "UPDATE", insight or issue, skill_id)
    _apply(
        ctx.deps,
        "update_skill",
        type="UPDATE",
        section=current.section if current is not None else None,
        skill_id=skill_id,
        issue=issue,
        insight=insight,
        keywords=keywords,
        insight_source=source,
    )
    return {"ok": True}


def _with_worked_example(deps: SMDeps, section: str, insight: str | None) -> str | None:
    """A context `insight` ending with the session's worked example (see
    `SkillManager(worked_examples=...)`); any other `insight` as is."""
    example = deps.worked_example
    if section != "context" or not insight or example is None:
        return insight
    return with_example(insight, example)


def _refuse_unchanged(
    deps: SMDeps, skill_id: str, issue: str, keywords: list[str] | None, insight: str | None
) -> dict[str, Any] | None:
    """None when the update changes the skill (or names an unknown id or bad keywords: the update
    itself reports them). An update that would leave the skill as it is changes nothing but the
    audit log: it is refused, pointing to add_skill (a small model otherwise copies the skill it
    found into update_skill and the reflection's own lesson is lost) - except on a skill this
    session added or updated, where it is a harmless repeat (a small model re-sends what it just
    wrote): the no-op answer returned then costs no retry, so the repeats cannot fail the session
    and undo its lesson."""
    skill = deps.skillbook.get_skill(skill_id)
    if skill is None:
        return None
    try:
        same_keywords = keywords is None or normalize_keywords(keywords) == skill.keywords
    except SkillbookError:
        return None
    if not (issue == skill.issue and same_keywords and (insight is None or insight == skill.insight)):
        return None
    if any(op.type in ("ADD", "UPDATE") and op.skill_id == skill_id for op in deps.operations):
        return {
            "ok": True,
            "changed": False,
            "note": f"{skill_id} already says exactly this, as this session wrote it: nothing to change. "
            "Call finalize, or add_skill if another lesson is left.",
        }
    raise ModelRetry(
        f"update_skill changed nothing: {skill_id} already says exactly this. If the reflection's lesson "
        "is about another kind of task, keep it with add_skill as a new skill; if nothing is left to do, "
        "call finalize."
    )


def _refuse_replaced_scope(deps: SMDeps, skill_id: str, issue: str, keywords: list[str] | None) -> None:
    """A new issue that no longer applies to any task the skill was learned from makes it another
    skill under the old id (its insight, counters and history left under an issue they do not
    answer): refuse it, pointing to add_skill (see `ace.roles._skill_scope`)."""
    skill = deps.skillbook.get_skill(skill_id)
    if skill is None or issue == skill.issue:
        return
    try:
        lost = lost_questions(skill, issue, keywords, deps.embedder)
    except SkillbookError:
        return  # the update itself rejects the keywords
    if lost:
        example = lost[0] if len(lost[0]) <= 200 else lost[0][:200] + "..."
        if any(op.type == "ADD" and op.skill_id == skill_id for op in deps.operations):
            raise ModelRetry(
                f"update_skill rejected: {skill_id} was just added for {example!r}, and its issue already says "
                "which tasks it is for; the new issue no longer covers that task. Keep the issue "
                f"as it is: the lesson goes in insight (update_skill on {skill_id} with its current issue and "
                "a new insight), or call finalize if the skill already holds it."
            )
        raise ModelRetry(
            f"update_skill rejected: {skill_id} was learned from tasks such as {example!r} and the new issue "
            "no longer applies to them, so it would be a different skill, not a wider one. Keep this lesson "
            f"with add_skill; update {skill_id} only with an issue that still covers its own tasks."
        )


def _refuse_answer_as_issue(deps: SMDeps, tool: str, section: str, issue: str) -> None:
    """A context issue that is only the run's expected answer (letters and digits compared, case
    aside) says nothing about when the skill applies, so the matcher never offers it: refuse it,
    asking for the task in its own words with the answer in insight."""
    expected = deps.expected_answer
    if section != "context" or not expected or _letters_and_digits(issue) != _letters_and_digits(expected):
        return
    question = deps.current_source.sample_question or ""
    task = f" (e.g. {question!r})" if question and len(question) <= 200 else ""
    raise ModelRetry(
        f"{tool} rejected: the issue {issue!r} is the expected answer, not the kind of task the skill is for. "
        f"Write the issue as that task, in its own words{task}, and put the answer in insight. "
        f"Call {tool} again."
    )


def _letters_and_digits(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def _refuse_missed_task(
    deps: SMDeps, tool: str, section: str, issue: str, keywords: Sequence[str], insight: str | None
) -> None:
    """A context skill whose issue the matcher would not match to the task its lesson comes from is
    never offered for tasks like it: refuse it, asking for the issue in that task's words (see
    `ace.roles._skill_scope`). The same issue sent again is refused with the task itself as the
    issue to use. Only with `require_task_match`; skipped for harness skills and when the task is
    unknown."""
    question = deps.current_source.sample_question
    if not deps.require_task_match or section != "context" or not question:
        return
    try:
        missed = misses_question(section, issue, keywords, insight, question, deps.embedder)
    except SkillbookError:
        return  # the operation itself rejects the fields
    if not missed:
        return
    if issue in deps.issues_missing_task and len(question) <= _ISSUE_MAX_CHARS:
        raise ModelRetry(
            f"{tool} rejected again: this issue was already refused for not matching the task this lesson "
            f"comes from. Call {tool} again with issue={question!r} (the task itself) and the rule in insight."
        )
    deps.issues_missing_task.add(issue)
    example = question if len(question) <= 200 else question[:200] + "..."
    raise ModelRetry(
        f"{tool} rejected: the issue does not match the task this lesson comes from ({example!r}), so the "
        "skill would never be offered for tasks like it. Write the issue as that kind of task, in the task's "
        f"own words (what is asked, about what), not the answer or the lesson; the rule goes in insight. "
        f"Call {tool} again."
    )


async def tag_skill(ctx: RunContext[SMDeps], skill_id: str, delta: TagDelta) -> dict[str, Any]:
    """Record whether an injected skill was helpful (1), harmful (-1) or neutral (0) in this run."""
    current = ctx.deps.skillbook.get_skill(skill_id)
    if skill_id not in ctx.deps.injected_skill_ids:
        if current is None:
            raise _unknown_skill(ctx.deps, skill_id)
        injected = ", ".join(ctx.deps.injected_skill_ids) or "none"
        raise ModelRetry(
            f"tag_skill rejected: {skill_id!r} was not injected into the agent's prompt, so this run "
            f"says nothing about it. Only these skills can be tagged: {injected}."
        )
    source = _source_for(ctx.deps, "TAG", f"tagged {TAG_OUTCOMES[delta]}", skill_id)
    _apply(
        ctx.deps,
        "tag_skill",
        type="TAG",
        section=current.section if current is not None else None,
        skill_id=skill_id,
        delta=delta,
        insight_source=source,
    )
    return {"ok": True}


async def remove_skill(ctx: RunContext[SMDeps], skill_id: str, reason: str) -> dict[str, Any]:
    """Soft-delete a harmful or outdated skill: it becomes inactive, its history is kept."""
    if not reason.strip():
        raise ModelRetry("remove_skill needs a non-empty reason saying why the skill goes.")
    current = ctx.deps.skillbook.get_skill(skill_id)
    source = _source_for(ctx.deps, "REMOVE", reason, skill_id)
    _apply(
        ctx.deps,
        "remove_skill",
        type="REMOVE",
        section=current.section if current is not None else None,
        skill_id=skill_id,
        reason=reason,
        insight_source=source,
    )
    return {"ok": True}


async def search_skills(
    ctx: RunContext[SMDeps],
    query: str,
    top_k: int = 5,
    section: Section | None = None,
    keywords: list[str] | None = None,
) -> list[dict[str, Any]] | dict[str, Any]:
    """Find up to `top_k` active skills related to `query` (a lesson, an issue), best first,
    optionally only in `section` or with `keywords`; each with its counters. With no match:
    `{"matches": [], "next": "add_skill"}`."""
    try:
        skills = _related_skills(ctx.deps, query, top_k, section, keywords)
    except ValueError as exc:  # includes SkillbookError (bad keywords)
        raise ModelRetry(f"search_skills rejected: {exc}. Fix the arguments and search again.") from exc
    if not skills:
        return {"matches": [], "next": "add_skill"}  # said as data: small models copy sentences into fields
    return [skill_summary(skill) for skill in skills]


def _related_skills(
    deps: SMDeps, query: str, top_k: int, section: Section | None, keywords: list[str] | None
) -> list[Skill]:
    """The active skills in `section` carrying one of `keywords` (when given) that the
    `SkillMatcher` matches to `query`, in its order. Related means what the matcher, the judge of
    injection, finds: a retrieval ranking returns the nearest skills however far they are, and a
    1.5B model took the only skill in the skillbook, a date format, for one "already covering" its
    lessons on names, weights and refunds (the matcher scores those 0.03, the same rule restated
    0.92). Raises ValueError for a blank query, a `top_k` below 1 or keywords a skill cannot have."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise UsageError(f"top_k must be a positive integer, got {top_k!r}")
    wanted = set(normalize_keywords(keywords)) if keywords else set()
    kept = {
        skill.id: skill
        for skill in deps.skillbook.skills()
        if (section is None or skill.section == section) and (not wanted or wanted & set(skill.keywords))
    }
    matched = deps.matcher.match(query, limit=deps.matcher.shortlist_size)
    return [kept[match.skill_id] for match in matched if match.skill_id in kept][:top_k]


async def read_skill(ctx: RunContext[SMDeps], skill_id: str) -> dict[str, Any]:
    """Read one skill: its fields, counters, active flag, its newest occurrences (provenance
    records, newest first) and how many older ones were left out."""
    skill = ctx.deps.skillbook.get_skill(skill_id)
    if skill is None:
        raise _unknown_skill(ctx.deps, skill_id)
    return skill_detail(skill)


SANDBOX_VARIABLES = "`reflections`, `skills`, `injected_skill_ids` and `trace_uid`"
"""What `sandbox_eval` code finds defined (named in its answers)."""


async def sandbox_eval(ctx: RunContext[SMDeps], code: str) -> str:
    """Run Python `code` in a sandbox over this session's data (variables persist between calls):
    `reflections` (list of dicts: reasoning, error_identification, root_cause_analysis,
    correct_approach, key_insight), `skills` (every skill as JSON, inactive ones too, as they were at
    your first sandbox_eval call), `injected_skill_ids` and `trace_uid`. Read only: nothing done
    here changes the skillbook. Returns the captured stdout and stderr and any error."""
    assert ctx.deps.sandbox is not None  # the tool is registered only with a sandbox
    result = await ctx.deps.sandbox.execute(code)
    output = format_execution(result, reloaded=SANDBOX_VARIABLES)
    if result.error is not None or result.timed_out or result.memory_exceeded:
        output += f"\nDefined: {SANDBOX_VARIABLES}."
    return output


def _unknown_skill(deps: SMDeps, skill_id: str) -> ModelRetry:
    """A correction that leads somewhere: a trace id or a tool name named as such, else the
    closest skill ids."""
    source = deps.current_source
    known = [skill.id for skill in deps.skillbook.skills(include_inactive=True)]
    if skill_id in {source.trace_uid, source.trace_id} or ":" in skill_id:
        empty = "" if known else " The skillbook holds no skill yet: keep a new lesson with add_skill."
        return ModelRetry(
            f"{skill_id!r} is the id of a trace, not of a skill. Skill ids look like context-00001 or "
            f"harness-00001: take them from <injected_skills>, search_skills or read_skill.{empty}"
        )
    if skill_id in {tool.name for tool in (*SM_TOOLS, SANDBOX_EVAL_TOOL)} | {"finalize"}:
        return ModelRetry(
            f"{skill_id!r} is the name of a tool, not the id of a skill. Skill ids look like context-00001 or "
            "harness-00001: take them from <injected_skills>, search_skills or read_skill. When search_skills "
            "found no skill for this lesson, the lesson is new: keep it with add_skill."
        )
    closest = difflib.get_close_matches(skill_id, known, n=3, cutoff=0.6)
    if closest:
        hint = f"the closest existing ids are {', '.join(closest)}"
    elif known:
        hint = f"existing ids include {', '.join(known[:5])}"
    else:
        hint = "the skillbook holds no skill yet: use add_skill"
    return ModelRetry(f"no skill with id {skill_id!r}; {hint}. Use search_skills to find the right one.")


async def _only_with_injected_skills(ctx: RunContext[SMDeps], tool_def: ToolDefinition) -> ToolDefinition | None:
    """tag_skill is offered only when some skill was injected: with none, there is nothing to tag
    (and a small model, offered the tool, tries to tag whatever id it has seen)."""
    return tool_def if ctx.deps.injected_skill_ids else None


SM_TOOLS: tuple[Tool[SMDeps], ...] = (
    Tool(add_skill),
    Tool(update_skill),
    Tool(tag_skill, prepare=_only_with_injected_skills),
    Tool(remove_skill),
    Tool(search_skills),
    Tool(read_skill),
)
"""The SkillManager's tools besides `finalize`, which is its output tool (tag_skill only when a
skill was injected); `sandbox_eval` is added only when enabled (`SANDBOX_EVAL_TOOL`)."""

SANDBOX_EVAL_TOOL: Tool[SMDeps] = Tool(sandbox_eval)
"""The opt-in `sandbox_eval(code)` tool (`SkillManager(sandbox_eval=...)`)."""
