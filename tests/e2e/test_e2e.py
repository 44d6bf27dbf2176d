"""`ace-eval e2e` end to end on the offline scripted models: collect, learn, benchmark, summarise."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ace.skillbook import Skillbook
from ace_eval.cli import main
from ace_eval.e2e import E2EConfig, run_e2e, skills_block


def test_scripted_run_collects_learns_and_benchmarks(tmp_path: Path) -> None:
    report = run_e2e(E2EConfig(output_dir=tmp_path, task_limit=3, max_workers=2), log=lambda _: None)

    collected = json.loads((tmp_path / "collection" / "results.json").read_text())
    assert len(collected["simulations"]) == 3
    assert report.traces_learned == 3 and report.learning_failures == ()
    skillbook = Skillbook.load_from_file(tmp_path / "skillbook.json")
    assert len(skillbook.skills()) == report.skills >= 1
    simulation_uids = {f"tau2:{sim['id']}" for sim in collected["simulations"]}
    learned_from = {o.trace_uid for s in skillbook.skills() for o in s.occurrences}
    assert learned_from == simulation_uids
    assert report.baseline is not None and report.baseline.num_simulations == 3
    ace_run = json.loads((tmp_path / "benchmark" / "ace.json").read_text())
    assert ace_run["info"]["agent_info"]["extra_instructions"] == skills_block(skillbook)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["skills"] == report.skills
    assert summary["baseline"]["simulations"] == 3


def test_cli_learns_from_recorded_traces_without_benchmark(
    tmp_path: Path, shared_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = shutil.copy(shared_dir / "tau2" / "recorded" / "tau2trace_gpt-4.1-mini_airline_1sim.json", tmp_path)
    out = tmp_path / "run"

    code = main(["e2e", "--traces", str(recorded), "--no-benchmark", "--output-dir", str(out)])

    assert code == 0
    printed = capsys.readouterr().out
    assert "offline scripted models" in printed
    assert not (out / "collection").exists() and not (out / "benchmark").exists()
    skillbook = Skillbook.load_from_file(out / "skillbook.json")
    assert len(skillbook.skills()) == 1


def test_cli_reports_a_missing_traces_path_as_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["e2e", "--traces", str(tmp_path / "nope.json"), "--output-dir", str(tmp_path / "run")])

    assert code == 2
    assert capsys.readouterr().err.strip().endswith("nope.json: no such file or folder")


def test_a_failed_reflection_is_reported_as_a_learning_failure_not_as_a_learned_trace(
    tmp_path: Path, shared_dir: Path
) -> None:
    # pydantic-ai's TestModel never runs code successfully, so the Recursive Reflector's submission is
    # rejected until its retries run out and it returns a failed reflection (not a pipeline error).
    recorded = shared_dir / "tau2" / "recorded" / "tau2trace_gpt-4.1-mini_airline_1sim.json"
    config = E2EConfig(output_dir=tmp_path, traces=(recorded,), reflector_model="test", benchmark=False)

    report = run_e2e(config, log=lambda _: None)

    assert report.traces_learned == 0
    assert len(report.learning_failures) == 1
    assert report.learning_failures[0].startswith("ReflectStep: the reflection failed: ")
