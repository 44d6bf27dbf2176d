"""History compaction for long tool loops, run as a pydantic-ai history processor.

Stage 1 replaces the contents of old tool returns (outside the recent window) with a short
placeholder. If the estimate is still over budget, stage 2 asks a model to summarise the old part
and folds that summary into the first request (which keeps the task), so the history stays a valid
request/response alternation with every tool return next to its call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from pydantic_ai import Agent, RunContext
from pydantic_ai.messages import (
    BaseToolReturnPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings
from pydantic_ai.usage import UsageLimits

from ace import tracing

__all__ = ["HistoryCompactor", "estimate_tokens", "render_messages"]

_ToolReturnT = TypeVar("_ToolReturnT", bound=BaseToolReturnPart)

CHARS_PER_TOKEN = 4
PLACEHOLDER_PREFIX = "[tool result elided to save context"
SUMMARY_PREFIX = "Summary of the earlier part of this session (older messages were compacted):"
SUMMARY_INSTRUCTIONS = (
    "You compress the history of an agent's tool-using session. Write a faithful, compact summary of "
    "what was done and learned: tool calls made, key results (ids, numbers, names), decisions, and what "
    "remains open. Do not invent anything. Plain text, at most 300 words."
)


def estimate_tokens(messages: Sequence[ModelMessage]) -> int:
    """Rough token count of `messages`: characters of every part's content / 4."""
    return sum(len(_part_text(part)) for message in messages for part in message.parts) // CHARS_PER_TOKEN


def render_messages(messages: Sequence[ModelMessage]) -> str:
    """Plain-text transcript of `messages`, one line per part, for a summarising model."""
    lines = []
    for message in messages:
        role = "assistant" if isinstance(message, ModelResponse) else "user/tools"
        for part in message.parts:
            text = _part_text(part)
            if text:
                lines.append(f"[{role} {part.part_kind}] {text}")
    return "\n".join(lines)


class HistoryCompactor:
    """A pydantic-ai history processor that keeps the estimated history under `budget_tokens`.

    `keep_recent` latest messages are never touched. `summary_model` writes the stage-2 summary; its
    usage is added to the session usage (`ctx.usage`) and its requests carry `model_settings`.
    `span_label` names the `{label}.compaction` span.
    """

    def __init__(
        self,
        *,
        budget_tokens: int,
        keep_recent: int,
        summary_model: Model,
        span_label: str,
        model_settings: ModelSettings | None = None,
    ) -> None:
        self._budget_tokens = budget_tokens
        self._keep_recent = keep_recent
        self._summariser = Agent(
            summary_model, instructions=SUMMARY_INSTRUCTIONS, output_type=str, model_settings=model_settings
        )
        self._span_label = span_label

    async def __call__(self, ctx: RunContext[object], messages: list[ModelMessage]) -> list[ModelMessage]:
        before = estimate_tokens(messages)
        if before <= self._budget_tokens:
            return messages
        with tracing.span(
            f"{self._span_label}.compaction",
            span_label=self._span_label,
            estimated_tokens=before,
            budget_tokens=self._budget_tokens,
        ) as span:
            compacted = self._elide_old_tool_returns(messages)
            stage = "tool_returns"
            if estimate_tokens(compacted) > self._budget_tokens:
                summarised = await self._summarise_old_messages(ctx, compacted)
                if summarised is not None:
                    compacted, stage = summarised, "summary"
            after = estimate_tokens(compacted)
            # Everything left may sit in the recent window; the span says so rather than hiding it.
            span.set_attributes(
                {"stage": stage, "estimated_tokens_after": after, "over_budget_after": after > self._budget_tokens}
            )
        return compacted

    def _elide_old_tool_returns(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        old_end = max(len(messages) - self._keep_recent, 0)
        return [_elide_tool_returns(m) if i < old_end else m for i, m in enumerate(messages)]

    async def _summarise_old_messages(
        self, ctx: RunContext[object], messages: list[ModelMessage]
    ) -> list[ModelMessage] | None:
        """`messages` with the part before the recent window folded into a summary; None when
        there is no such part to summarise."""
        cut = self._summary_cut(messages)
        if cut is None:
            return None
        first = messages[0]
        assert isinstance(first, ModelRequest)
        # An earlier summary is folded into the new one, so the first request holds one summary at most.
        earlier = [part for part in first.parts if _is_summary(part)]
        task_parts = [part for part in first.parts if not _is_summary(part)]
        text = "\n\n".join([*(_part_text(part) for part in earlier), render_messages(messages[1:cut])])
        result = await self._summariser.run(text, usage=ctx.usage, usage_limits=UsageLimits(request_limit=None))
        summary = UserPromptPart(f"{SUMMARY_PREFIX}\n{result.output}")
        return [replace(first, parts=[*task_parts, summary]), *messages[cut:]]

    def _summary_cut(self, messages: list[ModelMessage]) -> int | None:
        """Index where the kept tail starts: a model response, so no kept tool return loses its call."""
        cut = len(messages) - self._keep_recent
        while cut > 1 and not isinstance(messages[cut], ModelResponse):
            cut -= 1
        if cut <= 1 or not isinstance(messages[0], ModelRequest):
            return None
        return cut


def _is_summary(part: object) -> bool:
    return (
        isinstance(part, UserPromptPart) and isinstance(part.content, str) and part.content.startswith(SUMMARY_PREFIX)
    )


def _elide_tool_returns(message: ModelMessage) -> ModelMessage:
    if not isinstance(message, ModelRequest):
        return message
    parts = [_elided(part) if isinstance(part, BaseToolReturnPart) else part for part in message.parts]
    return replace(message, parts=parts)


def _elided(part: _ToolReturnT) -> _ToolReturnT:
    text = _part_text(part)
    if text.startswith(PLACEHOLDER_PREFIX):
        return part
    return replace(part, content=f"{PLACEHOLDER_PREFIX}: {len(text)} characters from {part.tool_name}]")


def _part_text(part: object) -> str:
    if isinstance(part, ToolCallPart):
        return f"{part.tool_name}({part.args_as_json_str()})"
    if isinstance(part, BaseToolReturnPart):
        return part.model_response_str()
    content = getattr(part, "content", None)
    if content is None:
        return ""
    return content if isinstance(content, str) else str(content)
