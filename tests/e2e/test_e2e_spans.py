"""`ace-eval e2e --spans-file` and `ace-eval spans`: the span file of a two-epoch scripted run
answers which sessions touched a skill, and the answer agrees with the skill's own provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ace.skillbook import Skillbook
from ace_eval.cli import main


def test_spans_of_a_skill_are_exactly_the_sessions_its_occurrences_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, spans_file = tmp_path / "run", tmp_path / "spans.jsonl"
    argv = [
        "e2e",
        "--task-limit",
        "3",
        "--train-epochs",
        "2",
        "--no-benchmark",
        "--skill-injection",
        "all",
        "--output-dir",
        str(out),
        "--spans-file",
        str(spans_file),
    ]
    assert main(argv) == 0
    capsys.readouterr()

    skillbook = Skillbook.load_from_file(out / "skillbook.json")
    skill = max(skillbook.skills(), key=lambda s: len(s.occurrences))
    assert any(o.operation_type == "TAG" for o in skill.occurrences)

    assert main(["spans", str(spans_file), "--skill", skill.id, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    mutations = [event for event in report["events"] if event["operation"] in {"ADD", "UPDATE", "TAG", "REMOVE"}]
    assert all(event["session"] == "sm.session" for event in mutations)
    assert [event["tool"] for event in mutations if event["operation"] == "ADD"] == ["add_skill"]
    assert sorted((e["operation"], e["trace_uid"], e["epoch"]) for e in mutations) == sorted(
        (o.operation_type, o.trace_uid, o.epoch) for o in skill.occurrences
    )
    used = [event for event in report["events"] if event["operation"] == "MARK_USED"]
    assert len(used) == skill.used_count
