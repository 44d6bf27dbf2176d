"""The Recursive Reflector: a tool loop that analyses a trace by running Python over it in a sandbox."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ModelRetry, RunContext, ToolOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model
from pydantic_ai.tools import ToolDefinition

from ace.agentic import AgenticConfig, BudgetExhausted, RecursiveAgent
from ace.agentic.sandbox import Sandbox
from ace.models import RecoveryEvent, RequestSettings
from ace.retrieval import Embedder, retrieve_top_k
from ace.roles._code_tool import default_sandbox, format_execution
from ace.roles._reflection_common import Analysis, final_answer, render_task_inputs
from ace.roles._skill_dicts import skill_detail, skill_summary
from ace.roles.outputs import ReflectorOutput
from ace.roles.prompts import RECURSIVE_REFLECTOR_INSTRUCTIONS
from ace.skillbook import Skill, Skillbook, SkillbookView
from ace.traces.rendering import render_trace, to_plain_data

__all__ = ["RRDeps", "RecursiveReflector"]

_TRACE_PREVIEW_CHARS = 3_000
_FINALIZE_MAX_RETRIES = 2
_RELOADED = "`traces` and the inputs"


@dataclass
class RRDeps:
    """What the Recursive Reflector's tools see during one session."""

    sandbox: Sandbox
    """The session's sandbox; `traces` and the task inputs are loaded in it."""
    skillbook: Skillbook | SkillbookView | None
    """The skillbook the read-only skill tools search; None disables them."""
    embedder: Embedder | None
    """Embedder for `search_skillbook` (None: retrieval's default)."""
    data_hint: str = "`traces`"
    """Where the data is (the variables and the top-level keys of `traces`), repeated in the answer
    to failing code."""
    successful_executions: int = 0
    """execute_code calls that ran to completion without an error or a timeout."""
    failed_code: set[str] = field(default_factory=set)
    """Code that failed in this session (a small model resends it verbatim)."""


class RecursiveReflector:
    """Reflects on a trace by exploring it in code: `RecursiveAgent(span_label="rr")` + `Sandbox`.

    Each `reflect` call starts a fresh sandbox with the trace as variable `traces` (plain JSON
    data) plus `question`, `ground_truth`, `feedback` and `injected_skill_ids`. The model must run
    code successfully at least once before it may submit: `finalize` is offered only then. When no real
    reflection results (budget
    exhausted, submission rejected until retries ran out, the model misbehaving), `reflect` returns
    `ReflectorOutput.failure(reason)` instead of inventing content; callers skip it.
    """

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=1024, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given: room for a code cell or the submission."""

    def __init__(
        self,
        model: str | Model,
        *,
        skillbook: Skillbook | SkillbookView | None = None,
        embedder: Embedder | None = None,
        config: AgenticConfig | None = None,
        sandbox_factory: Callable[[], Sandbox] | None = None,
        summary_model: str | Model | None = None,
        instructions: str = RECURSIVE_REFLECTOR_INSTRUCTIONS,
        settings: RequestSettings | None = None,
    ) -> None:
        """`model` is a model string or a pydantic-ai Model; `skillbook` (a Skillbook or its
        read-only view) enables the `search_skillbook` / `read_skill` tools; `sandbox_factory`
        makes one sandbox per `reflect` call (default: a `Sandbox` whose output per execution is cut
        at the model's context window in characters, about a quarter of it in tokens, and at most
        `DEFAULT_MAX_OUTPUT_CHARS`); `settings` go with every request (default `DEFAULT_SETTINGS`)."""
        self._skillbook = skillbook
        self._embedder = embedder
        self._sandbox_factory = sandbox_factory
        tools: list[Callable[..., Any]] = [execute_code]
        if skillbook is not None:
            tools += [search_skillbook, read_skill]
        self._agent: RecursiveAgent[RRDeps, ReflectorOutput] = RecursiveAgent(
            model,
            instructions=instructions,
            deps_type=RRDeps,
            output_type=ToolOutput(_finalize_reflection, name="finalize", max_retries=_FINALIZE_MAX_RETRIES),
            tools=tools,
            config=config or AgenticConfig(),
            span_label="rr",
            summary_model=summary_model,
            settings=settings or self.DEFAULT_SETTINGS,
            prepare_output_tools=_finalize_after_code,
        )

    def _new_sandbox(self) -> Sandbox:
        if self._sandbox_factory is not None:
            return self._sandbox_factory()
        return default_sandbox(self._agent.context_window)

    @property
    def recoveries(self) -> Counter[RecoveryEvent]:
        """How often this role's model responses were repaired (see `ace.models.recovering`)."""
        return self._agent.recoveries

    async def reflect(
        self,
        *,
        trace: Any,
        question: str = "",
        ground_truth: str | None = None,
        feedback: str | None = None,
        injected_skills: Sequence[Skill] = (),
    ) -> ReflectorOutput:
        """Analyse `trace` in code; returns a failed reflection (never a fake one) when the
        session ends without a valid submission. Sandbox start-up errors propagate."""
        traces = to_plain_data(trace)
        variables = {
            "traces": traces,
            "question": question,
            "ground_truth": ground_truth,
            "feedback": feedback,
            "injected_skill_ids": [skill.id for skill in injected_skills],
        }
        prompt = _user_prompt(traces, question, ground_truth, feedback, injected_skills)
        with self._new_sandbox() as sandbox:
            # Starting the worker process blocks; keep the event loop free meanwhile.
            await asyncio.to_thread(sandbox.start, variables)
            deps = RRDeps(
                sandbox=sandbox, skillbook=self._skillbook, embedder=self._embedder, data_hint=_data_hint(traces)
            )
            try:
                result = await self._agent.run(prompt, deps=deps)
            except BudgetExhausted as exc:
                return ReflectorOutput.failure(f"budget exhausted before a reflection was submitted: {exc}")
            except UnexpectedModelBehavior as exc:
                return ReflectorOutput.failure(f"no valid reflection was submitted: {exc}")
        if result.output is None:  # `finished` is False: a single pass that never called finalize
            return ReflectorOutput.failure("the single tool-call pass ended without a submitted reflection")
        return result.output


