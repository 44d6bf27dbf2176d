"""RecursiveAgent: a pydantic-ai tool loop with session budgets, compaction and child sessions."""

from __future__ import annotations

import asyncio
import copy
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability, PrepareOutputTools, ProcessHistory
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.tools import ToolsPrepareFunc
from pydantic_ai.usage import RunUsage, UsageLimits

from ace import tracing
from ace.agentic._compaction import HistoryCompactor
from ace.agentic._config import AgenticConfig, BudgetExhausted
from ace.models import (
    RecoveryEvent,
    RequestSettings,
    context_window,
    recovering,
    resolve_model,
    valid_unicode_messages,
)

__all__ = ["RecursiveAgent", "RecursiveRun"]

DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")

RECURSE_TOOL_NAME = "recurse"
SINGLE_PASS_NOTE = (
    "You get exactly one response in this session: make every tool call you need, including the one "
    "that delivers your final output, in that single response."
)


@dataclass(frozen=True)
class RecursiveRun(Generic[OutputT]):
    """What a RecursiveAgent session produced."""

    output: OutputT | None
    """The model's final output; None only when `finished` is False."""
    finished: bool
    """False only for a single-pass session (`max_requests=1`) whose one response made tool calls but
    delivered no final output: those tool calls were executed, then the session ended."""
    usage: RunUsage
    """Usage of the whole session: the root run, every child and every compaction summary."""
    messages: list[ModelMessage]
    """The root run's message history (after compaction)."""


@dataclass(frozen=True)
class _Budget:
    """Absolute caps on the shared session usage for one (root or child) run."""

    requests: int
    tokens: int | None

    def limits(self) -> UsageLimits:
        return UsageLimits(request_limit=self.requests, total_tokens_limit=self.tokens)

    def exhausted_limit(self, usage: RunUsage) -> Literal["requests", "tokens"]:
        return "tokens" if self.tokens is not None and usage.total_tokens > self.tokens else "requests"


