"""Results files: recorded runs read and written back losslessly, atomically; bad files are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ace_eval.tau2 import ResultsFormatError, load_results, write_results


def test_recorded_files_round_trip_without_loss(recorded_paths: list[Path], tmp_path: Path) -> None:
    for path in recorded_paths:
        write_results(load_results(path), tmp_path / path.name)
        assert json.loads((tmp_path / path.name).read_text()) == json.loads(path.read_text())


def test_write_replaces_the_file_and_leaves_no_temp_files(recorded_paths: list[Path], tmp_path: Path) -> None:
    target = tmp_path / "out" / "results.json"
    target.parent.mkdir()
    target.write_text("old")
    write_results(load_results(recorded_paths[-1]), target)
    assert load_results(target).simulations[0].task_id == "0"
    assert [p.name for p in target.parent.iterdir()] == ["results.json"]


def test_a_missing_file_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(ResultsFormatError, match="absent.json"):
        load_results(tmp_path / "absent.json")


def test_a_file_that_is_not_json_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"timestamp": ')
    with pytest.raises(ResultsFormatError, match="broken.json"):
        load_results(path)


def test_a_json_file_without_the_schema_names_the_missing_field(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"simulations": []}')
    with pytest.raises(ResultsFormatError, match="tasks"):
        load_results(path)
