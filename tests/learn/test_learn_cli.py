"""`ace learn`: TraceAnalyser over trace files into a skillbook, with a report and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from learn_roles import record_weather_run, reflector_model, skill_manager_model

from ace.cli import main, make_parser
from ace.skillbook import Skillbook


def _learn(argv: list[str]) -> int:
    """Run `ace learn` in-process on FunctionModel roles (the documented seam: Model instances)."""
    argv = ["learn", *argv, "--reflector-model", "x", "--skill-manager-model", "x", "--reflector-type", "simple"]
    args = make_parser(argv).parse_args(argv)
    args.reflector_model, args.skill_manager_model = reflector_model(), skill_manager_model()
    return int(args.handler(args))


def test_learning_from_spans_adds_a_skill_whose_provenance_names_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, book = tmp_path / "spans.jsonl", tmp_path / "skillbook.json"
    record_weather_run(spans)
    assert _learn([str(spans), "--skillbook", str(book)]) == 0
    [skill] = Skillbook.load_from_file(book).skills()
    assert skill.issue == "Weather questions about Paris."
    [occurrence] = skill.occurrences
    assert occurrence.trace_uid.startswith("otel:") and occurrence.source_system == "otel"
    span_id = occurrence.trace_uid.rsplit(":", 1)[1]
    assert occurrence.display_name == f"spans.jsonl: weather_agent run {span_id[:8]}"
    out = capsys.readouterr().out
    assert f"skills added: 1 ({skill.id})" in out
    assert "traces: learned from 1, nothing learned 0, failed 0" in out


def test_a_bad_spans_line_fails_its_trace_the_others_are_learned_and_the_exit_is_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, book = tmp_path / "spans.jsonl", tmp_path / "skillbook.json"
    record_weather_run(spans)
    with spans.open("a") as file:
        file.write("{not json\n")
    record_weather_run(spans, question="What is the weather in Rome?")
    assert _learn([str(spans), "--skillbook", str(book), "--epochs", "1"]) == 1
    out = capsys.readouterr().out
    [failure] = [line for line in out.splitlines() if line.startswith("failure: ")]
    assert f"spans.jsonl trace 1: LoadTracesStep: TraceFileError: trace file {spans} line" in failure
    assert "traces: learned from 2, nothing learned 0, failed 1" in out
    assert sorted(s.issue for s in Skillbook.load_from_file(book).skills()) == [
        "Weather questions about Paris.",
        "Weather questions about Rome.",
    ]


def test_an_existing_skillbook_is_extended_and_checkpoints_are_written(tmp_path: Path) -> None:
    spans, book, checkpoints = tmp_path / "spans.jsonl", tmp_path / "skillbook.json", tmp_path / "ckpt"
    record_weather_run(spans)
    seeded = Skillbook()
    seeded.add_skill(section="context", issue="Old skill.", keywords=["old"], insight="Keep it.")
    seeded.save_to_file(book)
    assert (
        _learn(
            [str(spans), "--skillbook", str(book), "--checkpoint-dir", str(checkpoints), "--checkpoint-interval", "1"]
        )
        == 0
    )
    assert sorted(s.issue for s in Skillbook.load_from_file(book).skills()) == [
        "Old skill.",
        "Weather questions about Paris.",
    ]
    assert (checkpoints / "latest.json").is_file()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["missing.jsonl", "--skillbook", "{book}", "--reflector-model", "test", "--skill-manager-model", "test"],
            "no such trace file or folder: missing.jsonl",
        ),
        (
            ["{spans}", "--skillbook", "{book}", "--reflector-model", "scripted", "--skill-manager-model", "test"],
            "scripted models belong to ace-eval",
        ),
        (
            [
                "{spans}",
                "--skillbook",
                "{book}",
                "--reflector-model",
                "nonsense-provider/x",
                "--skill-manager-model",
                "test",
            ],
            "--reflector-model",
        ),
    ],
    ids=["missing-trace", "scripted", "unknown-model"],
)
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    spans, book = tmp_path / "spans.jsonl", tmp_path / "skillbook.json"
    spans.write_text("{}\n")
    assert main(["learn", *(a.format(spans=spans, book=book) for a in argv)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not book.exists()


def test_a_malformed_skillbook_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spans, book = tmp_path / "spans.jsonl", tmp_path / "skillbook.json"
    record_weather_run(spans)
    book.write_text("{not a skillbook")
    assert (
        main(
            [
                "learn",
                str(spans),
                "--skillbook",
                str(book),
                "--reflector-model",
                "test",
                "--skill-manager-model",
                "test",
            ]
        )
        == 2
    )
    assert book.read_text() == "{not a skillbook"


def test_the_test_model_runs_offline_and_reports_what_happened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spans, book = tmp_path / "spans.jsonl", tmp_path / "skillbook.json"
    record_weather_run(spans)
    code = main(
        [
            "learn",
            str(spans),
            "--skillbook",
            str(book),
            "--reflector-model",
            "test",
            "--skill-manager-model",
            "test",
            "--reflector-type",
            "simple",
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1) and "traces: learned from" in out and book.is_file()
    assert (code == 1) == ("failure: " in out)


def test_the_learn_parser_loads_no_llm_client() -> None:
    import subprocess
    import sys

    code = (
        "from ace.cli import make_parser; make_parser(['learn', 't.jsonl', '--skillbook', 'sb.json']); import sys; "
        "print(' '.join(m for m in ('pydantic_ai', 'litellm', 'openai', 'onnxruntime') if m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split() == []
