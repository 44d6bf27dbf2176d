"""Every trace load path turns any malformed file into its documented error, never a traceback.

Property tests damage a valid file (see `malformed_json`) and load it through `load_trace_file`,
`trace_locations` + `LoadTracesStep` (then render the trace as the Reflector does, and infer its
identity), tau2's `load_results` and the e2e `--traces` loader. The only exceptions allowed are
`TraceFileError`, `ResultsFormatError` and `E2EInputError`; the unharmed files stay loadable.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from malformed_json import TEXT_CHARS, damaged, damaged_jsonl, paths, with_awkward_characters

from ace.runners import TraceAnalyser
from ace.steps import (
    ACEStepContext,
    LoadTracesStep,
    TraceFileError,
    infer_trace_identity,
    load_trace_file,
    trace_locations,
)
from ace.traces import MAX_TRACE_FILE_BYTES
from ace.traces.rendering import render_trace
from ace_eval.e2e import E2EConfig
from ace_eval.e2e.preflight import E2EInputError, RecordedTraces, load_traces
from ace_eval.tau2 import Results, ResultsFormatError, load_results

RECORDED = "tau2trace_gpt-4.1-mini_airline_1sim.json"
SLOWEST_LOAD_SECONDS = 5.0
"""An example slower than this counts as a hang."""

EXAMPLES = Counter[str]()
"""Generated examples per load path (asserted to reach 1,000 in total by the last test)."""

_DAMAGED = ("trace file (JSON)", "trace file (JSONL)", "tau2 Results file")
_names = itertools.count()
_FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module")
def results_document(recorded_dir: Path) -> dict[str, Any]:
    """A valid tau2 Results document: a real recorded run of one simulation, plus a second
    simulation (a copy, other id) so that one bad simulation leaves a good one."""
    document = json.loads((recorded_dir / RECORDED).read_text())
    second = json.loads(json.dumps(document["simulations"][0]))
    second["id"] = "second-simulation"
    second["messages"] = second["messages"][:4]
    document["simulations"].append(second)
    return document


@pytest.fixture(scope="module")
def results_paths(results_document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Paths into the document: every top-level and simulation field, a few messages deep."""
    return list(paths(results_document, items=2))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("malformed")


def _write(folder: Path, data: bytes, suffix: str) -> Path:
    path = folder / f"trace_{next(_names)}{suffix}"  # a new name each time: no cached parse reused
    path.write_bytes(data)
    return path


def _load_as_trace_file(path: Path) -> None:
    """load_trace_file and LoadTracesStep: a list or TraceFileError; every loaded trace renders."""
    started = time.perf_counter()
    try:
        assert isinstance(load_trace_file(path), list)
    except TraceFileError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
    locations = trace_locations([path])
    assert locations, "a file never vanishes from the run"
    for location in locations:
        try:
            ctx = LoadTracesStep()(ACEStepContext(sample=location))
        except TraceFileError:
            continue
        assert isinstance(render_trace(ctx.trace, max_chars=20_000), str)
        infer_trace_identity(ctx.trace, metadata=ctx.metadata)
    assert time.perf_counter() - started < SLOWEST_LOAD_SECONDS


def _load_as_results(path: Path, output_dir: Path) -> None:
    """load_results and the e2e --traces loader: a value or their documented error."""
    started = time.perf_counter()
    try:
        assert isinstance(load_results(path), Results)
    except ResultsFormatError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)
    try:
        recorded = load_traces(E2EConfig(output_dir=output_dir, traces=(path,), benchmark=False), [])
        assert isinstance(recorded, RecordedTraces) and recorded.traces
    except E2EInputError as exc:
        assert "\n" not in str(exc)
    assert time.perf_counter() - started < SLOWEST_LOAD_SECONDS


def test_the_undamaged_files_load(results_document: dict[str, Any], workdir: Path) -> None:
    path = _write(workdir, json.dumps(results_document).encode(), ".json")

    assert len(load_trace_file(path)) == 2
    assert len(load_results(path).simulations) == 2
    assert len(load_traces(E2EConfig(output_dir=workdir, traces=(path,), benchmark=False), []).traces) == 2


@settings(_FUZZ, max_examples=400)
@given(data=st.data())
def test_a_damaged_results_file_is_a_trace_file_error_or_loads(
    data: st.DataObject, results_document: dict[str, Any], results_paths: list[tuple[Any, ...]], workdir: Path
) -> None:
    path = _write(workdir, data.draw(damaged(results_document, results_paths)), ".json")
    EXAMPLES["trace file (JSON)"] += 1

    _load_as_trace_file(path)


@settings(_FUZZ, max_examples=300)
@given(data=st.data())
def test_a_damaged_jsonl_file_fails_only_its_bad_line(
    data: st.DataObject, results_document: dict[str, Any], workdir: Path
) -> None:
    simulation = results_document["simulations"][1]
    lines = [{"task": results_document["tasks"][0], "simulation": simulation}, simulation["messages"], "a text trace"]
    path = _write(workdir, data.draw(damaged_jsonl(lines)), ".jsonl")
    EXAMPLES["trace file (JSONL)"] += 1

    _load_as_trace_file(path)


