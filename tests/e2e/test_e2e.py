"""`ace-eval e2e` runs the product's loop: online learning with injected skills, counters and
attribution that follow the recorded outcomes, a paired benchmark, honest exit codes, verify."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from e2e_roles import PROMPT_SKILLS, analysing_reflector, echo_agent, tagging_skill_manager

from ace.skillbook import Skillbook
from ace_eval.cli import main
from ace_eval.e2e import E2EConfig, E2EReport, run_e2e, verify_run
from ace_eval.e2e.report import exit_status
from ace_eval.scripted import scripted_user
from ace_eval.tau2 import load_results
from ace_eval.tau2.metrics import is_success

TASKS = 4  # the first 4 train tasks hold both outcomes for an agent that never writes


def _online(tmp_path: Path, injection: str, **changes: Any) -> tuple[E2EReport, E2EConfig]:
    config = E2EConfig(
        output_dir=tmp_path / injection,
        reflector_type="simple",
        skill_injection=injection,  # type: ignore[arg-type]
        task_limit=TASKS,
        max_workers=2,
        **changes,
    )
    models = {
        "agent": echo_agent(),
        "user": scripted_user(),
        "reflector": analysing_reflector(),
        "skill_manager": tagging_skill_manager(),
    }
    return run_e2e(config, log=lambda _: None, models=models), config  # type: ignore[arg-type]


def _simulations(run_dir: Path, pattern: str) -> list[Any]:
    return [sim for file in sorted(run_dir.glob(pattern)) for sim in load_results(file).simulations]


def _prompt_skills(simulation: Any) -> list[str]:
    last = next(m.content for m in reversed(simulation.messages) if m.role == "assistant" and m.content)
    listed = PROMPT_SKILLS.search(last)
    assert listed is not None, last
    return [item for item in listed.group(1).split(", ") if item]


def _read_skills(simulation: Any) -> list[str]:
    calls = [call for m in simulation.messages if m.role == "assistant" for call in m.tool_calls or ()]
    return [call.arguments["skill_id"] for call in calls if call.name == "read_skill"]


@pytest.mark.parametrize("injection", ["matched", "all", "tool"])
def test_online_run_records_exactly_what_reached_the_agent_and_counters_follow_outcomes(
    tmp_path: Path, injection: str
) -> None:
    report, config = _online(tmp_path, injection)
    run = config.output_dir

    assert report.failures == ()
    train = _simulations(run, "train/epoch_*.json")
    assert len(train) == 2 * TASKS
    for simulation in train + _simulations(run, "benchmark/with_skills.json"):
        recorded = simulation.injected_skill_ids
        if injection == "tool":
            assert recorded == _read_skills(simulation)
        else:
            assert recorded == _prompt_skills(simulation)
    assert any(simulation.injected_skill_ids for simulation in train), "no skill ever reached the agent"
    assert all(
        _prompt_skills(sim) == [] and sim.injected_skill_ids == []
        for sim in _simulations(run, "benchmark/baseline.json")
    )

    skillbook = Skillbook.load_from_file(run / "skillbook.json")
    injected = Counter(skill_id for sim in train for skill_id in sim.injected_skill_ids)
    won = Counter(
        skill_id for sim in train if is_success(sim.reward_info.reward) for skill_id in sim.injected_skill_ids
    )
    trace_of = {f"tau2:{sim.id}": sim for sim in train}
    for skill in skillbook.skills(include_inactive=True):
        assert skill.used_count == injected[skill.id]
        assert skill.helpful_count == won[skill.id]
        assert skill.harmful_count == injected[skill.id] - won[skill.id]
        for tag in (o for o in skill.occurrences if o.operation_type == "TAG"):
            simulation = trace_of[tag.trace_uid]
            assert skill.id in simulation.injected_skill_ids
            expected = "tagged helpful" if is_success(simulation.reward_info.reward) else "tagged harmful"
            assert tag.learning_text == expected and tag.epoch == 2
    assert verify_run(run) == []


def test_paired_benchmark_scores_a_raised_simulation_as_zero_on_the_same_tasks(tmp_path: Path) -> None:
    config = E2EConfig(
        output_dir=tmp_path, reflector_type="simple", skill_injection="all", task_limit=3, train_epochs=1, max_workers=1
    )
    models = {
        "agent": echo_agent(fail_with_skills=True),
        "user": scripted_user(),
        "reflector": analysing_reflector(),
        "skill_manager": tagging_skill_manager(),
    }

    report = run_e2e(config, log=lambda _: None, models=models)  # type: ignore[arg-type]

    assert report.paired is not None and report.skills >= 1
    baseline, with_skills = report.benchmark_outcomes["baseline"], report.benchmark_outcomes["with_skills"]
    assert [(o.task_id, o.trial) for o in baseline] == [(o.task_id, o.trial) for o in with_skills]
    assert all(o.error is None for o in baseline)
    assert all(o.reward == 0.0 and "failed on purpose" in (o.error or "") for o in with_skills)
    assert report.paired.with_skills.num_simulations == report.paired.baseline.num_simulations == 3
    assert report.paired.with_skills.average_reward == 0.0
    assert len([line for line in report.failures if line.startswith("benchmark with_skills")]) == 3
    assert exit_status(report, verify_run(tmp_path)) == 1


def test_default_cli_run_exits_0_and_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"

    code = main(["e2e", "--task-limit", "2", "--output-dir", str(out)])

    printed = capsys.readouterr().out
    assert code == 0
    assert "measures the plumbing of the loop, not learning" in printed
    summary = json.loads((out / "summary.json").read_text())
    report = json.loads((out / "report.json").read_text())
    assert summary["plumbing_only"] is True and report["plumbing_only"] is True
    assert summary["exit_status"] == 0 and summary["verify_problems"] == []
    assert [phase["name"] for phase in report["phases"]] == [
        "learning",
        "benchmark: baseline",
        "benchmark: with skills",
    ]
    assert report["phases"][0]["usage"]["skill_manager"]["requests"] > 0
    assert {row["id"] for row in report["skills_attribution"]} == {
        s.id for s in Skillbook.load_from_file(out / "skillbook.json").skills()
    }
    markdown = (out / "report.md").read_text()
    assert markdown.startswith("# ace-eval e2e run")
    for skill in Skillbook.load_from_file(out / "skillbook.json").skills():  # each row names its skill's issue
        assert f"| {skill.id} | {' '.join(skill.issue.split())[:60]}" in markdown
    assert len((out / "train_log.jsonl").read_text().splitlines()) == 4
    assert main(["verify", str(out)]) == 0


def test_verify_names_the_skill_whose_counters_disagree_with_the_recorded_injections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, config = _online(tmp_path, "all")
    path = config.output_dir / "skillbook.json"
    document = json.loads(path.read_text())
    document["skills"]["context-00001"]["used_count"] += 1
    path.write_text(json.dumps(document))
    path.with_suffix(".embeddings.npz").unlink()

    problems = verify_run(config.output_dir)

    assert any("used_count" in problem and "context-00001" in problem for problem in problems)
    assert any("embeddings.npz is missing" in problem for problem in problems)
    assert main(["verify", str(config.output_dir)]) == 1
    assert "problem:" in capsys.readouterr().out


def test_a_session_without_operation_is_nothing_learned_and_a_failed_reflection_a_failure(
    tmp_path: Path, recorded_dir: Path
) -> None:
    # pydantic-ai's TestModel never runs code successfully, so the Recursive Reflector's submission is
    # rejected until its retries run out and it returns a failed reflection (not a pipeline error).
    config = E2EConfig(
        output_dir=tmp_path / "rr",
        reflector_model="test",
        skill_manager_model="test",
        agent_model="test",
        user_model="test",
        task_limit=1,
        train_epochs=1,
        benchmark=False,
    )

    report = run_e2e(config, log=lambda _: None, models={"user": scripted_user()})

    assert [o.status for o in report.learning] == ["failed"]
    assert report.learning[0].detail.startswith("ReflectStep: the reflection failed: ")
    assert report.traces_learned == 0 and len(report.failures) == 1

    recorded = recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json"
    offline = E2EConfig(
        output_dir=tmp_path / "offline", traces=(recorded,), reflector_type="simple", train_epochs=2, benchmark=False
    )
    models = {"reflector": analysing_reflector(), "skill_manager": tagging_skill_manager()}

    report = run_e2e(offline, log=lambda _: None, models=models)  # type: ignore[arg-type]

    # Epoch 1 adds a skill; epoch 2 has nothing to tag or add: a finished session without operation.
    assert [o.status for o in report.learning] == ["learned", "nothing learned"]
    assert report.failures == () and report.traces_nothing_learned == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent-model", "openai/gpt-4.1-mini"], "mix offline and real models"),
        (
            [
                "--reflector-model",
                "openai/gpt-4.1-mini",
                "--skill-manager-model",
                "openai/gpt-4.1-mini",
                "--agent-model",
                "openai/gpt-4.1-mini",
                "--user-model",
                "openai/gpt-4.1-mini",
            ],
            "OPENAI_API_KEY is not set for openai/gpt-4.1-mini",
        ),
        (
            [
                "--agent-model",
                "nonsense-provider/x",
                "--user-model",
                "nonsense-provider/x",
                "--reflector-model",
                "nonsense-provider/x",
                "--skill-manager-model",
                "nonsense-provider/x",
                "--api-base",
                "http://127.0.0.1:9/v1",
            ],
            "unknown litellm provider",
        ),
        (
            ["--recheck", "--traces", "tests/data"],
            "--recheck runs the agent again on a training task, so it needs online learning: drop --traces",
        ),
    ],
)
def test_bad_roles_exit_2_in_one_line_before_any_model_is_called(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "run"

    code = main(["e2e", "--task-limit", "1", "--output-dir", str(out), *args])

    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1
    assert not (out / "train").exists() and not (out / "skillbook.json").exists()


def test_traces_holding_test_tasks_are_refused_unless_allowed(
    tmp_path: Path, recorded_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = recorded_dir / "sierra_gpt-4.1_airline_test20_1trial.json"

    code = main(["e2e", "--traces", str(recorded), "--output-dir", str(tmp_path / "refused")])

    assert code == 2
    assert "test-split tasks 2, 6, 8" in capsys.readouterr().err
    assert main(["e2e", "--traces", str(recorded), "--no-benchmark", "--output-dir", str(tmp_path / "learn-only")]) == 0


@pytest.mark.parametrize("damage", ["truncated", "empty folder", "no simulation"])
def test_traces_without_any_usable_simulation_exit_2(
    tmp_path: Path, recorded_dir: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    text = (recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json").read_text()
    traces = tmp_path / "traces"
    traces.mkdir()
    if damage == "truncated":
        (traces / "results.json").write_text(text[: len(text) // 2])
    elif damage == "no simulation":
        document = json.loads(text)
        document["simulations"] = []
        (traces / "results.json").write_text(json.dumps(document))

    code = main(["e2e", "--traces", str(traces), "--no-benchmark", "--output-dir", str(tmp_path / "run")])

    assert code == 2
    assert capsys.readouterr().err.startswith("ace-eval: error: --traces")


@pytest.mark.parametrize("damage", ["truncated", "simulations: [1]", "no simulation", "unknown task"])
def test_a_bad_traces_file_is_a_failure_of_its_own_and_the_good_file_is_learned_from(
    tmp_path: Path, recorded_dir: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    good = shutil.copy(recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json", tmp_path)
    text = Path(good).read_text()
    document = json.loads(text)
    bad = tmp_path / "bad.json"
    if damage == "truncated":
        bad.write_text(text[: len(text) // 2])
    else:
        if damage == "simulations: [1]":
            document["simulations"] = [1]
        elif damage == "no simulation":
            document["simulations"] = []
        else:
            document["simulations"][0]["task_id"] = "999"
        bad.write_text(json.dumps(document))
    out = tmp_path / "run"

    code = main(["e2e", "--traces", str(good), str(bad), "--no-benchmark", "--output-dir", str(out)])

    printed = capsys.readouterr().out
    assert code == 1
    assert "1 failure(s):" in printed and "bad.json" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit_status"] == 1 and summary["traces_learned"] == 1 and summary["traces"] == 2
    assert len(summary["failures"]) == 1 and "--traces: " in summary["failures"][0]
    logged = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert sorted(line["status"] for line in logged) == ["failed", "learned"]
    assert next(line for line in logged if line["status"] == "failed")["source_file"] == str(bad)


def test_learning_from_failures_leaves_the_unaided_full_reward_simulations_alone(tmp_path: Path) -> None:
    report, _ = _online(tmp_path, "all", learn_from="failures", train_epochs=1, benchmark=False)

    unaided_successes = [o for o in report.learning if o.reward == 1.0 and not o.injected_skill_ids]
    the_rest = [o for o in report.learning if o not in unaided_successes]
    assert unaided_successes and the_rest
    assert all(o.status == "nothing learned" and o.detail.startswith("not learned from") for o in unaided_successes)
    assert not any(o.detail.startswith("not learned from") for o in the_rest)
    assert any(o.status == "learned" for o in the_rest)


def test_offline_learning_from_recorded_traces(tmp_path: Path, recorded_dir: Path) -> None:
    recorded = shutil.copy(recorded_dir / "tau2trace_gpt-4.1-mini_airline_1sim.json", tmp_path)
    out = tmp_path / "run"

    code = main(["e2e", "--traces", str(recorded), "--no-benchmark", "--output-dir", str(out)])

    assert code == 0
    assert not (out / "train").exists() and not (out / "benchmark").exists()
    skillbook = Skillbook.load_from_file(out / "skillbook.json")
    simulation_id = json.loads(Path(recorded).read_text())["simulations"][0]["id"]
    assert {o.trace_uid for s in skillbook.skills() for o in s.occurrences} == {f"tau2:{simulation_id}"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["traces"] == summary["traces_learned"] == 1


def test_a_run_whose_simulations_all_fail_exits_1_and_prints_failures_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    # Real model strings against a closed local port: every request fails to connect.
    real = ["openai/nothing-listens"] * 4
    roles = [
        flag
        for pair in zip(["--agent-model", "--user-model", "--reflector-model", "--skill-manager-model"], real)
        for flag in pair
    ]

    code = main(
        [
            "e2e",
            "--task-limit",
            "1",
            "--train-epochs",
            "1",
            "--no-benchmark",
            "--output-dir",
            str(out),
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--api-key",
            "none",
            *roles,
        ]
    )

    printed = capsys.readouterr().out
    assert code == 1
    assert printed.index("1 failure(s):") < printed.index("skillbook:")
    assert "failure: learning epoch 1: task 0 trial 0: AgentStep:" in printed
    assert json.loads((out / "summary.json").read_text())["exit_status"] == 1
    assert "Give Feedback" not in printed
