"""Plain-text renderings of the `ace-eval spans` reports: short lines, times as UTC HH:MM:SS.mmm."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["format_skill", "format_summary", "format_trace"]

_SHOWN_CHARS = 100
"""Arguments, errors and reflections are cut to this many characters in text (not in --json)."""


def _clock(iso: str) -> str:
    return iso[11:23]


def _short(text: Any, limit: int = _SHOWN_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _table(header: Sequence[str], rows: list[Sequence[Any]]) -> list[str]:
    cells = [[str(cell) for cell in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        first = ("" if number == 0 else "  ") + row[0]
        first_width = widths[0] + 2
        rest = "  ".join(cell.rjust(width) for cell, width in zip(row[1:], widths[1:]))
        lines.append(f"{first.ljust(first_width)}  {rest}".rstrip())
    return lines


def _counts(title: str, columns: tuple[str, ...], rows: dict[str, dict[str, int]]) -> list[str]:
    return _table([title, *columns], [[name, *(row[c] for c in columns)] for name, row in rows.items()])


def _where(event: dict[str, Any]) -> str:
    parts = [event["session"] or "(no session)"]
    if event["trace_uid"] is not None:
        parts.append(f"trace {event['trace_uid']}")
    if event["epoch"] is not None:
        parts.append(f"epoch {event['epoch']}")
    return "  ".join(parts)


def format_skill(report: dict[str, Any]) -> str:
    counts = report["counts"]
    lines = [f"skill {report['skill']}: " + ", ".join(f"{n} {name}" for name, n in counts.items())]
    for event in report["events"]:
        operation = f"{event['operation']} {event['tag']}" if event["tag"] else event["operation"]
        lines.append(f"{_clock(event['time'])}  {operation:<11} {_where(event)}")
        if event["tool"] is not None:
            arguments = f" {_short(event['arguments'])}" if event["arguments"] is not None else ""
            lines.append(f"    via {event['tool']}{arguments}")
        if event["error"]:
            lines.append(f"    error: {_short(event['error'])}")
    return "\n".join(lines)


def _session_lines(title: str, session: dict[str, Any], *, list_tools: bool) -> list[str]:
    epoch = "" if session["epoch"] is None else f"  epoch {session['epoch']}"
    lines = [
        f"{title}: {session['name']}  {_clock(session['time'])}  {session['duration_s']:.2f}s  "
        f"{session['status']}{epoch}",
        f"  {session['requests']} requests, {session['input_tokens']} in / {session['output_tokens']} out tokens",
    ]
    if session["error"]:
        lines.append(f"  error: {_short(session['error'])}")
    calls = session["tool_calls"]
    if list_tools:
        lines.append(f"  tool calls ({len(calls)}):")
        for call in calls:
            detail = call["error"] if call["error"] else call["arguments"]
            shown = f"  {_short(detail, 60)}" if detail is not None else ""
            lines.append(f"    {_clock(call['time'])}  {call['tool']}  {call['status']}{shown}")
    elif calls:
        failed = sum(call["status"] == "error" for call in calls)
        lines.append(f"  tool calls: {len(calls)} ({failed} failed)")
    skills = session["skills"]
    if skills["touched"]:
        touched = ", ".join(f"{s['id']} {'+'.join(s['operations'])}" for s in skills["touched"])
        lines.append(f"  skills touched: {_short(touched, 200)}")
    if skills["searches"]:
        retrieved = ", ".join(skills["retrieved"]) or "nothing"
        lines.append(f"  searched {skills['searches']}x, retrieved: {_short(retrieved)}")
    if session["final_result"] is not None:
        label = "final result" if session["role"] == "sm" else "reflection"
        lines.append(f"  {label}: {_short(session['final_result'], 200)}")
    return lines


def format_trace(report: dict[str, Any]) -> str:
    lines = [f"trace {report['trace_uid']}"]
    if not report["reflections"]:
        lines.append("reflection: no session")
    for session in report["reflections"]:
        lines.extend(_session_lines("reflection", session, list_tools=False))
    if not report["skill_manager"]:
        lines.append("skill manager: no session")
    for session in report["skill_manager"]:
        lines.extend(_session_lines("skill manager", session, list_tools=True))
    lines.append(f"pipeline steps ({len(report['steps'])}):")
    for step in report["steps"]:
        error = f": {_short(step['error'], 60)}" if step["error"] else ""
        sample = f"  sample {step['sample_id']}" if step["sample_id"] is not None else ""
        epoch = f"  epoch {step['epoch']}" if step["epoch"] is not None else ""
        timing = f"{step['status']}  {step['duration_s']:.2f}s"
        lines.append(f"  {_clock(step['time'])}  {step['step']}  {timing}{sample}{epoch}{error}")
    return "\n".join(lines)


def format_summary(report: dict[str, Any]) -> str:
    lines = [f"{report['file']}: {report['spans']} spans"]
    if report["first"] is not None:
        lines.append(f"from {report['first'][:19].replace('T', ' ')} to {report['last'][:19].replace('T', ' ')} UTC")
    if report["skipped_lines"]:
        skipped = report["skipped_lines"]
        lines.append(f"skipped {len(skipped)} incomplete line(s): {_short(skipped, 60)}")
    epochs = ", ".join(str(e) for e in report["epochs"]) or "none"
    lines.append(f"traces: {report['traces']} (distinct ace.trace_uid), epochs: {epochs}")
    lines.append("")
    lines += _counts("sessions", ("count", "failed"), report["sessions"])
    if report["steps"]:
        lines += _counts("pipeline steps", ("count", "failed"), report["steps"])
    if report["tool_calls"]:
        lines += _counts("tool calls", ("ok", "error"), report["tool_calls"])
    else:
        lines.append("tool calls: none")
    memory = ", ".join(f"{op} {n}" for op, n in report["memory_operations"].items()) or "none"
    lines.append(f"skillbook operations: {memory}")
    lines += _table(
        ["tokens", "requests", "input", "output"],
        [[role, t["requests"], t["input"], t["output"]] for role, t in report["tokens"].items()],
    )
    failed = report["failed"]
    lines.append(f"failed spans: {failed['count']}")
    for span in failed["first"]:
        lines.append(f"  {_clock(span['time'])}  {span['name']}: {_short(span['error'], 60)}")
    if failed["count"] > len(failed["first"]):
        lines.append(f"  ... {failed['count'] - len(failed['first'])} more")
    return "\n".join(lines)
