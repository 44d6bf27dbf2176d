"""OTLP JSON spans: an `ExportTraceServiceRequest` document (`{"resourceSpans": [...]}`) read as
untrusted input into `OtlpSpan`s, each able to say which GenAI operation it records (an agent run,
a tool call, a model request). `_otel` builds traces from them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ace.untrusted import UntrustedInputError, quote

__all__ = ["OtlpSpan", "is_otlp_document", "otlp_spans"]

_AGENT_SPAN_NAMES = ("invoke_agent ", "agent run")
_TOOL_SPAN_NAMES = ("execute_tool ", "running tool")
_CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")


@dataclasses.dataclass(frozen=True)
class OtlpSpan:
    """The parts of one OTLP span a trace is built from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    attributes: Mapping[str, Any]
    error: str | None
    """The status message of a span whose status is ERROR ("" without message); None otherwise."""
    order: int
    """Position in the file (line, then place in the line), the tie-breaker of equal start times."""

    @property
    def operation(self) -> str:
        return str(self.attributes.get("gen_ai.operation.name") or "")

    @property
    def is_agent_run(self) -> bool:
        return self.operation == "invoke_agent" or self.name.startswith(_AGENT_SPAN_NAMES)

    @property
    def is_tool_call(self) -> bool:
        return self.operation == "execute_tool" or self.name.startswith(_TOOL_SPAN_NAMES)

    @property
    def is_model_request(self) -> bool:
        return self.operation in _CHAT_OPERATIONS or self.name.startswith("chat ")


def is_otlp_document(document: Any) -> bool:
    """True for an OTLP JSON ExportTraceServiceRequest (an object with `resourceSpans`)."""
    return isinstance(document, Mapping) and "resourceSpans" in document


def otlp_spans(document: Any, *, order: int = 0) -> list[OtlpSpan]:
    """The spans of one ExportTraceServiceRequest. Raises `UntrustedInputError` naming the first
    defect (not an object with a `resourceSpans` list, a span without hex `traceId` / `spanId`, ...)."""
    if not is_otlp_document(document):
        raise UntrustedInputError(f'not an OTLP ExportTraceServiceRequest (no "resourceSpans"): {quote(document)}')
    spans: list[OtlpSpan] = []
    for resource in _list(document["resourceSpans"], "resourceSpans"):
        for scope in _list(_object(resource, "a resourceSpans item").get("scopeSpans", []), "scopeSpans"):
            for raw in _list(_object(scope, "a scopeSpans item").get("spans", []), "spans"):
                spans.append(_span(_object(raw, "a span"), order * 1_000_000 + len(spans)))
    return spans


# -- spans -----------------------------------------------------------------------------------------


def _span(raw: Mapping[str, Any], order: int) -> OtlpSpan:
    trace_id, span_id = _hex(raw.get("traceId"), "traceId"), _hex(raw.get("spanId"), "spanId")
    parent = raw.get("parentSpanId")
    parent_id = _hex(parent, "parentSpanId") if parent else None
    status: Mapping[str, Any] = raw["status"] if isinstance(raw.get("status"), Mapping) else {}
    error = str(status.get("message") or "") if status.get("code") in _STATUS_ERROR else None
    try:
        start = int(raw.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        raise UntrustedInputError(
            f"span {span_id} has a startTimeUnixNano that is not a number: {quote(raw.get('startTimeUnixNano'))}"
        ) from None
    name = raw.get("name")
    return OtlpSpan(
        trace_id,
        span_id,
        parent_id,
        name if isinstance(name, str) else "",
        start,
        _attributes(raw.get("attributes", [])),
        error,
        order,
    )


def _attributes(raw: Any) -> dict[str, Any]:
    attributes: dict[str, Any] = {}
    for item in _list(raw, "attributes"):
        item = _object(item, "an attribute")
        if isinstance(item.get("key"), str):
            attributes[item["key"]] = _value(item.get("value"))
    return attributes


def _value(value: Any) -> Any:
    """An OTLP AnyValue as plain data (intValue is a decimal string in OTLP JSON)."""
    if not isinstance(value, Mapping):
        return None
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    for key in ("boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if isinstance(value.get("arrayValue"), Mapping):
        return [_value(item) for item in value["arrayValue"].get("values", []) or []]
    if isinstance(value.get("kvlistValue"), Mapping):
        return {
            str(kv.get("key")): _value(kv.get("value"))
            for kv in value["kvlistValue"].get("values", []) or []
            if isinstance(kv, Mapping)
        }
    return None


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise UntrustedInputError(f"{what} is not a list: {quote(value)}")
    return value


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise UntrustedInputError(f"{what} is not an object: {quote(value)}")
    return value


def _hex(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value or any(c not in "0123456789abcdefABCDEF" for c in value):
        raise UntrustedInputError(f"a span's {what} is not a hex id: {quote(value)}")
    return value.lower()
