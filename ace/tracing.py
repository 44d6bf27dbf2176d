"""The library's spans: quiet unless the application configured logfire or OpenTelemetry.

`span(name, **attributes)` opens a span through logfire when the application called
`logfire.configure()`, otherwise through the OpenTelemetry API's global tracer - a no-op unless the
application installed a tracer provider. So a library user sees no warning and nothing leaves the
process until they configure one or the other.

`span_attributes(...)` adds attributes to every span opened inside it (in this task or thread):
the pipeline uses it so that a SkillManager session or a skillbook mutation deep inside a step
carries the step's `ace.trace_uid`, `ace.sample_id` and `ace.epoch` without being told.
`no_spans()` opens none inside it: for scratch work on a throwaway skillbook, whose memory
operations would otherwise read as the real skillbook's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from opentelemetry import trace

if TYPE_CHECKING:
    from pydantic_ai.models.instrumented import InstrumentationSettings

__all__ = [
    "EPOCH",
    "MEMORY_RECORD_COUNT",
    "MEMORY_RECORD_ID",
    "SKILL_IDS",
    "SAMPLE_ID",
    "SAMPLE_INDEX",
    "STEP",
    "TRACE_UID",
    "SpanHandle",
    "capture_content",
    "instrumentation",
    "memory_span",
    "no_spans",
    "span",
    "span_attributes",
]

TRACE_UID = "ace.trace_uid"
"""The `source_system:trace_id` of the trace a span serves."""
SAMPLE_ID = "ace.sample_id"
"""The id of the sample a span serves (stable across epochs)."""
SAMPLE_INDEX = "ace.sample_index"
"""The sample's 0-based position in its pipeline run."""
EPOCH = "ace.epoch"
"""The 1-based training epoch."""
STEP = "ace.step"
"""The pipeline step's name."""

MEMORY_RECORD_ID = "gen_ai.memory.record.id"
"""OpenTelemetry GenAI memory convention: the record (skill id) an operation touched."""
MEMORY_RECORD_COUNT = "gen_ai.memory.record.count"
"""OpenTelemetry GenAI memory convention: records touched or returned (0: a search found nothing)."""
SKILL_IDS = "ace.skill_ids"
"""The skill ids a search returned or a counter update touched."""

MemoryOperation = Literal["create_memory", "update_memory", "delete_memory", "search_memory"]

_content_captured = False
_INHERITED: ContextVar[Mapping[str, Any]] = ContextVar("ace_span_attributes", default=MappingProxyType({}))
_SILENCED: ContextVar[bool] = ContextVar("ace_no_spans", default=False)
_OTEL_TRACER = trace.get_tracer("ace")


class SpanHandle(Protocol):
    """What a span opened by `span` lets its body do."""

    def set_attribute(self, key: str, value: Any) -> None: ...

    # A dict, not any Mapping: logfire's span (one of the two implementations) accepts only a dict.
    def set_attributes(self, attributes: dict[str, Any]) -> None: ...

    # `escaped` by keyword: logfire's span takes other arguments before it.
    def record_exception(self, exception: BaseException, *, escaped: bool = False) -> None: ...


def span(name: str, /, **attributes: Any) -> AbstractContextManager[SpanHandle]:
    """Open a span called `name` (used as is: no template) with `attributes` plus the inherited
    ones (`span_attributes`); None values are left out. Exceptions escaping it are recorded.
    Inside `no_spans()` nothing is opened."""
    if _SILENCED.get():
        return nullcontext(_NO_SPAN)
    merged = {**_INHERITED.get(), **{key: value for key, value in attributes.items() if value is not None}}
    logfire = _configured_logfire()
    if logfire is not None:
        return logfire.span(name.replace("{", "{{").replace("}", "}}"), _span_name=name, **merged)
    return _otel_span(name, merged)


def memory_span(
    operation: MemoryOperation, ace_operation: str, /, **attributes: Any
) -> AbstractContextManager[SpanHandle]:
    """A span in the OpenTelemetry GenAI memory form, named `<operation> skillbook`, with
    `gen_ai.operation.name`, `gen_ai.memory.store.id` = `skillbook` and `ace.skillbook.operation`
    (ADD, UPDATE, TAG, REMOVE, PURGE, ACTIVATE, MARK_USED, SEARCH, MATCH) besides `attributes`."""
    return span(
        f"{operation} skillbook",
        **{
            "gen_ai.operation.name": operation,
            "gen_ai.memory.store.id": "skillbook",
            "ace.skillbook.operation": ace_operation,
        },
        **attributes,
    )


@contextmanager
def span_attributes(**attributes: Any) -> Iterator[None]:
    """Give every span opened inside this block `attributes` (None values are left out); nested
    blocks add to and override the outer ones."""
    token = _INHERITED.set(
        {**_INHERITED.get(), **{key: value for key, value in attributes.items() if value is not None}}
    )
    try:
        yield
    finally:
        _INHERITED.reset(token)


@contextmanager
def no_spans() -> Iterator[None]:
    """Open no span of the library inside this block (in this task or thread)."""
    token = _SILENCED.set(True)
    try:
        yield
    finally:
        _SILENCED.reset(token)


def capture_content(enabled: bool = True) -> None:
    """Opt in (or back out) to content in the spans of agents built afterwards: prompts, model
    outputs, tool arguments and tool results (trace text included). Off by default: spans then
    carry names, ids, counts, timings and token usage only."""
    global _content_captured
    _content_captured = enabled


def instrumentation() -> InstrumentationSettings:
    """pydantic-ai instrumentation for the roles' agents: spans through the global OpenTelemetry
    tracer provider (logfire's once configured), content only after `capture_content()`."""
    from pydantic_ai.models.instrumented import InstrumentationSettings

    return InstrumentationSettings(include_content=_content_captured)


def _configured_logfire() -> Any:
    """The logfire module when the application configured it, else None. An application that never
    imported logfire cannot have configured it, so logfire (slow to import) is never imported here."""
    logfire = sys.modules.get("logfire")
    if logfire is None:
        return None
    # logfire has no public "is configured" flag; reading it avoids LogfireNotConfiguredWarning,
    # which a library must not cause. If a logfire release drops it, spans go through logfire.
    return logfire if getattr(logfire.DEFAULT_LOGFIRE_INSTANCE.config, "_initialized", True) else None


@contextmanager
def _otel_span(name: str, attributes: Mapping[str, Any]) -> Iterator[SpanHandle]:
    with _OTEL_TRACER.start_as_current_span(name, attributes=_otel_values(attributes)) as otel_span:
        yield _OtelSpan(otel_span)


class _OtelSpan:
    """An OpenTelemetry span that takes any attribute value (non-primitive ones as JSON)."""

    def __init__(self, otel_span: trace.Span) -> None:
        self._span = otel_span

    def set_attribute(self, key: str, value: Any) -> None:
        self._span.set_attributes(_otel_values({key: value}))

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self._span.set_attributes(_otel_values(attributes))

    def record_exception(self, exception: BaseException, *, escaped: bool = False) -> None:
        self._span.record_exception(exception, attributes={"exception.escaped": escaped})


def _otel_values(attributes: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, (str, bool, int, float)):
            values[key] = value
        elif isinstance(value, (list, tuple, frozenset, set)) and all(isinstance(item, str) for item in value):
            values[key] = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
        else:
            values[key] = json.dumps(value, default=str, sort_keys=True)
    return values


class _NoSpan:
    """The span handle of `no_spans()`: records nothing."""

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        pass

    def record_exception(self, exception: BaseException, *, escaped: bool = False) -> None:
        pass


_NO_SPAN = _NoSpan()
