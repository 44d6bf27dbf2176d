"""`load_results` and `ace-eval tau2 regrade` refuse each measured malformed Results file with one
`ResultsFormatError` line (exit 2), never a traceback. (The property tests over damaged files of
every trace load path are in tests/loop/test_trace_files_malformed.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ace_eval.cli import main
from ace_eval.tau2 import ResultsFormatError, load_results
from ace_eval.tau2.data import load_tasks
from ace_eval.tau2.results import MAX_RESULTS_FILE_BYTES


@pytest.fixture
def document(recorded_paths: list[Path]) -> dict[str, Any]:
    """A valid Results document (the recorded one-simulation run)."""
    return json.loads(next(p for p in recorded_paths if "tau2trace" in p.name).read_text())


def _damage(document: dict[str, Any], damage: str) -> str:
    if damage == "simulations: [1]":
        return json.dumps({**document, "simulations": [1]})
    if damage == "tasks: 1":
        return json.dumps({**document, "tasks": 1})
    if damage == "a message that is a number":
        document["simulations"][0]["messages"][1] = 7
        return json.dumps(document)
    raw = {
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "huge integer": "9" * 5000,
        "duplicate key": '{"a": 1, "a": 2}',
        "lone surrogate": '"\\ud800"',
        "a float too large (1e999)": "1e999",
    }
    if damage in raw:
        document["simulations"][0]["trial"] = "__raw__"
        return json.dumps(document).replace('"__raw__"', raw[damage])
    if damage == "a JSON list":
        return json.dumps([document])
    raise AssertionError(damage)


DAMAGES = [
    "simulations: [1]",
    "tasks: 1",
    "a message that is a number",
    "deep nesting",
    "huge integer",
    "duplicate key",
    "lone surrogate",
    "a float too large (1e999)",
    "a JSON list",
]


@pytest.mark.parametrize("damage", DAMAGES)
def test_each_measured_crash_is_a_results_format_error(document: dict[str, Any], tmp_path: Path, damage: str) -> None:
    path = tmp_path / "results.json"
    path.write_text(_damage(document, damage))

    with pytest.raises(ResultsFormatError) as caught:
        load_results(path)

    message = str(caught.value)
    assert str(path) in message and "\n" not in message and len(message) < 600


@pytest.mark.parametrize("damage", ["simulations: [1]", "tasks: 1", "deep nesting", "huge integer"])
def test_regrade_of_a_malformed_file_is_one_line_with_exit_2(
    document: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(_damage(document, damage))

    assert main(["tau2", "regrade", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "results.json" in err


def test_a_bad_value_is_quoted_short_in_the_message(document: dict[str, Any], tmp_path: Path) -> None:
    document["simulations"][0]["termination_reason"] = "x" * 10_000
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document))

    with pytest.raises(ResultsFormatError, match=r"termination_reason: .*\(got 'xxx") as caught:
        load_results(path)

    assert len(str(caught.value)) < 600


def test_a_file_over_the_size_limit_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with path.open("wb") as file:
        file.truncate(MAX_RESULTS_FILE_BYTES + 1)  # sparse: no disk space used

    with pytest.raises(ResultsFormatError, match="over the .*-byte limit"):
        load_results(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_a_fifo_is_refused_instead_of_read_forever(tmp_path: Path) -> None:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)

    with pytest.raises(ResultsFormatError, match="not a regular file"):
        load_results(path)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "[" + "9" * 5000 + "]", '[{"id": "1", "id": "2"}]'])
def test_a_malformed_tasks_file_for_regrade_is_a_results_format_error(tmp_path: Path, text: str) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(text)
    with pytest.raises(ResultsFormatError, match="tasks.json"):
        load_tasks(path=tasks)