class RecursiveAgent(Generic[DepsT, OutputT]):
    """A pydantic-ai tool loop with typed deps, session budgets, compaction and `recurse` children.

    Tools are ordinary pydantic-ai tools (functions taking `RunContext[DepsT]` first, or `Tool`
    objects) and may raise `ModelRetry`. `output_type` is any pydantic-ai output spec, e.g.
    `ToolOutput(Finalize, name="finalize")`: every tool call in the response that carries the output
    is still executed (`end_strategy="exhaustive"`), so a batch of edits plus `finalize` all apply.
    The tool calls of one response run one at a time, in the order the model emitted them.

    Budgets (`AgenticConfig`) cover the whole session; running out raises `BudgetExhausted` with the
    usage, except that `max_requests=1` is a single tool-call pass (see `RecursiveRun.finished`).
    When `max_depth > 0` the model also gets `recurse(task)`, which runs a child session with the
    same tools and instructions, capped at `child_budget_fraction` of the parent's remaining budget,
    whose usage counts against the parent. Spans: `{span_label}.session` around a run,
    `{span_label}.child` around each child, `{span_label}.compaction`, plus pydantic-ai's own
    instrumentation (model requests and tool calls; see `instrument`). Before each request, lone
    surrogates anywhere in the history (model output, tool results, the prompt) are replaced by
    U+FFFD, so a session never ends with UnicodeEncodeError.
    """

    def __init__(
        self,
        model: str | Model,
        *,
        instructions: str,
        deps_type: type[DepsT],
        output_type: Any = str,
        tools: Sequence[Tool[DepsT] | Callable[..., Any]] = (),
        config: AgenticConfig = AgenticConfig(),
        span_label: str = "agent",
        summary_model: str | Model | None = None,
        instrument: InstrumentationSettings | bool | None = None,
        settings: RequestSettings | None = None,
        prepare_output_tools: ToolsPrepareFunc[DepsT] | None = None,
    ) -> None:
        """`prepare_output_tools(ctx, tool_defs)` decides, before each request, which output tools
        the model is offered (e.g. none until the session has done something). The model is wrapped in
        `ace.models.recovering` (prose instead of a tool call, a call cut at
        the output cap: repaired or given one corrective turn; see `recoveries`). `settings` are sent
        with every request of the session, compaction summaries included (None: the provider's defaults).
        `instrument` is pydantic-ai's instrumentation for the inner
        agent, named after `span_label` (None: `ace.tracing.instrumentation()`, content only after
        `ace.tracing.capture_content()`; False: no model or tool spans)."""
        self._model = recovering(resolve_model(model))
        self.settings = settings or RequestSettings()
        """What every request carries (output cap, temperature, timeout)."""
        self._instructions = instructions
        self._deps_type = deps_type
        self._output_type = output_type
        self._tools = tuple(tools)
        self.config = config
        self.span_label = span_label
        self._instrument = tracing.instrumentation() if instrument is None else instrument
        self._prepare_output_tools = prepare_output_tools
        self.context_window = config.context_window_tokens or context_window(self._model)
        """The model's context window in tokens (the config's, litellm's, or the default)."""
        budget = config.compaction_budget(
            context_window=self.context_window, max_output_tokens=self.settings.max_output_tokens
        )
        self._compactor = (
            HistoryCompactor(
                budget_tokens=budget,
                keep_recent=config.keep_recent_messages,
                summary_model=resolve_model(summary_model) if summary_model is not None else self._model,
                span_label=span_label,
                model_settings=self.settings.model_settings(),
            )
            if budget is not None
            else None
        )

    async def run(self, prompt: str, *, deps: DepsT) -> RecursiveRun[OutputT]:
        """Run one session on `prompt`. Raises `BudgetExhausted` when a session budget runs out."""
        usage = RunUsage()
        budget = _Budget(requests=self.config.max_requests, tokens=self.config.max_tokens)
        with tracing.span(
            f"{self.span_label}.session",
            span_label=self.span_label,
            max_requests=budget.requests,
            max_tokens=budget.tokens,
        ) as span:
            run = await self._run_loop(prompt, deps=deps, usage=usage, budget=budget, depth=0)
            span.set_attributes(
                {"requests": usage.requests, "total_tokens": usage.total_tokens, "finished": run.finished}
            )
        return run

    @property
    def recoveries(self) -> Counter[RecoveryEvent]:
        """How often the model's responses were repaired (see `ace.models.RecoveringModel.recoveries`)."""
        return self._model.recoveries

    def run_sync(self, prompt: str, *, deps: DepsT) -> RecursiveRun[OutputT]:
        """`run` on a fresh event loop; call it from synchronous code only (not inside a running loop)."""
        return asyncio.run(self.run(prompt, deps=deps))

    async def _run_loop(
        self, prompt: str, *, deps: DepsT, usage: RunUsage, budget: _Budget, depth: int
    ) -> RecursiveRun[OutputT]:
        single_pass = depth == 0 and self.config.max_requests == 1
        agent = self._build_agent(depth=depth, budget=budget, single_pass=single_pass)
        exhausted: Literal["requests", "tokens"] | None = None
        # Sequential: tools mutate shared deps (e.g. a skillbook) in the order the model emitted them.
        with Agent.parallel_tool_call_execution_mode("sequential"):
            async with agent.iter(prompt, deps=deps, usage=usage, usage_limits=budget.limits()) as agent_run:
                try:
                    async for _ in agent_run:
                        pass
                except UsageLimitExceeded:
                    # Raised outside this block: pydantic-ai re-raises the run's own error from a context exit.
                    exhausted = budget.exhausted_limit(usage)
                messages = agent_run.all_messages()
                result = agent_run.result
        if exhausted == "requests" and single_pass:
            return RecursiveRun(output=None, finished=False, usage=copy.copy(usage), messages=messages)
        if exhausted is not None:
            cap = budget.requests if exhausted == "requests" else budget.tokens
            raise BudgetExhausted(usage=copy.copy(usage), limit=exhausted, cap=cap or 0)
        assert result is not None
        return RecursiveRun(output=result.output, finished=True, usage=copy.copy(usage), messages=messages)

    def _build_agent(self, *, depth: int, budget: _Budget, single_pass: bool) -> Agent[DepsT, Any]:
        tools: list[Tool[DepsT] | Callable[..., Any]] = list(self._tools)
        if depth < self.config.max_depth and not single_pass:
            tools.append(self._recurse_tool(depth, budget))
        instructions = f"{self._instructions}\n\n{SINGLE_PASS_NOTE}" if single_pass else self._instructions
        agent: Agent[DepsT, Any] = Agent(
            self._model,
            name=self.span_label,
            instructions=instructions,
            deps_type=self._deps_type,
            output_type=self._output_type,
            tools=tools,
            retries={"tools": self.config.tool_retries},
            end_strategy="exhaustive",
            model_settings=self.settings.model_settings(),
            capabilities=self._capabilities(),
        )
        agent.instrument = self._instrument
        return agent

    def _capabilities(self) -> list[AbstractCapability[DepsT]]:
        # Valid Unicode first: the compactor sends the history to a summary model too.
        capabilities: list[AbstractCapability[DepsT]] = [ProcessHistory(valid_unicode_messages)]
        if self._compactor is not None:
            capabilities.append(ProcessHistory(self._compactor))
        if self._prepare_output_tools is not None:
            capabilities.append(PrepareOutputTools(self._prepare_output_tools))
        return capabilities

    def _recurse_tool(self, depth: int, parent_budget: _Budget) -> Tool[DepsT]:
        async def recurse(ctx: RunContext[DepsT], task: str) -> Any:
            """Delegate a self-contained sub-task to a child session with the same tools.

            The child gets a share of the remaining budget and returns its final output.
            """
            return await self._run_child(ctx, task, depth=depth + 1, parent_budget=parent_budget)

        return Tool(recurse, name=RECURSE_TOOL_NAME, takes_ctx=True)

    async def _run_child(self, ctx: RunContext[DepsT], task: str, *, depth: int, parent_budget: _Budget) -> Any:
        usage = ctx.usage
        fraction = self.config.child_budget_fraction
        child_requests = math.floor((parent_budget.requests - usage.requests) * fraction)
        child_tokens = (
            math.floor((parent_budget.tokens - usage.total_tokens) * fraction)
            if parent_budget.tokens is not None
            else None
        )
        if child_requests < 1 or (child_tokens is not None and child_tokens < 1):
            return "No budget left for a child session; continue the task yourself."
        budget = _Budget(
            requests=usage.requests + child_requests,
            tokens=usage.total_tokens + child_tokens if child_tokens is not None else None,
        )
        with tracing.span(
            f"{self.span_label}.child",
            span_label=self.span_label,
            depth=depth,
            task=task,
            request_budget=child_requests,
            token_budget=child_tokens,
        ) as span:
            try:
                child = await self._run_loop(task, deps=ctx.deps, usage=usage, budget=budget, depth=depth)
            except BudgetExhausted as exc:
                span.set_attribute("exhausted", exc.limit)
                return f"The child session ran out of its {exc.limit} budget before finishing; it produced no result."
        return child.output
