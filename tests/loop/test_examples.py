"""The example scripts run as documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ace.skillbook import Skillbook

REPO = Path(__file__).resolve().parents[2]


def test_learn_from_tau2_traces_example_runs_offline(recorded_dir: Path, tmp_path: Path) -> None:
    recorded = recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json"
    output = tmp_path / "skillbook.json"

    completed = subprocess.run(
        [sys.executable, str(REPO / "examples" / "learn_from_tau2_traces.py"), str(recorded), "-o", str(output)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert "1 skills from 1 traces" in completed.stdout
    assert len(Skillbook.load_from_file(output).skills()) == 1


def test_learn_from_tau2_traces_example_does_not_count_a_failed_reflection_as_learned(
    recorded_dir: Path, tmp_path: Path
) -> None:
    # pydantic-ai's TestModel never submits a valid reflection, so the one trace teaches nothing.
    recorded = recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json"

    completed = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "learn_from_tau2_traces.py"),
            str(recorded),
            "-o",
            str(tmp_path / "skillbook.json"),
            "--model",
            "test",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 1, completed.stderr
    assert "reflection failed: " in completed.stdout
    assert "0 skills from 0 traces" in completed.stdout


def test_learn_from_tau2_traces_example_exits_2_on_a_missing_input_and_writes_nothing(tmp_path: Path) -> None:
    completed = subprocess.run(
        [
            sys.executable,
            str(REPO / "examples" / "learn_from_tau2_traces.py"),
            str(tmp_path / "absent.json"),
            "-o",
            str(tmp_path / "out" / "skillbook.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
    )

    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [f"error: no such trace file or folder: {tmp_path / 'absent.json'}"]
    assert list(tmp_path.iterdir()) == []
