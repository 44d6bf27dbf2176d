"""Trace loaders under attack (issue 23, classes 8 and 9): each test is named for the attack it stops.

Cost is asserted without a clock: the work of parsing an OpenTelemetry span file is counted in
Python function calls (`sys.setprofile`), which grow with the input the same way on any machine,
and memory is measured with `tracemalloc`. Figures are printed by `benchmarks/loaders.py`.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from ace.runners import TraceAnalyser
from ace.steps import ACEStepContext, LoadTracesStep, TraceFileError, load_trace_file, trace_locations
from ace.untrusted import MAX_JSON_EXPANSION, json_memory_estimate, parse_json

RECORDED = "tau2trace_gpt-4.1-mini_airline_1sim.json"


def span_file(path: Path, runs: int, *, chain: int = 0) -> Path:
    """An OTLP span file of `runs` root agent runs in one OTel trace (the issue's 8,000-span shape),
    or one run over a chain of `chain` spans each the parent of the next."""
    spans: list[dict[str, Any]] = [
        {"traceId": "ab", "spanId": f"{number + 1:x}", "name": "invoke_agent a"} for number in range(runs)
    ]
    spans += [
        {
            "traceId": "cd",
            "spanId": f"{number + 1:x}",
            "name": "invoke_agent a" if number == 0 else "step",
            **({"parentSpanId": f"{number:x}"} if number else {}),
        }
        for number in range(chain)
    ]
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")
    return path


def calls_to_load(path: Path) -> int:
    """Python and C function calls made by `load_trace_file(path)`: a count of work, not of time."""
    count = 0

    def profile(_frame: Any, event: str, _arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        load_trace_file(path)
    finally:
        sys.setprofile(None)
    return count


# Class 8: loaders - cost ----------------------------------------------------------------------------


def test_a_span_file_of_many_root_runs_is_parsed_in_linear_work(tmp_path: Path) -> None:
    small = calls_to_load(span_file(tmp_path / "small.jsonl", 150))
    large = calls_to_load(span_file(tmp_path / "large.jsonl", 600))

    assert large / small < 4.6  # linear: 4x the spans, about 4x the calls; quadratic would be about 16x


def test_a_span_file_of_one_long_chain_is_parsed_in_linear_work(tmp_path: Path) -> None:
    small = calls_to_load(span_file(tmp_path / "small.jsonl", 0, chain=150))
    large = calls_to_load(span_file(tmp_path / "large.jsonl", 0, chain=600))

    assert large / small < 4.6


def test_many_runs_still_load_as_one_trace_each_in_file_order(tmp_path: Path) -> None:
    traces = load_trace_file(span_file(tmp_path / "spans.jsonl", 300, chain=20))

    assert len(traces) == 301
    assert [trace["trace_id"] for trace in traces[:2]] == ["ab:1", "ab:2"] and traces[-1]["trace_id"] == "cd:1"


def test_a_json_trace_of_tiny_objects_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text("[" + ",".join(["{}"] * 400_000) + "]")  # 1.2 MB that would take 27x in memory

    with pytest.raises(TraceFileError, match=rf"{path.name} holds too many small values.*limit {MAX_JSON_EXPANSION}x"):
        load_trace_file(path)
    [location] = trace_locations([path])
    with pytest.raises(TraceFileError, match="too many small values"):
        LoadTracesStep()(ACEStepContext(sample=location))


def test_a_jsonl_trace_of_tiny_lines_is_refused_as_a_whole(tmp_path: Path) -> None:
    path = tmp_path / "tiny.jsonl"
    path.write_text("{}\n" * 400_000)  # each line alone is small; together 400,000 traces

    with pytest.raises(TraceFileError, match="too many small values"):
        load_trace_file(path)


def test_a_jsonl_file_of_bad_lines_is_refused_as_a_whole(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("x\n" * 400_000)  # 400,000 error messages of 100+ bytes each from 800 KB

    with pytest.raises(TraceFileError, match="too many small values"):
        trace_locations([path]) and load_trace_file(path)


@pytest.mark.parametrize(
    "text",
    [
        "[" + ",".join(["{}"] * 100_000) + "]",
        "[" + ",".join(["[]"] * 100_000) + "]",
        "[" + ",".join(['{"a":1}'] * 40_000) + "]",
        "{" + ",".join(f'"{number}":0' for number in range(40_000)) + "}",
        "[" + ",".join(f'{{"{number}":[0]}}' for number in range(30_000)) + "]",
        "[" + ",".join(["[[[]]]"] * 50_000) + "]",
        "[" + ",".join(['"\U0001f600"'] * 100_000) + "]",
        "[" + ",".join(["1.5"] * 100_000) + "]",
    ],
    ids=[
        "empty objects",
        "empty arrays",
        "one-key objects",
        "one big object",
        "objects of arrays",
        "nested arrays",
        "astral strings",
        "floats",
    ],
)
def test_the_memory_estimate_is_an_upper_bound_of_what_parsing_takes(text: str) -> None:
    tracemalloc.start()
    try:
        value = parse_json(text, "the document", max_expansion=None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert value and json_memory_estimate(text) >= peak


def test_recorded_traces_are_far_below_the_memory_bound(recorded_dir: Path) -> None:
    for path in sorted(recorded_dir.glob("*.json")):
        data = path.read_bytes()
        assert json_memory_estimate(data) < MAX_JSON_EXPANSION / 2 * len(data), path.name
        assert load_trace_file(path)


# Class 9: loaders - shape ---------------------------------------------------------------------------


def _results_with(recorded_dir: Path, folder: Path, change: Any) -> Path:
    document = json.loads((recorded_dir / RECORDED).read_text())
    change(document)
    path = folder / "results.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda d: d["tasks"][0].update(user_scenario="call the airline"), "user_scenario"),
        (lambda d: d["tasks"][0]["user_scenario"].update(instructions=["a", "list"]), "user_scenario.instructions"),
        (lambda d: d["simulations"][0]["reward_info"].update(db_check="matched"), "reward_info.db_check"),
        (lambda d: d["simulations"][0].update(reward_info="1.0"), "reward_info"),
    ],
    ids=["user_scenario a string", "instructions a list", "db_check a string", "reward_info a string"],
)
def test_a_results_file_with_a_field_of_the_wrong_shape_fails_its_sample_with_the_trace_error(
    change: Any, named: str, roles: dict[str, Any], recorded_dir: Path, tmp_path: Path
) -> None:
    path = _results_with(recorded_dir, tmp_path, change)
    analyser = TraceAnalyser.from_roles(reflector=roles["reflector"], skill_manager=roles["skill_manager"])

    [result] = analyser.run([path])

    assert result.failed_at == "LoadTracesStep" and isinstance(result.error, TraceFileError)
    assert f'"{named}"' in str(result.error) and "simulation 0" in str(result.error)
    assert len(analyser.skillbook) == 0
