"""`ace-eval spans`: one skill's history, one trace's learning tail, and the run summary from a span file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from span_files import Node, write_span_file

from ace_eval.cli import main
from ace_eval.spans import read_spans
from ace_eval.spans._reader import MAX_TEXT_CHARS


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["spans", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_skill_lists_every_operation_on_it_in_time_order_with_its_session(
    span_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _json(capsys, str(span_file), "--skill", "s-1")
    rows = [(e["operation"], e["session"], e["trace_uid"], e["epoch"], e["tool"]) for e in report["events"]]
    assert rows == [
        ("ADD", "sm.session", "t-a", 0, "add_skill"),
        ("MARK_USED", "pipeline.step AgentStep", "t-b", 0, None),
        ("UPDATE", "sm.session", "t-b", 0, "update_skill"),
        ("TAG", "sm.session", "t-b", 0, "tag_skill"),
        ("REMOVE", "sm.session", "t-c", 1, "remove_skill"),
    ]
    assert report["events"][0]["arguments"] == '{"section": "refunds", "content": "Check fare rules"}'
    assert report["events"][3]["tag"] == "helpful"


def test_skill_text_starts_with_the_counts(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spans", str(span_file), "--skill", "s-1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "skill s-1: 1 created, 1 updated, 1 tagged, 1 used, 1 removed, 0 retrieved"
    assert lines[1].startswith("10:00:00.501  ADD")
    assert lines[2] == '    via add_skill {"section": "refunds", "content": "Check fare rules"}'


def test_skill_found_only_in_search_results_counts_as_retrieved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spans.jsonl"
    search = {
        "gen_ai.operation.name": "search_memory",
        "ace.skillbook.operation": "SEARCH",
        "ace.skill_ids": ["s-2", "s-3"],
        "gen_ai.memory.record.count": 2,
    }
    write_span_file(path, [Node("search_memory skillbook", 0, 1, search)])
    assert _json(capsys, str(path), "--skill", "s-3")["counts"]["retrieved"] == 1


def test_unknown_skill_says_so_and_exits_1(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spans", str(span_file), "--skill", "s-404"]) == 1
    assert capsys.readouterr().out == "no span mentions skill s-404\n"


def test_trace_lists_its_sm_tool_calls_with_outcome_and_the_skills_touched(
    span_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _json(capsys, str(span_file), "--trace", "t-a")
    [session] = report["skill_manager"]
    calls = [(c["tool"], c["call_id"], c["status"], c["error"]) for c in session["tool_calls"]]
    assert calls == [("add_skill", "call-1", "ok", None), ("tag_skill", "call-2", "error", "no skill with id 's-9'")]
    assert session["skills"]["touched"] == [{"id": "s-1", "operations": ["ADD"]}]
    assert (session["requests"], session["input_tokens"], session["output_tokens"]) == (2, 1100, 90)
    assert [s["step"] for s in report["steps"]] == ["ReflectStep", "UpdateStep"]


def test_trace_shows_its_reflection_session_and_captured_reflection(
    span_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [reflection] = _json(capsys, str(span_file), "--trace", "t-a")["reflections"]
    assert (reflection["name"], reflection["requests"], reflection["input_tokens"]) == ("rr.session", 2, 2200)
    assert reflection["final_result"] == "Check the fare rules first."
    assert reflection["skills"] == {"touched": [], "searches": 1, "retrieved": []}


def test_trace_text_names_a_failed_session_and_step(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spans", str(span_file), "--trace", "t-c"]) == 0
    out = capsys.readouterr().out
    assert "skill manager: sm.session  10:00:02.010  0.48s  error  epoch 1" in out
    assert "  error: request limit reached" in out
    assert "    10:00:02.100  remove_skill  ok" in out
    assert "UpdateStep  error  0.50s" in out


def test_unknown_trace_exits_1(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spans", str(span_file), "--trace", "t-404"]) == 1
    assert capsys.readouterr().out == "no span mentions trace t-404\n"


def test_summary_counts_sessions_tools_failures_tokens_traces_and_epochs(
    span_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _json(capsys, str(span_file), "--summary")
    assert report["sessions"] == {
        "sm.session": {"count": 3, "failed": 1},
        "rr.session": {"count": 1, "failed": 0},
        "reflector.reflect": {"count": 1, "failed": 0},
    }
    assert report["tool_calls"]["tag_skill"] == {"ok": 1, "error": 1}
    assert report["steps"]["UpdateStep"] == {"count": 3, "failed": 1}
    assert report["failed"]["count"] == 3
    assert report["tokens"] == {
        "sm": {"requests": 2, "input": 1100, "output": 90},
        "rr": {"requests": 2, "input": 2200, "output": 300},
        "reflector": {"requests": 1, "input": 300, "output": 30},
        "agent/other": {"requests": 1, "input": 70, "output": 7},
    }
    assert (report["traces"], report["epochs"], report["spans"]) == (3, [0, 1], 31)


def test_summary_is_the_default_report(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spans", str(span_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{span_file}: 31 spans\n")
    assert "traces: 3 (distinct ace.trace_uid), epochs: 0, 1" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_truncated_last_line_is_skipped_with_one_warning(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = span_file.read_text().splitlines(keepends=True)
    with span_file.open("a") as handle:
        handle.write(lines[0][: len(lines[0]) // 2])
    assert main(["spans", str(span_file), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["skipped_lines"] == [len(lines) + 1]
    [warning] = err.splitlines()
    assert "warning" in warning and f"line {len(lines) + 1}" in warning


@pytest.mark.parametrize("content", ["name,value\nspans,3\n", '{"traces": []}\n', "[1, 2]\n"])
def test_a_file_that_is_not_otlp_json_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    path = tmp_path / "spans.jsonl"
    path.write_text(content)
    assert main(["spans", str(path)]) == 2
    [error] = capsys.readouterr().err.splitlines()
    assert error.startswith(f"ace-eval: error: {path} line 1: not ")


def test_a_malformed_attribute_names_its_line_and_exits_2(span_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "ab",
                                "spanId": "cd",
                                "name": "x",
                                "startTimeUnixNano": "1",
                                "attributes": [{"key": "ace.epoch", "value": {"intValue": "one"}}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    count = len(span_file.read_text().splitlines())
    with span_file.open("a") as handle:
        handle.write(json.dumps(bad) + "\n")
    assert main(["spans", str(span_file)]) == 2
    [error] = capsys.readouterr().err.splitlines()
    assert f"line {count + 1}: malformed OTLP span" in error


def test_missing_and_empty_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    assert main(["spans", str(tmp_path / "missing.jsonl")]) == 2
    assert main(["spans", str(tmp_path / "empty.jsonl")]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 2


def test_skill_ids_sent_as_json_text_are_read_as_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spans.jsonl"
    used = {
        "gen_ai.operation.name": "update_memory",
        "ace.skillbook.operation": "MARK_USED",
        "ace.skill_ids": '["s-1", "s-2"]',
    }
    write_span_file(path, [Node("update_memory skillbook", 0, 1, used)])
    assert _json(capsys, str(path), "--skill", "s-2")["counts"]["used"] == 1


def test_reader_drops_message_histories_and_cuts_long_content(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    attributes = {"gen_ai.input.messages": "x" * 50_000, "tool_response": "y" * 50_000, "logfire.msg": "z"}
    write_span_file(path, [Node("execute_tool search", 0, 1, attributes)])
    [span] = read_spans(path).spans
    assert set(span.attributes) == {"tool_response"}
    assert span.attributes["tool_response"].startswith("y" * MAX_TEXT_CHARS + "... [")
