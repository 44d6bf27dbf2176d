"""The three questions `ace-eval spans` answers, each as one JSON-ready dict (the text is drawn from it).

`skill_report`: every memory span that names one skill, in time order, with who caused it.
`trace_report`: what the learning tail did with one trace (reflection, skill-manager tool calls, steps).
`summary_report`: counts over the whole file (sessions, tool calls, failures, tokens per role, traces).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import UTC, datetime
from typing import Any

from ace_eval.spans._index import (
    OTHER_ROLE,
    SESSION_ROLES,
    SpanIndex,
    is_chat,
    is_memory,
    is_step,
    is_tool_call,
    skill_ids,
)
from ace_eval.spans._reader import ReadResult, Span

__all__ = ["iso_time", "skill_report", "summary_report", "trace_report"]

_COUNTED = {
    "ADD": "created",
    "UPDATE": "updated",
    "TAG": "tagged",
    "MARK_USED": "used",
    "REMOVE": "removed",
    "PURGE": "removed",
    "SEARCH": "retrieved",
    "MATCH": "retrieved",
}
_FALLBACK_OPERATION = {
    "create_memory": "ADD",
    "update_memory": "UPDATE",
    "delete_memory": "REMOVE",
    "search_memory": "SEARCH",
}
_READS = frozenset({"SEARCH", "MATCH"})
FAILED_SHOWN = 5
"""How many failed spans the summary lists by name."""


def iso_time(unix_nano: int) -> str:
    """`unix_nano` as UTC ISO 8601 with milliseconds, e.g. 2025-01-02T12:00:01.123Z."""
    moment = datetime.fromtimestamp(unix_nano / 1e9, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _operation(span: Span) -> str:
    operation = span.attributes.get("ace.skillbook.operation")
    return str(operation) if operation else _FALLBACK_OPERATION[span.attributes["gen_ai.operation.name"]]


def _mentions(span: Span, skill_id: str) -> bool:
    return span.attributes.get("gen_ai.memory.record.id") == skill_id or skill_id in skill_ids(span)


def _tool_name(span: Span) -> str:
    return str(span.attributes.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool "))


def _arguments(span: Span) -> str | None:
    value = span.attributes.get("tool_arguments", span.attributes.get("gen_ai.tool.call.arguments"))
    return None if value is None else str(value)


def _session_label(span: Span | None) -> str | None:
    return None if span is None else span.name


def skill_report(index: SpanIndex, skill_id: str) -> dict[str, Any] | None:
    """Every memory span naming `skill_id`, oldest first; None when no span mentions it."""
    events = []
    counts: Counter[str] = Counter({name: 0 for name in dict.fromkeys(_COUNTED.values())})
    for span in index.spans:
        if not (is_memory(span) and _mentions(span, skill_id)):
            continue
        operation = _operation(span)
        counts[_COUNTED.get(operation, "other")] += 1
        tool = index.enclosing_tool_call(span)
        events.append(
            {
                "time": iso_time(span.start),
                "operation": operation,
                "tag": span.attributes.get("ace.tag"),
                "session": _session_label(index.enclosing_session(span)),
                "trace_uid": index.inherited(span, "ace.trace_uid"),
                "epoch": index.inherited(span, "ace.epoch"),
                "tool": None if tool is None else _tool_name(tool),
                "tool_call_id": None if tool is None else tool.attributes.get("gen_ai.tool.call.id"),
                "arguments": None if tool is None else _arguments(tool),
                "error": span.error,
            }
        )
    if not events:
        return None
    return {"skill": skill_id, "counts": dict(counts), "events": events}


def _duration(span: Span) -> float:
    return round((span.end - span.start) / 1e9, 3)


def _tool_call(span: Span) -> dict[str, Any]:
    return {
        "time": iso_time(span.start),
        "tool": _tool_name(span),
        "call_id": span.attributes.get("gen_ai.tool.call.id"),
        "status": "error" if span.error else "ok",
        "error": span.error,
        "arguments": _arguments(span),
    }


def _skills(memory_spans: list[Span]) -> dict[str, Any]:
    touched: dict[str, list[str]] = defaultdict(list)
    retrieved: dict[str, None] = {}
    searches = 0
    for span in memory_spans:
        operation = _operation(span)
        if operation in _READS:
            searches += 1
            retrieved.update(dict.fromkeys(skill_ids(span)))
            continue
        tag = span.attributes.get("ace.tag")
        label = f"{operation} {tag}" if tag else operation
        record = span.attributes.get("gen_ai.memory.record.id")
        for skill in [record] if record else skill_ids(span):
            touched[str(skill)].append(label)
    return {
        "touched": [{"id": skill, "operations": operations} for skill, operations in touched.items()],
        "searches": searches,
        "retrieved": list(retrieved),
    }


def _session(index: SpanIndex, span: Span) -> dict[str, Any]:
    below = index.descendants(span)
    chats = [s for s in below if is_chat(s)]
    final_result = next(
        (
            s.attributes["final_result"]
            for s in below
            if s.name.startswith("invoke_agent") and "final_result" in s.attributes
        ),
        None,
    )
    return {
        "name": span.name,
        "role": SESSION_ROLES[span.name],
        "time": iso_time(span.start),
        "duration_s": _duration(span),
        "epoch": index.inherited(span, "ace.epoch"),
        "sample_id": index.inherited(span, "ace.sample_id"),
        "status": "error" if span.error else "ok",
        "error": span.error,
        "requests": len(chats),
        "input_tokens": sum(int(s.attributes.get("gen_ai.usage.input_tokens", 0)) for s in chats),
        "output_tokens": sum(int(s.attributes.get("gen_ai.usage.output_tokens", 0)) for s in chats),
        "final_result": final_result,
        "tool_calls": [_tool_call(s) for s in below if is_tool_call(s)],
        "skills": _skills([s for s in below if is_memory(s)]),
    }


def _step(index: SpanIndex, span: Span) -> dict[str, Any]:
    return {
        "step": span.attributes.get("ace.step") or span.name.removeprefix("pipeline.step "),
        "time": iso_time(span.start),
        "duration_s": _duration(span),
        "sample_id": span.attributes.get("ace.sample_id"),
        "sample_index": span.attributes.get("ace.sample_index"),
        "epoch": span.attributes.get("ace.epoch"),
        "status": "error" if span.error else "ok",
        "error": span.error,
    }


def trace_report(index: SpanIndex, trace_uid: str) -> dict[str, Any] | None:
    """The sessions and pipeline steps of one trace; None when no span carries `trace_uid`."""
    sessions = [s for s in index.spans if s.name in SESSION_ROLES and index.inherited(s, "ace.trace_uid") == trace_uid]
    steps = [s for s in index.spans if is_step(s) and s.attributes.get("ace.trace_uid") == trace_uid]
    if not sessions and not steps:
        return None
    return {
        "trace_uid": trace_uid,
        "reflections": [_session(index, s) for s in sessions if SESSION_ROLES[s.name] != "sm"],
        "skill_manager": [_session(index, s) for s in sessions if SESSION_ROLES[s.name] == "sm"],
        "steps": [_step(index, s) for s in steps],
    }


def summary_report(index: SpanIndex, read: ReadResult, source: str) -> dict[str, Any]:
    """Counts over every span of the file."""
    sessions = {name: {"count": 0, "failed": 0} for name in SESSION_ROLES}
    steps: dict[str, dict[str, int]] = defaultdict(lambda: {"count": 0, "failed": 0})
    tools: dict[str, dict[str, int]] = defaultdict(lambda: {"ok": 0, "error": 0})
    tokens = {role: {"requests": 0, "input": 0, "output": 0} for role in [*SESSION_ROLES.values(), OTHER_ROLE]}
    memory: Counter[str] = Counter()
    failed = [s for s in index.spans if s.error]
    trace_uids: set[str] = set()
    epochs: set[int] = set()
    for span in index.spans:
        if "ace.trace_uid" in span.attributes:
            trace_uids.add(str(span.attributes["ace.trace_uid"]))
        if isinstance(span.attributes.get("ace.epoch"), int):
            epochs.add(span.attributes["ace.epoch"])
        if span.name in SESSION_ROLES:
            sessions[span.name]["count"] += 1
            sessions[span.name]["failed"] += bool(span.error)
        elif is_step(span):
            step = steps[str(span.attributes.get("ace.step") or span.name.removeprefix("pipeline.step "))]
            step["count"] += 1
            step["failed"] += bool(span.error)
        elif is_tool_call(span):
            tools[_tool_name(span)]["error" if span.error else "ok"] += 1
        elif is_chat(span):
            role = tokens[index.role_of(span)]
            role["requests"] += 1
            role["input"] += int(span.attributes.get("gen_ai.usage.input_tokens", 0))
            role["output"] += int(span.attributes.get("gen_ai.usage.output_tokens", 0))
        elif is_memory(span):
            memory[_operation(span)] += 1
    return {
        "file": source,
        "spans": len(index.spans),
        "skipped_lines": read.skipped_lines,
        "first": iso_time(index.spans[0].start) if index.spans else None,
        "last": iso_time(max(s.end for s in index.spans)) if index.spans else None,
        "traces": len(trace_uids),
        "epochs": sorted(epochs),
        "sessions": sessions,
        "steps": dict(sorted(steps.items())),
        "tool_calls": dict(sorted(tools.items())),
        "memory_operations": dict(sorted(memory.items())),
        "tokens": tokens,
        "failed": {
            "count": len(failed),
            "first": [{"name": s.name, "time": iso_time(s.start), "error": s.error} for s in failed[:FAILED_SHOWN]],
        },
    }
