"""OpenTelemetry GenAI span files (OTLP JSON lines) load as one trace per root agent run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from learn_roles import record_weather_run, spans_lines

from ace.steps import (
    ACEStepContext,
    LoadTracesStep,
    TraceFileError,
    infer_trace_identity,
    load_trace_file,
    trace_locations,
)
from ace.traces._otel import CONTENT_OFF_NOTE
from ace.traces.rendering import render_trace


def test_a_pydantic_ai_run_loads_with_its_messages_and_tool_calls_in_order(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    record_weather_run(spans)
    [trace] = load_trace_file(spans)
    root = next(
        s
        for line in spans_lines(spans)
        for rs in line["resourceSpans"]
        for ss in rs["scopeSpans"]
        for s in ss["spans"]
        if s["name"] == "invoke_agent weather_agent"
    )
    assert trace["trace_id"] == f"{root['traceId']}:{root['spanId']}"
    assert trace["agent"] == "weather_agent" and trace["final_result"] == "It is sunny in Paris."
    assert "note" not in trace
    roles = [(m["role"], m.get("content"), [c["name"] for c in m.get("tool_calls", [])]) for m in trace["messages"]]
    assert roles == [
        ("system", "You answer weather questions.", []),
        ("user", "What is the weather in Paris?", []),
        ("assistant", None, ["get_weather"]),
        ("tool", "sunny in Paris", []),
        ("assistant", "It is sunny in Paris.", []),
    ]
    assert trace["messages"][2]["tool_calls"][0]["arguments"] == {"city": "Paris"}
    rendered = render_trace(trace)
    assert '-> get_weather({"city": "Paris"})' in rendered and "[3] tool get_weather:\nsunny in Paris" in rendered


def test_the_trace_uid_and_display_name_name_the_run(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    record_weather_run(spans)
    [location] = trace_locations([spans])
    ctx = LoadTracesStep()(ACEStepContext(sample=location))
    identity = infer_trace_identity(ctx.trace, metadata=ctx.metadata)
    trace_id, span_id = ctx.trace["trace_id"].split(":")
    assert identity.trace_uid == f"otel:{trace_id}:{span_id}"
    assert identity.display_name == f"spans.jsonl: weather_agent run {span_id[:8]}"


def test_each_root_run_is_one_trace_in_file_order(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    record_weather_run(spans)
    record_weather_run(spans, question="What is the weather in Rome?")
    traces = load_trace_file(spans)
    assert [t["messages"][1]["content"] for t in traces] == [
        "What is the weather in Paris?",
        "What is the weather in Rome?",
    ]


def test_a_malformed_line_fails_only_its_own_trace(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    record_weather_run(spans)
    with spans.open("a") as file:
        file.write('{"resourceSpans": [ not json\n')
        file.write('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "01"}]}]}]}\n')
    record_weather_run(spans, question="What is the weather in Rome?")
    locations = trace_locations([spans])
    assert len(locations) == 4
    loaded, errors = [], []
    for location in locations:
        try:
            loaded.append(LoadTracesStep()(ACEStepContext(sample=location)).trace)
        except TraceFileError as exc:
            errors.append(str(exc))
    assert [t["messages"][1]["content"] for t in loaded] == [
        "What is the weather in Paris?",
        "What is the weather in Rome?",
    ]
    line = len(spans_lines_before_bad(spans)) + 1
    assert errors[0].startswith(f"trace file {spans} line {line} is not valid JSON")
    assert errors[1] == f"trace file {spans} line {line + 1}: a span's traceId is not a hex id: 'zz'"
    with pytest.raises(TraceFileError, match="not valid JSON"):
        load_trace_file(spans)


def spans_lines_before_bad(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    return lines[: next(i for i, line in enumerate(lines) if "not json" in line)]


def test_spans_without_content_load_with_a_note_and_the_tool_names_in_order(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    record_weather_run(spans, include_content=False)
    [trace] = load_trace_file(spans)
    assert trace["note"] == CONTENT_OFF_NOTE
    assert [(m["role"], [c["name"] for c in m.get("tool_calls", [])]) for m in trace["messages"]] == [
        ("user", []),
        ("assistant", ["get_weather"]),
        ("tool", []),
        ("assistant", []),
    ]
    assert "content capture was off" in render_trace(trace)


def test_one_otlp_document_in_a_json_file_and_lines_in_a_json_file_load(tmp_path: Path) -> None:
    lines = tmp_path / "lines.jsonl"
    record_weather_run(lines)
    documents = spans_lines(lines)
    merged = {"resourceSpans": [rs for doc in documents for rs in doc["resourceSpans"]]}
    single = tmp_path / "export.json"
    single.write_text(json.dumps(merged))
    as_json = tmp_path / "spans.json"
    as_json.write_text(lines.read_text())
    assert load_trace_file(single) == load_trace_file(lines) == load_trace_file(as_json)


def test_a_nested_agent_run_belongs_to_its_root(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    trace_id = "ab" * 16

    def span(span_id: str, parent: str | None, name: str, **attributes: str) -> dict:
        return {
            "traceId": trace_id,
            "spanId": span_id,
            "parentSpanId": parent or "",
            "name": name,
            "startTimeUnixNano": str(int(span_id, 16)),
            "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}} for k, v in attributes.items()],
        }

    tool_args = {"gen_ai__tool__call__arguments": '{"q": "x"}', "gen_ai__tool__call__result": "done"}
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            span("01", None, "invoke_agent planner", gen_ai__operation__name="invoke_agent"),
                            span("02", "01", "execute_tool delegate", gen_ai__tool__name="delegate", **tool_args),
                            span("03", "02", "invoke_agent helper", gen_ai__operation__name="invoke_agent"),
                            span("04", "03", "execute_tool search", gen_ai__tool__name="search", **tool_args),
                        ]
                    }
                ]
            }
        ]
    }
    spans.write_text(json.dumps(doc) + "\n")
    [trace] = load_trace_file(spans)
    assert trace["trace_id"] == f"{trace_id}:01" and trace["nested_agent_runs"] == ["invoke_agent helper"]
    assert [c["name"] for m in trace["messages"] for c in m.get("tool_calls", [])] == ["delegate"]
    assert trace["messages"][1] == {"role": "tool", "tool_call_id": "02", "name": "delegate", "content": "done"}


def test_spans_without_an_agent_run_are_an_error(tmp_path: Path) -> None:
    spans = tmp_path / "spans.jsonl"
    spans.write_text(
        json.dumps(
            {"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "ab" * 16, "spanId": "01", "name": "GET /"}]}]}]}
        )
        + "\n"
    )
    with pytest.raises(TraceFileError, match="no agent run"):
        load_trace_file(spans)
