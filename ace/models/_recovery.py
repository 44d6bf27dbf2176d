"""Recovering from a small model's broken tool calls: `recovering(model)`.

Small local models break the tool-call contract of our roles in two ways: they answer in prose (which
sometimes holds the call written as JSON), or they hit the output-token cap in the middle of a call.
pydantic-ai then spends its retries and fails the run. The wrapper repairs what it can from the text
alone, and otherwise spends at most ONE corrective request per `request` call.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Any, Literal

from pydantic_ai._unsupported_settings import suppress_warnings  # as pydantic-ai resolves 'auto' without sending
from pydantic_ai.messages import (
    BaseToolCallPart,
    ModelMessage,
    ModelRequest,
    ModelRequestAttempt,
    ModelRequestPart,
    ModelResponse,
    RetryInfo,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings, merge_model_settings
from pydantic_ai.tools import ToolDefinition

from ace import tracing
from ace.models._valid_unicode import valid_unicode_messages

__all__ = ["RecoveringModel", "RecoveryEvent", "recovering"]

RecoveryEvent = Literal[
    "truncated_tool_call",
    "prose_recovered_from_text",
    "prose_corrective_turn",
    "unrecovered",
    "duplicate_calls_dropped",
]
"""A key of `RecoveringModel.recoveries`."""

_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_Start = tuple[datetime, float]  # when the first request was sent: wall clock, monotonic


def recovering(model: Model) -> RecoveringModel:
    """`model`, with `request` repairing two failures of small models; `model` itself if it is recovering already.

    - Truncated tool call (`finish_reason == "length"`, some `ToolCallPart`'s arguments not a JSON object): ONE
      follow-up request of the messages + that response + a retried `ToolReturnPart` for each of its calls, the
      cut one naming the `max_tokens` cap. The follow-up's response is returned instead, even when cut again.
    - Prose where a tool call is required (no text output allowed, output or function tools offered, text and
      no tool call in the response): a call is parsed out of the text (fenced JSON blocks first, then top-level
      JSON objects) as `{"name": <tool>, "arguments"|"parameters": {...} or "<json>"}` or as an arguments object
      fitting exactly one tool's parameters (output tools first); it replaces the text parts, `finish_reason`
      becomes "tool_call", the other fields are kept. Otherwise ONE follow-up request carries a mid-conversation
      `SystemPromptPart` (pydantic-ai's voice for its own "call a tool" feedback) naming the tools and the ones
      that finish the task; its text is parsed the same way, else its response is returned unchanged.
    - Prose around tool calls, when only tool calls count: the text parts are dropped (nobody reads them, and
      a small model's preamble would fill its context window turn after turn), and so are repeats of an
      identical call in one response (counted in `duplicate_calls_dropped`).

    A response replaced by a follow-up is recorded in the follow-up's `failed_attempts` (outcome "rejected", its
    usage), so an agent run counts its tokens; the exchange is not in the caller's history. Each repair is a
    `model.recovery` logfire span (`kind`: "truncated_tool_call" | "prose_instead_of_tool_call", `tool_name`,
    `recovered_from_text`, `corrective_turn`, `recovered`) and a count in `RecoveringModel.recoveries`. Other
    responses are returned untouched; `request_stream` is passed through unrepaired (a stream's parts reach the
    caller before the response can be judged), as is everything else, `model_name` and `system` included.
    """
    return model if isinstance(model, RecoveringModel) else RecoveringModel(model)


class RecoveringModel(WrapperModel):
    """`wrapped`, with truncated tool calls and prose instead of a tool call repaired and every response made
    valid Unicode (lone surrogates replaced); see `recovering`."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)
        self.recoveries: Counter[RecoveryEvent] = Counter()
        """What the wrapper did: `truncated_tool_call` counts follow-ups sent for a call cut at the token cap,
        `prose_recovered_from_text` tool calls parsed out of prose (a first answer's or a follow-up's),
        `prose_corrective_turn` follow-ups sent as prose held no usable call, `unrecovered` follow-ups whose
        response was still truncated or still had no tool call, `duplicate_calls_dropped` repeated identical
        calls removed from one response. Updated with no await between read and write,
        so exact for any number of concurrent requests on one event loop; not for loops in several threads."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        started = datetime.now(UTC), time.monotonic()
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        (response,) = valid_unicode_messages([response])
        if response.state != "complete":  # pydantic-ai continues a suspended response; it is not ours to judge
            return response
        if (cut := _truncated_call(response)) is not None:
            response = await self._resend_cut(
                messages, model_settings, model_request_parameters, response, cut, started
            )
        elif _is_prose(response) and (tools := self._required_tools(model_settings, model_request_parameters)):
            response = await self._recover_prose(
                messages, model_settings, model_request_parameters, response, tools, started
            )
        return self._only_distinct_calls(response, model_settings, model_request_parameters)

    def _only_distinct_calls(
        self, response: ModelResponse, settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        """When only tool calls count, drop the text around them (nobody reads it, and a small model's
        preamble would fill its context window turn after turn) and repeats of an identical call (a small
        model emits the same call a dozen times in one response)."""
        calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
        if not calls or self._required_tools(settings, params) is None:
            return response
        seen: set[tuple[str, str]] = set()
        kept: list[Any] = []
        for part in response.parts:
            if isinstance(part, TextPart):
                continue
            if isinstance(part, ToolCallPart):
                key = (part.tool_name, part.args_as_json_str())
                if key in seen:
                    continue
                seen.add(key)
            kept.append(part)
        if len(kept) == len(response.parts):
            return response
        if len(seen) < len(calls):
            self.recoveries["duplicate_calls_dropped"] += len(calls) - len(seen)
        return replace(response, parts=kept)

    def _required_tools(self, settings: ModelSettings | None, params: ModelRequestParameters) -> _Tools | None:
        """The tools the response had to call, or None when text was an acceptable answer."""
        if params.output_mode == "auto":  # resolve it as the wrapped model did: it may have chosen native output
            with suppress_warnings():
                _, params = self.wrapped.prepare_request(settings, params)
        if params.allow_text_output or not (params.output_tools or params.function_tools):
            return None
        return _Tools(params.output_tools, params.function_tools)

    async def _resend_cut(
        self,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        response: ModelResponse,
        cut: ToolCallPart,
        started: _Start,
    ) -> ModelResponse:
        cap = (merge_model_settings(self.wrapped.settings, settings) or {}).get("max_tokens")
        limit = f"{cap} tokens" if cap else "the output token limit"
        retry = (
            f"Your call to {cut.tool_name} was cut off at {limit}, so its arguments are incomplete. Send the "
            "call again, shorter: keep every argument brief and leave out anything the task does not need."
        )
        not_run = "Not run: your response was cut off. Send this call again if it is still needed."
        answers: list[ModelRequestPart] = [
            ToolReturnPart(
                call.tool_name,
                retry if call is cut else not_run,
                call.tool_call_id,
                outcome="retried",
                retry=RetryInfo(cause="validation_error") if call is cut else None,
            )
            for call in response.parts
            if isinstance(call, ToolCallPart)
        ]
        with tracing.span(
            "model.recovery",
            kind="truncated_tool_call",
            tool_name=cut.tool_name,
            recovered_from_text=False,
            corrective_turn=True,
        ) as span:
            self.recoveries["truncated_tool_call"] += 1
            followup = await self._follow_up(messages, settings, params, response, answers, started)
            recovered = _truncated_call(followup) is None
            if not recovered:
                self.recoveries["unrecovered"] += 1
            span.set_attribute("recovered", recovered)
        return followup

    async def _recover_prose(
        self,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        response: ModelResponse,
        tools: _Tools,
        started: _Start,
    ) -> ModelResponse:
        with tracing.span("model.recovery", kind="prose_instead_of_tool_call") as span:
            fixed = _with_call_from_text(response, tools)
            corrective, result = fixed is None, fixed or response
            if fixed is None:
                self.recoveries["prose_corrective_turn"] += 1
                feedback = SystemPromptPart(tools.feedback())  # our fixed words, so the harness's voice
                result = await self._follow_up(messages, settings, params, response, [feedback], started)
                fixed = _with_call_from_text(result, tools) if _is_prose(result) else None
                result = fixed or result
            calls = [part.tool_name for part in result.parts if isinstance(part, ToolCallPart)]
            recovered = bool(calls) and _truncated_call(result) is None
            if fixed is not None:
                self.recoveries["prose_recovered_from_text"] += 1
            if not recovered:
                self.recoveries["unrecovered"] += 1
            span.set_attributes(
                {
                    "recovered_from_text": fixed is not None,
                    "corrective_turn": corrective,
                    "recovered": recovered,
                    "tool_name": calls[0] if calls else "",
                }
            )
        return result

    async def _follow_up(
        self,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        response: ModelResponse,
        parts: list[ModelRequestPart],
        started: _Start,
    ) -> ModelResponse:
        """The wrapped model's answer to `messages` + `response` + a request of `parts`, carrying `response` as a
        rejected attempt so that an agent run counts its tokens."""
        instructions = next(
            (
                message.instructions
                for message in reversed(messages)
                if isinstance(message, ModelRequest) and message.instructions is not None
            ),
            None,
        )
        request = ModelRequest(parts, instructions=instructions, timestamp=datetime.now(UTC))
        # `messages` arrive prepared, and preparing is not idempotent (notes would repeat): only the new tail.
        tail = self.wrapped.prepare_messages([response, request], params)
        rejected = ModelRequestAttempt(
            model_name=response.model_name or self.model_name,
            provider_name=response.provider_name or self.system,
            outcome="rejected",
            timestamp=started[0],
            duration=timedelta(seconds=time.monotonic() - started[1]),
            usage=response.usage,
        )
        followup = await self.wrapped.request([*messages, *tail], settings, params)
        return replace(
            followup, failed_attempts=[*(response.failed_attempts or ()), rejected, *(followup.failed_attempts or ())]
        )


class _Tools:
    """The tools a response had to call from: output tools finish the task, function tools continue it."""

    def __init__(self, output: list[ToolDefinition], function: list[ToolDefinition]) -> None:
        self.output, self.function = output, function
        self.names = [tool.name for tool in [*function, *output]]

    def feedback(self) -> str:
        """The corrective message for prose: which tools there are, which finish the task, reply with a call."""
        finishing = " or ".join(tool.name for tool in self.output)
        finish = f" Call {finishing} to finish the task with your answer." if finishing else ""
        return (
            f"You answered in prose, but this step needs a tool call. The tools are: {', '.join(self.names)}."
            f"{finish} Reply with only the tool call, no other text."
        )

    def call_in(self, obj: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """`(tool name, arguments)` that `obj` stands for, or None when it fits no tool, or several."""
        if isinstance(obj.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
            obj = obj["function"]
        name, args = obj.get("name"), obj.get("arguments", obj.get("parameters"))
        if isinstance(args, str):
            args = next(_json_objects(args.strip()), None)
        if isinstance(name, str) and name in self.names and isinstance(args, dict):
            return name, args
        for group in (self.output, self.function):  # an output tool wins over a function tool
            fitting = [tool.name for tool in group if _fits(obj, tool)]
            if len(fitting) == 1:
                return fitting[0], obj
            if fitting:
                return None  # several tools take these arguments: not ours to guess
        return None


def _truncated_call(response: ModelResponse) -> ToolCallPart | None:
    """The first tool call of a response cut off at the token cap whose arguments are not a JSON object."""
    if response.finish_reason == "length":
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                try:
                    part.args_as_dict(raise_if_invalid=True)
                except (ValueError, AssertionError):
                    return part
    return None


def _is_prose(response: ModelResponse) -> bool:
    return bool((response.text or "").strip()) and not any(isinstance(p, BaseToolCallPart) for p in response.parts)


def _with_call_from_text(response: ModelResponse, tools: _Tools) -> ModelResponse | None:
    """`response` with its text parts replaced by the tool call they hold, or None when they hold none."""
    text = response.text or ""
    fenced = (obj for block in _FENCE.findall(text) for obj in _json_objects(block))
    for obj in chain(fenced, _json_objects(text)):
        if (call := tools.call_in(obj)) is not None:
            kept = [part for part in response.parts if not isinstance(part, TextPart)]
            return replace(response, parts=[*kept, ToolCallPart(*call)], finish_reason="tool_call")
    return None


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """The top-level JSON objects in `text`, in order; objects nested in one already found are not repeated."""
    decoder, start = json.JSONDecoder(), text.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            yield obj
        start = text.find("{", end)


def _fits(args: dict[str, Any], tool: ToolDefinition) -> bool:
    """Whether `args` are some of `tool`'s parameters, all the required ones among them."""
    keys, schema = set(args), tool.parameters_json_schema
    return bool(keys) and keys <= set(schema.get("properties", {})) and set(schema.get("required", ())) <= keys
