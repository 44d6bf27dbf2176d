"""Read an OTLP JSON lines span file (as `FileSpanExporter` writes it) into compact `Span` records.

The file is read one line at a time and each span keeps only what the reports use: its ids, name,
times, failure and the `ace.*` / `gen_ai.*` / tool-content attributes (long strings cut), so memory
grows with the number of spans, not with the size of the JSON (message histories are dropped).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ace.errors import AceError
from ace.untrusted import open_regular_file

__all__ = ["MAX_TEXT_CHARS", "ReadResult", "Span", "SpanFileError", "read_spans"]

MAX_TEXT_CHARS = 8000
"""A kept string attribute longer than this is cut, with a note of how much was dropped."""

_CONTENT_KEYS = frozenset({"tool_arguments", "tool_response", "final_result"})
_DROPPED_GEN_AI_KEYS = frozenset(
    {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.definitions"}
)
_ERROR_CODES = frozenset({2, "2", "STATUS_CODE_ERROR"})


class SpanFileError(AceError):
    """The file is not OTLP JSON lines, or a complete line in it is not a valid export request.

    The message names the file and line; fix the path or regenerate the file.
    """


@dataclass(slots=True)
class Span:
    """One span of the file, reduced to what the reports read."""

    key: tuple[str, str]
    """(traceId, spanId): span ids are only unique within their OTel trace."""
    parent: tuple[str, str] | None
    """The parent's key, None for a root span (the parent may be missing from the file)."""
    name: str
    start: int
    """startTimeUnixNano."""
    end: int
    """endTimeUnixNano."""
    attributes: dict[str, Any]
    """Kept attributes, decoded to Python values (ints, floats, bools, strings, lists)."""
    error: str | None
    """None when the span succeeded; else the status message or exception, or "error"."""
    line: int
    """The 1-based line of the file the span came from."""


@dataclass
class ReadResult:
    """The spans of a file and the lines that were skipped as incomplete JSON."""

    spans: list[Span]
    skipped_lines: list[int] = field(default_factory=list)
    """Line numbers that were not complete JSON (a killed run leaves its last line half-written)."""


def read_spans(path: Path) -> ReadResult:
    """Read every span of `path`; raises `SpanFileError` for a file that is not OTLP JSON lines."""
    try:
        handle = open_regular_file(path)
    except OSError as exc:
        raise SpanFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    result = ReadResult(spans=[])
    seen_request = False
    with handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                request = json.loads(raw)
            except ValueError:
                if not seen_request:
                    raise SpanFileError(f"{path} line {number}: not JSON, so not an OTLP JSON span file") from None
                result.skipped_lines.append(number)
                continue
            if not isinstance(request, dict) or "resourceSpans" not in request:
                raise SpanFileError(
                    f"{path} line {number}: not an OTLP export request (expected an object with resourceSpans)"
                )
            seen_request = True
            try:
                result.spans.extend(_spans_of(request, number))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise SpanFileError(f"{path} line {number}: malformed OTLP span ({_describe(exc)})") from None
    if not seen_request:
        raise SpanFileError(f"{path}: empty, no spans")
    return result


def _describe(exc: Exception) -> str:
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)


def _spans_of(request: dict[str, Any], line: int) -> Iterator[Span]:
    for resource_spans in request["resourceSpans"]:
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for raw in scope_spans.get("spans", ()):
                # Interned: every span of a trace repeats its id, and every span repeats the same keys.
                trace_id, parent_id = sys.intern(raw["traceId"]), raw.get("parentSpanId")
                yield Span(
                    key=(trace_id, raw["spanId"]),
                    parent=(trace_id, parent_id) if parent_id else None,
                    name=sys.intern(str(raw["name"])),
                    start=int(raw["startTimeUnixNano"]),
                    end=int(raw.get("endTimeUnixNano") or raw["startTimeUnixNano"]),
                    attributes=_kept_attributes(raw.get("attributes", ())),
                    error=_error_of(raw),
                    line=line,
                )


def _kept_attributes(raw: Any) -> dict[str, Any]:
    kept = {}
    for item in raw:
        key = sys.intern(item["key"])
        if (
            key.startswith("ace.")
            or key in _CONTENT_KEYS
            or (key.startswith("gen_ai.") and key not in _DROPPED_GEN_AI_KEYS)
        ):
            kept[key] = _cut(_decode_value(item.get("value", {}), key))
    return kept


def _decode_value(value: dict[str, Any], key: str) -> Any:
    if not isinstance(value, dict):
        raise ValueError(f"attribute {key!r} has a value that is not an object")
    if "stringValue" in value:
        return str(value["stringValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_decode_value(item, key) for item in value["arrayValue"].get("values", ())]
    if "kvlistValue" in value:
        return {kv["key"]: _decode_value(kv.get("value", {}), key) for kv in value["kvlistValue"].get("values", ())}
    if "bytesValue" in value:
        return str(value["bytesValue"])
    if value:
        raise ValueError(f"attribute {key!r} has an unknown value kind {sorted(value)[0]!r}")
    return None


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        return f"{value[:MAX_TEXT_CHARS]}... [{len(value) - MAX_TEXT_CHARS} more chars]"
    return value


def _error_of(raw: dict[str, Any]) -> str | None:
    status = raw.get("status") or {}
    exception = next((event for event in raw.get("events", ()) if event.get("name") == "exception"), None)
    if status.get("code") not in _ERROR_CODES and exception is None:
        return None
    if status.get("message"):
        return str(status["message"])
    if exception is not None:
        attributes = {
            item["key"]: _decode_value(item.get("value", {}), item["key"]) for item in exception.get("attributes", ())
        }
        kind, message = attributes.get("exception.type"), attributes.get("exception.message")
        text = ": ".join(str(part) for part in (kind, message) if part)
        if text:
            return text
    return "error"
