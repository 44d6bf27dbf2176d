"""OpenTelemetry GenAI spans (OTLP JSON) as traces: one trace per root agent run.

Input: OTLP JSON `ExportTraceServiceRequest` documents (`{"resourceSpans": [...]}`), one per line as
opentelemetry-exporter-otlp-json-file's `FileSpanExporter` writes them, or one document. Spans are
grouped by `traceId` and linked by `parentSpanId`:

- an **agent run** is a span whose `gen_ai.operation.name` is `invoke_agent`, or whose name starts
  with `invoke_agent ` (GenAI semantic conventions; pydantic-ai >= 1) or is `agent run` (older
  pydantic-ai); a **root** run has no agent run above it. Each root run is one trace; nested runs
  belong to it (named in `nested_agent_runs`; their own conversations are not inlined);
- its conversation, first found of: the run span's `pydantic_ai.all_messages`, else its
  `gen_ai.input.messages` + `gen_ai.output.messages`, else the last model request (`chat <model>`
  span, `gen_ai.operation.name` `chat`) of the run: its input + output messages, else the run's
  tool calls (`execute_tool <name>` spans, in start order) with `gen_ai.tool.call.arguments` /
  `gen_ai.tool.call.result` (or `tool_arguments` / `tool_response`). `gen_ai.system_instructions`
  becomes a first system message; a tool span with status ERROR flags its result `error: true`.
- GenAI message parts become chat messages the Reflector renders as a conversation: text parts the
  message's `content`, `tool_call` parts `tool_calls` ({id, name, arguments}), each
  `tool_call_response` part one `role: tool` message answering its call; other parts are kept as
  they are under `parts`.

Without content capture (pydantic-ai `include_content=False`) the spans hold roles and tool names
only; the trace then says so in `note`. The trace: `{"source_system": "otel", "trace_id":
"<traceId>:<spanId>", "agent", "run", "model", "status", "final_result", "nested_agent_runs",
"note", "messages"}` (empty fields left out), so its uid is `otel:<traceId>:<spanId>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ace.traces._otlp import OtlpSpan, is_otlp_document, otlp_spans
from ace.untrusted import UntrustedInputError, parse_json

__all__ = ["CONTENT_OFF_NOTE", "OtlpSpan", "is_otlp_document", "otlp_spans", "otlp_traces", "run_label"]

CONTENT_OFF_NOTE = (
    "the spans hold no message content (content capture was off when they were recorded): this trace "
    "shows the order of messages and tool calls by name only; record with content capture on "
    "(pydantic-ai: InstrumentationSettings(include_content=True)) to learn from what was said"
)
"""The `note` of a trace built from spans without content."""


def otlp_traces(spans: Iterable[OtlpSpan]) -> list[tuple[int, dict[str, Any]]]:
    """One `(order, trace)` per root agent run among `spans`, by the root's position in the file.

    Linear in the number of spans (plus sorting): each span's run and each run's root are found once
    and remembered, so a file of many runs, or of one long chain of spans, costs what its size does."""
    by_trace: dict[str, dict[str, OtlpSpan]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, {})[span.span_id] = span
    traces: list[tuple[int, dict[str, Any]]] = []
    for members in by_trace.values():
        runs = _owning_runs(members)
        above = {span_id: runs.get(members[span_id].parent_id or "") for span_id, run in runs.items() if run == span_id}
        roots = _roots(above)
        owned: dict[str, list[OtlpSpan]] = {}
        for span_id, run in runs.items():
            root = roots.get(run) if run is not None else None
            if root is not None:
                owned.setdefault(root, []).append(members[span_id])
        for root_id, root_spans in owned.items():
            root_spans.sort(key=lambda s: (s.start, s.order))
            traces.append((members[root_id].order, _trace(members[root_id], root_spans, runs)))
    return sorted(traces, key=lambda item: item[0])


def run_label(trace: Any) -> str | None:
    """A short label for an OTel trace (`weather_agent run 4e9823d7`), None for any other trace."""
    if not (isinstance(trace, Mapping) and trace.get("source_system") == "otel"):
        return None
    span_id = str(trace.get("trace_id", "")).rpartition(":")[2]
    return f"{trace.get('agent') or 'agent'} run {span_id[:8]}".strip()


def _owning_runs(members: Mapping[str, OtlpSpan]) -> dict[str, str | None]:
    """Each span's nearest agent run at or above it (by span id; None when there is none, or the
    parents loop without one). Each span is resolved once: a walk up stops at a span already known."""
    runs: dict[str, str | None] = {}
    for start in members:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        found: str | None = None
        while current is not None and current in members:
            if current in runs:
                found = runs[current]
                break
            if current in on_path:  # the parents loop without an agent run
                break
            span = members[current]
            if span.is_agent_run:
                found = current
                break
            path.append(current)
            on_path.add(current)
            current = span.parent_id
        for span_id in path:
            runs[span_id] = found
        if current is not None and current in members and current not in runs:
            runs[current] = found  # the agent run itself (or a looping span: None)
    return runs


def _roots(above: Mapping[str, str | None]) -> dict[str, str]:
    """Each agent run's root run (the run above all others over it), from `above`: each run's nearest
    run strictly above (None for a root). Runs whose chain of runs loops have no root."""
    roots: dict[str, str | None] = {}
    for start in above:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = start
        found: str | None = None
        while current is not None and current in above:
            if current in roots:
                found = roots[current]
                break
            if current in on_path:
                break
            if above[current] is None:
                found = current
                break
            path.append(current)
            on_path.add(current)
            current = above[current]
        for run in path:
            roots[run] = found
        if current is not None and current in above and current not in roots:
            roots[current] = found
    return {run: root for run, root in roots.items() if root is not None}


# -- the trace -------------------------------------------------------------------------------------


def _trace(root: OtlpSpan, owned: list[OtlpSpan], runs: Mapping[str, str | None]) -> dict[str, Any]:
    attributes = root.attributes
    own = [span for span in owned if runs[span.span_id] == root.span_id and span is not root]
    tools = [span for span in own if span.is_tool_call]
    messages = _conversation(root, own, tools)
    errors = {str(s.attributes.get("gen_ai.tool.call.id")): s for s in tools if s.error is not None}
    for message in messages:
        if message.get("role") == "tool" and str(message.get("tool_call_id")) in errors:
            message["error"] = True
    agent = (
        attributes.get("gen_ai.agent.name") or attributes.get("agent_name") or root.name.removeprefix("invoke_agent ")
    )
    trace: dict[str, Any] = {
        "source_system": "otel",
        "trace_id": f"{root.trace_id}:{root.span_id}",
        "agent": agent,
        "run": root.name,
        "model": attributes.get("model_name") or attributes.get("gen_ai.request.model"),
        "status": f"error: {root.error}".strip() if root.error is not None else None,
        "final_result": attributes.get("final_result"),
        "nested_agent_runs": [span.name for span in owned if span.is_agent_run and span is not root],
    }
    if not _has_content(messages):
        trace["note"] = CONTENT_OFF_NOTE
    trace["messages"] = messages or [{"role": "system", "content": "(the agent run recorded no message or tool call)"}]
    return {key: value for key, value in trace.items() if value not in (None, "", [])}


def _conversation(root: OtlpSpan, own: list[OtlpSpan], tools: list[OtlpSpan]) -> list[dict[str, Any]]:
    attributes = root.attributes
    system = _system_messages(attributes.get("gen_ai.system_instructions"))
    everything = _json_list(attributes.get("pydantic_ai.all_messages"))
    if everything is None:
        inputs, outputs = (
            _json_list(attributes.get(key)) for key in ("gen_ai.input.messages", "gen_ai.output.messages")
        )
        if inputs is not None or outputs is not None:
            everything = (inputs or []) + (outputs or [])
    if everything is None:
        requests = [span for span in own if span.is_model_request]
        for request in reversed(requests):
            inputs, outputs = (
                _json_list(request.attributes.get(key)) for key in ("gen_ai.input.messages", "gen_ai.output.messages")
            )
            if inputs is not None or outputs is not None:
                everything = (inputs or []) + (outputs or [])
                system = system or _system_messages(request.attributes.get("gen_ai.system_instructions"))
                break
    if everything is None:
        return system + _tool_span_messages(tools)
    converted = [message for item in everything for message in _chat_messages(item)]
    if any(message.get("role") == "system" for message in converted):
        system = []
    return system + converted


def _chat_messages(item: Any) -> list[dict[str, Any]]:
    """A GenAI semantic-conventions message (`{"role", "parts": [...]}`) as chat messages."""
    if not isinstance(item, Mapping):
        return [{"role": "unknown", "content": item}]
    role = str(item.get("role") or "unknown")
    parts = item.get("parts")
    if not isinstance(parts, list):  # already a chat message, or another shape: kept as it is
        return [{**item, "role": role}]
    message: dict[str, Any] = {"role": "assistant" if role == "assistant" else role}
    texts, calls, other, answers = [], [], [], []
    for part in parts:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if kind == "text" and isinstance(part, Mapping):
            if part.get("content") not in (None, ""):
                texts.append(str(part["content"]))
        elif kind == "tool_call" and isinstance(part, Mapping):
            calls.append({key: part[key] for key in ("id", "name", "arguments") if key in part})
        elif kind == "tool_call_response" and isinstance(part, Mapping):
            result = part.get("result", part.get("response"))
            answers.append(
                {"role": "tool", "tool_call_id": part.get("id"), "name": part.get("name"), "content": result}
            )
        else:
            other.append(part)
    messages: list[dict[str, Any]] = []
    if texts or calls or other or not answers:
        message["content"] = "\n".join(texts) if texts else None
        if calls:
            message["tool_calls"] = calls
        if other:
            message["parts"] = other
        if item.get("finish_reason") not in (None, "", "stop", "tool_call"):
            message["finish_reason"] = item["finish_reason"]
        messages.append({key: value for key, value in message.items() if value is not None})
    messages.extend({key: value for key, value in answer.items() if value is not None} for answer in answers)
    return messages


def _tool_span_messages(tools: list[OtlpSpan]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for span in tools:
        attributes = span.attributes
        name = attributes.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool ")
        call_id = str(attributes.get("gen_ai.tool.call.id") or span.span_id)
        arguments = attributes.get("gen_ai.tool.call.arguments", attributes.get("tool_arguments"))
        result = attributes.get("gen_ai.tool.call.result", attributes.get("tool_response"))
        call = {"id": call_id, "name": name, **({"arguments": arguments} if arguments is not None else {})}
        messages.append({"role": "assistant", "tool_calls": [call]})
        answer: dict[str, Any] = {"role": "tool", "tool_call_id": call_id, "name": name}
        if result is not None:
            answer["content"] = result
        elif span.error:
            answer["content"] = span.error
        messages.append(answer)
    return messages


def _system_messages(value: Any) -> list[dict[str, Any]]:
    parts = _json_list(value)
    if parts is None:
        return [{"role": "system", "content": value}] if isinstance(value, str) and value else []
    texts = [str(p["content"]) for p in parts if isinstance(p, Mapping) and p.get("content") not in (None, "")]
    return [{"role": "system", "content": "\n".join(texts)}] if texts else []


def _has_content(messages: list[dict[str, Any]]) -> bool:
    for message in messages:
        if message.get("content") not in (None, "") and message.get("role") != "system":
            return True
        if any(
            isinstance(call, Mapping) and call.get("arguments") not in (None, "", {})
            for call in message.get("tool_calls", []) or []
        ):
            return True
    return False


def _json_list(value: Any) -> list[Any] | None:
    """A JSON-array attribute (pydantic-ai writes them as JSON text) as a list; None when absent or
    not a list."""
    if isinstance(value, str):
        try:
            value = parse_json(value, "span attribute")
        except UntrustedInputError:
            return None
    return value if isinstance(value, list) else None