@settings(_FUZZ, max_examples=400)
@given(data=st.data())
def test_a_damaged_results_file_is_a_results_format_error_or_loads(
    data: st.DataObject, results_document: dict[str, Any], results_paths: list[tuple[Any, ...]], workdir: Path
) -> None:
    path = _write(workdir, data.draw(damaged(results_document, results_paths)), ".json")
    EXAMPLES["tau2 Results file"] += 1

    _load_as_results(path, workdir)


@settings(max_examples=100, deadline=None)
@given(chars=st.text(alphabet=TEXT_CHARS, min_size=1, max_size=4), crlf=st.booleans())
def test_jsonl_lines_end_at_newline_only(chars: str, crlf: bool, workdir: Path) -> None:
    lines = with_awkward_characters([{"question": "q", "feedback": "f"}, ["a", {"b": "c"}], "text"], chars)
    ending = "\r\n" if crlf else "\n"
    path = _write(workdir, ending.join(json.dumps(line, ensure_ascii=False) for line in lines).encode(), ".jsonl")
    EXAMPLES["JSONL line ends"] += 1

    assert load_trace_file(path) == lines


def _raw(document: dict[str, Any], raw: str) -> bytes:
    document = json.loads(json.dumps(document))
    document["simulations"][0]["trial"] = "__raw__"
    return json.dumps(document).replace('"__raw__"', raw).encode()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("simulations: [1]", "simulation 0: not an object: 1"),
        ("tasks: 1", '"tasks" is not a list of task objects: 1'),
        ("a message that is a number", "simulation 0: message 1 is not an object: 7"),
        ("deep nesting", "nested too deeply"),
        ("huge integer", "holds a number that cannot be read"),
    ],
)
def test_each_measured_crash_is_a_trace_file_error(
    results_document: dict[str, Any], workdir: Path, damage: str, message: str
) -> None:
    document = json.loads(json.dumps(results_document))
    if damage == "simulations: [1]":
        data = json.dumps({**document, "simulations": [1]}).encode()
    elif damage == "tasks: 1":
        data = json.dumps({**document, "tasks": 1}).encode()
    elif damage == "a message that is a number":
        document["simulations"][0]["messages"][1] = 7
        data = json.dumps(document).encode()
    elif damage == "deep nesting":
        data = _raw(document, "[" * 100_000 + "]" * 100_000)
    else:
        data = _raw(document, "9" * 5000)
    path = _write(workdir, data, ".json")

    with pytest.raises(TraceFileError, match=message) as caught:
        load_trace_file(path)
    assert str(caught.value).startswith(f"trace file {path}")
    with pytest.raises(TraceFileError, match=message):
        LoadTracesStep()(ACEStepContext(sample=trace_locations([path])[0]))


def test_u2028_inside_a_jsonl_string_does_not_split_the_line(workdir: Path) -> None:
    lines = [{"question": "a\u2028b\u2029c\x85d"}, "e\u2028f"]
    path = _write(workdir, "\r\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode(), ".jsonl")

    assert load_trace_file(path) == lines
    assert len(trace_locations([path])) == 2


def test_a_bad_jsonl_line_or_simulation_fails_only_its_own_sample(
    roles: dict[str, Any], results_document: dict[str, Any], workdir: Path
) -> None:
    jsonl = _write(workdir, b'{"question": "refund?", "feedback": "wrong"}\n{"question": \n[1, 2]\n', ".jsonl")
    document = json.loads(json.dumps(results_document))
    document["simulations"][0]["messages"] = 5
    results = _write(workdir, json.dumps(document).encode(), ".json")
    analyser = TraceAnalyser.from_roles(reflector=roles["reflector"], skill_manager=roles["skill_manager"])

    outcome = analyser.run([jsonl, results])

    assert [r.failed_at for r in outcome] == [None, "LoadTracesStep", None, "LoadTracesStep", None]
    assert f"trace file {jsonl} line 2 is not valid JSON" in str(outcome[1].error)
    assert f'trace file {results} simulation 0: "messages" is not a list: 5' == str(outcome[3].error)
    with pytest.raises(TraceFileError, match="line 2"):
        load_trace_file(jsonl)


def test_a_file_over_the_size_limit_is_refused_without_being_read(workdir: Path) -> None:
    path = workdir / "huge.jsonl"
    with path.open("wb") as file:
        file.truncate(MAX_TRACE_FILE_BYTES + 1)  # sparse: no disk space used

    with pytest.raises(TraceFileError, match="over the .*-byte limit"):
        load_trace_file(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_or_an_empty_folder_fails_its_sample_instead_of_hanging_or_vanishing(workdir: Path) -> None:
    fifo = workdir / "pipe.json"
    os.mkfifo(fifo)
    empty = workdir / "empty"
    empty.mkdir()

    locations = trace_locations([fifo, empty])

    assert [location.path for location in locations] == [fifo, empty]
    with pytest.raises(TraceFileError, match="not a regular file"):
        LoadTracesStep()(ACEStepContext(sample=locations[0]))
    with pytest.raises(TraceFileError, match="holds no .json or .jsonl file"):
        LoadTracesStep()(ACEStepContext(sample=locations[1]))


def test_at_least_1000_malformed_files_were_generated() -> None:
    # Runs after the property tests of this module (pytest keeps file order).
    damaged_files = {key: count for key, count in EXAMPLES.items() if key in _DAMAGED}
    if len(damaged_files) < len(_DAMAGED):
        pytest.skip("only part of the property tests ran")
    assert sum(damaged_files.values()) >= 1000, EXAMPLES
