"""`ace-eval bench` from the command line: the offline plumbing run CI relies on, the report, task
files with bad lines, and bad input refused before any model is called."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_roles import shout_items, write_task_file

from ace.skillbook import Skillbook
from ace_eval.bench.arms import ARMS
from ace_eval.cli import main


def test_offline_conventions_run_is_a_plumbing_check_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code = main(
        ["bench", "conventions", "--output-dir", str(out), "--train-limit", "6", "--test-limit", "8", "--seed", "4"]
    )

    printed = capsys.readouterr().out
    assert code == 0
    assert "measures the plumbing of the benchmark, not learning" in printed
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["plumbing_only"] is True and data["exit_status"] == 0
    assert data["arms"] == list(ARMS) and list(data["scores"]) == list(ARMS)
    assert data["feedback"] == "labels" and data["seed"] == 4
    assert data["items"] == {"train": 6, "test": 8, "trials": 1, "test_by_kind": data["items"]["test_by_kind"]}
    assert sum(data["items"]["test_by_kind"].values()) == 8
    assert {(d["arm"], d["baseline"]) for d in data["differences"]} >= {("learned", "none"), ("learned", "icl")}
    assert len({score["accuracy"] for score in data["scores"].values()}) == 1  # scripted agents ignore every arm
    assert data["learning"]["samples"] == 6 and data["learning"]["failed"] == 0
    assert "api_key" not in json.dumps(data["config"])
    report_md = (out / "report.md").read_text(encoding="utf-8")
    assert "**Plumbing only**" in report_md and "feedback while learning: `labels`" in report_md
    for arm in ARMS:
        assert f"| {arm} |" in report_md
    assert (out / "skillbook.json").exists() and (out / "train_log.jsonl").exists()


def test_the_conventions_splits_are_sized_per_rule_from_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["bench", "conventions", "--output-dir", str(out), "--arms", "learned"]
    sizes = ["--train-per-rule", "1", "--train-controls", "2", "--test-per-rule", "6", "--test-controls", "3"]
    assert main([*argv, *sizes]) == 0

    items = json.loads((out / "report.json").read_text(encoding="utf-8"))["items"]
    assert items["train"] == 5 * 1 + 2 and items["test"] == 5 * 6 + 3
    by_kind = items["test_by_kind"]
    assert by_kind.pop("control") == 3 and len(by_kind) == 5 and set(by_kind.values()) == {6}


def test_report_names_the_verdict_feedback_mode_and_what_was_learned_from(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert (
        main(
            [
                "bench",
                "conventions",
                "--output-dir",
                str(out),
                "--train-limit",
                "3",
                "--test-limit",
                "3",
                "--feedback",
                "verdict",
                "--learn-from",
                "failures",
                "--arms",
                "none,icl",
            ]
        )
        == 0
    )
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["feedback"] == "verdict" and data["learn_from"] == "failures" and data["arms"] == ["none", "icl"]
    assert "feedback while learning: `verdict`, learning from `failures`" in (out / "report.md").read_text(
        encoding="utf-8"
    )
    assert data["targets"]["learned_beats_none"] is None  # the learned arm did not run


def test_a_task_file_with_a_bad_line_runs_the_rest_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl", shout_items(), extra_lines=("{broken",))
    out = tmp_path / "run"

    code = main(["bench", "tasks", str(tasks), "--output-dir", str(out)])

    printed = capsys.readouterr().out
    assert code == 1
    assert f"failure: {tasks} line 10: " in printed and "not valid JSON" in printed
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["arms"] == ["none", "learned", "all", "icl"]  # no oracle: a task file states no rules
    assert data["items"]["test"] == 6 and data["items"]["train"] == 3
    assert len(data["failures"]) == 1 and "line 10" in data["failures"][0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--arms", "oracle"], "states none; leave oracle out of --arms"),
        (
            ["--agent-model", "openai/gpt-4.1-mini", "--api-base", "http://127.0.0.1:9/v1"],
            "mix offline and real models",
        ),
        (["--arms", "none,none"], "name each arm once"),
        (["--agent-extra-body", '{"temperature": 1}'], "may not set temperature"),
    ],
)
def test_bad_input_is_refused_before_any_model_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl", shout_items())
    code = main(["bench", "tasks", str(tasks), "--output-dir", str(tmp_path / "run"), *argv])

    err = capsys.readouterr().err
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run" / "report.json").exists()


def test_a_task_file_without_test_items_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = write_task_file(tmp_path / "tasks.jsonl", tuple(i for i in shout_items() if i.split == "train"))
    assert main(["bench", "tasks", str(tasks), "--output-dir", str(tmp_path / "run")]) == 2
    assert "no usable test item" in capsys.readouterr().err


def test_an_unknown_arm_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "conventions", "--arms", "learned,memory"])
    assert exit_info.value.code == 2
    assert "choose among none, learned, all, icl, oracle" in capsys.readouterr().err


def test_an_extra_body_that_is_not_a_json_object_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["bench", "conventions", "--extra-body", '["cache_prompt"]'])
    assert exit_info.value.code == 2
    assert "expected a JSON object" in capsys.readouterr().err


def test_the_documented_example_task_file_runs_offline(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "bench_tasks.jsonl"
    from ace_eval.bench.task_file import load_task_file

    assert load_task_file(example).problems == ()
    out = tmp_path / "run"
    assert main(["bench", "tasks", str(example), "--output-dir", str(out)]) == 0
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data["items"]["test_by_kind"] == {"control": 2, "log_temperature": 2, "ticket_reference": 2}


def test_native_structured_output_reaches_the_agent_and_the_reflector(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["bench", "conventions", "--output-dir", str(out), "--train-limit", "3", "--test-limit", "3"]

    assert main([*argv, "--arms", "none,learned", "--structured-output", "native"]) == 0

    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    configured = {
        role: settings["configured"]["structured_output"] for role, settings in data["model_settings"].items()
    }
    assert configured == {"agent": "native", "reflector": "native", "skill_manager": "native"}
    assert data["learning"]["failed"] == 0 and data["learning"]["learned"] > 0


def test_spans_file_answers_which_session_added_each_learned_skill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, spans_file = tmp_path / "run", tmp_path / "spans.jsonl"
    argv = ["bench", "conventions", "--output-dir", str(out), "--train-limit", "3", "--test-limit", "3"]
    assert main([*argv, "--arms", "none,learned", "--spans-file", str(spans_file)]) == 0
    skills = Skillbook.load_from_file(out / "skillbook.json").skills()
    assert skills
    capsys.readouterr()

    for skill in skills:
        assert main(["spans", str(spans_file), "--skill", skill.id, "--json"]) == 0
        events = json.loads(capsys.readouterr().out)["events"]
        [added] = [event for event in events if event["operation"] == "ADD"]
        assert (added["session"], added["tool"]) == ("sm.session", "add_skill")
        assert added["trace_uid"] == next(o.trace_uid for o in skill.occurrences if o.operation_type == "ADD")


def test_a_saved_skillbook_is_scored_by_every_arm_but_icl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    argv = ["bench", "conventions", "--train-limit", "3", "--test-limit", "4"]
    assert main([*argv, "--output-dir", str(first), "--arms", "learned"]) == 0
    capsys.readouterr()

    assert main([*argv, "--output-dir", str(second), "--skillbook", str(first / "skillbook.json")]) == 0

    assert "no learning phase: scoring the" in capsys.readouterr().out
    data = json.loads((second / "report.json").read_text(encoding="utf-8"))
    assert data["arms"] == [arm for arm in ARMS if arm != "icl"]
    assert data["saved_skillbook"] == str(first / "skillbook.json") and data["learning"]["samples"] == 0
    assert [s.id for s in Skillbook.load_from_file(second / "skillbook.json").skills()] == [
        s.id for s in Skillbook.load_from_file(first / "skillbook.json").skills()
    ]
    html = (second / "report.html").read_text(encoding="utf-8")
    assert "skills scored from" in html and "training items" not in html