async def execute_code(ctx: RunContext[RRDeps], code: str) -> str:
    """Run Python `code` in the persistent sandbox (variables persist between calls).

    `traces` holds the trace. Returns the captured stdout and stderr and any error.
    """
    deps = ctx.deps
    if code.strip() in deps.failed_code:
        return (
            f"Not run: this exact code already failed earlier in this analysis and would fail again. "
            f"Write different code, or submit with finalize if you have seen enough. The data: {deps.data_hint}."
        )
    # The sandbox blocks until the code ends or times out; keep the event loop free meanwhile.
    result = await asyncio.to_thread(deps.sandbox.execute, code)
    if result.error is not None or result.timed_out or result.memory_exceeded:
        deps.failed_code.add(code.strip())
        return f"{format_execution(result, reloaded=_RELOADED)}\nThe data: {deps.data_hint}."
    deps.successful_executions += 1
    output = format_execution(result, reloaded=_RELOADED)
    if deps.successful_executions == 1:
        output += "\n(finalize is now available: submit the reflection once the data supports it.)"
    return output


async def search_skillbook(ctx: RunContext[RRDeps], query: str, top_k: int = 5) -> list[dict[str, Any]]:
    """Find up to `top_k` active skills related to `query`, with their counters (read only)."""
    try:
        skills = retrieve_top_k(_skillbook(ctx.deps), query, top_k=top_k, embedder=ctx.deps.embedder)
    except ValueError as exc:  # includes SkillbookError
        raise ModelRetry(f"search_skillbook rejected: {exc}") from exc
    return [skill_summary(skill) for skill in skills]


async def read_skill(ctx: RunContext[RRDeps], skill_id: str) -> dict[str, Any]:
    """Read one skill by id: its fields, counters, its newest occurrences (newest first) and how
    many older ones were left out (read only)."""
    skill = _skillbook(ctx.deps).get_skill(skill_id)
    if skill is None:
        raise ModelRetry(f"no skill with id {skill_id!r}; use an id returned by search_skillbook")
    return skill_detail(skill)


def _skillbook(deps: RRDeps) -> Skillbook | SkillbookView:
    """The session's skillbook; the skill tools are registered only when there is one."""
    if deps.skillbook is None:
        raise RuntimeError("a skill tool ran in a Recursive Reflector session without a skillbook")
    return deps.skillbook


async def _finalize_after_code(ctx: RunContext[RRDeps], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
    """`finalize` is offered only once code has run successfully: a small model otherwise submits at once."""
    return tool_defs if ctx.deps.successful_executions > 0 else []


async def _finalize_reflection(
    ctx: RunContext[RRDeps],
    reasoning: str,
    error_identification: str,
    root_cause_analysis: str,
    correct_approach: str,
    key_insight: str,
) -> ReflectorOutput:
    """Submit the reflection. Rejected until execute_code has run successfully at least once."""
    if ctx.deps.successful_executions == 0:
        raise ModelRetry(
            "Not submitted: no code has run successfully yet, and a reflection must rest on the data. "
            "Do not call finalize now. Your next call is execute_code, for example "
            'execute_code(code="print(type(traces), list(traces)[:10])"); submit after it has run.'
        )
    return Analysis(
        reasoning=reasoning,
        error_identification=error_identification,
        root_cause_analysis=root_cause_analysis,
        correct_approach=correct_approach,
        key_insight=key_insight,
    ).to_output()


def _user_prompt(
    traces: Any,
    question: str,
    ground_truth: str | None,
    feedback: str | None,
    injected_skills: Sequence[Skill],
) -> str:
    inputs = render_task_inputs(
        question=question,
        ground_truth=ground_truth,
        feedback=feedback,
        injected_skills=injected_skills,
        answer=final_answer(traces),
    )
    return (
        f"{inputs}\n\n<trace_overview>\n{_describe(traces)}\n"
        f"Preview of its rendering (explore the full data in code):\n"
        f"{render_trace(traces, max_chars=_TRACE_PREVIEW_CHARS)}\n</trace_overview>\n\n"
        # Last, where a small model looks: it otherwise opens with a page-long plan in prose.
        "Reply with one execute_code call and nothing else."
    )


def _data_hint(traces: Any) -> str:
    keys = f" (a dict with keys {sorted(traces)[:12]})" if isinstance(traces, dict) else ""
    return (
        f"`traces`{keys}, and `question`, `ground_truth`, `feedback`, `injected_skill_ids`; nothing "
        "else is defined until you define it"
    )


def _describe(traces: Any) -> str:
    if isinstance(traces, dict):
        described = f"`traces` is a dict with keys {sorted(traces)}."
        if isinstance(traces.get("messages"), list):
            described += f" traces['messages'] holds {len(traces['messages'])} messages."
        return described
    if isinstance(traces, list):
        return f"`traces` is a list of {len(traces)} items."
    return f"`traces` is a {type(traces).__name__} of {len(str(traces))} characters."
