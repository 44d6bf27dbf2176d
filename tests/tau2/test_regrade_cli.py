"""`ace-eval tau2 regrade`: per-simulation lines, the agreement summary, JSON output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ace_eval.cli import main
from ace_eval.tau2 import load_results, write_results


def _recorded(recorded_paths: list[Path], marker: str) -> Path:
    return next(path for path in recorded_paths if marker in path.name)


def test_text_output_has_a_line_per_simulation_and_the_agreement(
    recorded_paths: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tau2", "regrade", str(_recorded(recorded_paths, "gpt-oss"))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 51
    assert lines[-1] == "agreement: 44/44"
    assert sum("not graded (max_steps" in line for line in lines) == 5
    assert sum("not graded (too_many_errors" in line for line in lines) == 1


def test_json_output_reports_computed_and_recorded_values(
    recorded_paths: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tau2", "regrade", str(_recorded(recorded_paths, "sierra")), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["agreeing"], report["graded"]) == (20, 20)
    rewards = [row["reward"] for row in report["simulations"]]
    assert rewards == [row["recorded_reward"] for row in report["simulations"]]
    assert sum(rewards) == 10.0


def test_a_disagreeing_record_is_flagged_and_exits_1(
    recorded_paths: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = load_results(_recorded(recorded_paths, "tau2trace"))
    results.simulations[0].reward_info.reward = 0.0
    write_results(results, tmp_path / "tampered.json")
    assert main(["tau2", "regrade", str(tmp_path / "tampered.json")]) == 1
    out = capsys.readouterr().out
    assert "reward 1.0 (recorded 0.0)" in out and "DISAGREE" in out and out.endswith("agreement: 0/1\n")


def test_tasks_option_grades_with_another_task_set(
    recorded_paths: list[Path], v020_tasks_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tau2", "regrade", str(_recorded(recorded_paths, "sierra")), "--tasks", str(v020_tasks_file)]) == 0
    assert capsys.readouterr().out.endswith("agreement: 20/20\n")


def test_missing_file_is_a_one_line_error_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tau2", "regrade", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "none.json" in err


def test_malformed_file_is_a_one_line_error_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.json").write_text("not json")
    assert main(["tau2", "regrade", str(tmp_path / "bad.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_unknown_task_id_is_a_one_line_error_with_exit_2(
    recorded_paths: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = load_results(_recorded(recorded_paths, "tau2trace"))
    results.simulations[0].task_id = "999"
    write_results(results, tmp_path / "unknown.json")
    assert main(["tau2", "regrade", str(tmp_path / "unknown.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'999'" in err


def test_metrics_command_prints_pass_hat_k_and_the_task_table(
    recorded_paths: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tau2", "metrics", str(_recorded(recorded_paths, "claude"))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "tasks 50, simulations 50, average reward 0.720"
    assert lines[1].startswith("pass^1 0.720  95% CI [")
    assert len(lines) == 3 + 50


def test_metrics_command_rejects_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tau2", "metrics", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err


def test_run_command_simulates_grades_and_writes_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    output = tmp_path / "run.json"
    argv = [
        "tau2",
        "run",
        "--agent-model",
        "test",
        "--user-model",
        "test",
        "--task-ids",
        "2",
        "8",
        "--max-num-steps",
        "4",
    ]
    assert main([*argv, "--output", str(output)]) == 0
    assert sorted(sim.task_id for sim in load_results(output).simulations) == ["2", "8"]
    out = capsys.readouterr().out
    assert "tasks 2, simulations 2" in out and out.endswith(f"results: {output}\n")


def test_run_command_still_accepts_the_earlier_flag_spellings(tmp_path: Path) -> None:
    output = tmp_path / "run.json"
    argv = [
        "tau2",
        "run",
        "--agent",
        "test",
        "--user",
        "test",
        "--task-ids",
        "2",
        "--max-steps",
        "4",
        "--trials",
        "2",
        "--workers",
        "1",
    ]
    assert main([*argv, "--output", str(output)]) == 0
    results = load_results(output)
    assert sorted(sim.trial for sim in results.simulations) == [0, 1]
    assert (results.info["agent_info"]["llm"], results.info["max_steps"]) == ("test", 4)


def test_run_command_defaults_to_the_offline_scripted_models_like_e2e(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "run.json"
    assert main(["tau2", "run", "--task-ids", "2", "--max-num-steps", "6", "--output", str(output)]) == 0
    assert load_results(output).info["agent_info"]["llm"] == "scripted-agent"
    assert "offline models" in capsys.readouterr().out


def test_earlier_flag_spellings_are_not_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tau2", "run", "--help"])
    usage = capsys.readouterr().out
    assert "--num-trials" in usage and "--trials" not in usage and "--agent " not in usage


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--task-ids", "99"], "['99']"),
        (["--agent-model", "nonsense"], "nonsense"),
        (["--max-workers", "0"], "--max-workers"),
        (["--api-base", "http://127.0.0.1:9/v1"], "api_base"),
    ],
)
def test_run_command_rejects_bad_input_with_exit_2(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "tau2",
        "run",
        "--agent-model",
        "test",
        "--user-model",
        "test",
        "--output",
        str(tmp_path / "r.json"),
        *options,
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "r.json").exists()


def test_run_command_writes_every_span_to_a_local_otlp_json_lines_file(tmp_path: Path) -> None:
    spans_file = tmp_path / "spans" / "run.jsonl"
    argv = ["tau2", "run", "--agent-model", "test", "--user-model", "test", "--task-ids", "2", "--max-num-steps", "4"]
    assert main([*argv, "--output", str(tmp_path / "run.json"), "--spans-file", str(spans_file)]) == 0

    requests = [json.loads(line) for line in spans_file.read_text().splitlines()]
    spans = [
        span
        for request in requests
        for resource in request["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    names = [span["name"] for span in spans]
    assert "tau2.simulation 2 trial 0" in names and "tau2.run_tasks" in names
    assert all(len(span["traceId"]) == 32 and len(span["spanId"]) == 16 for span in spans)
