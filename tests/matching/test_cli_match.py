"""`ace match SKILLBOOK.json "task" [--limit N] [--json]`."""

from __future__ import annotations

import json

import pytest

from ace.cli import main

from .fixture_skills import CRASHLOOP

POD_TASK = "The worker pod is in CrashLoopBackOff and kubectl logs prints nothing. Find out why it crashes."


@pytest.fixture
def skillbook_path(tmp_path, skillbook):
    path = tmp_path / "skillbook.json"
    skillbook.save_to_file(path)
    return path


def test_json_output_lists_the_matches_like_the_http_api(skillbook_path, capsys):
    assert main(["match", str(skillbook_path), POD_TASK, "--json"]) == 0

    [match] = json.loads(capsys.readouterr().out)
    assert (match["id"], match["matched_on"]) == (CRASHLOOP, "issue")
    assert list(match) == ["id", "score", "matched_on", "section", "keywords", "issue"]


def test_text_output_prints_one_line_per_match(skillbook_path, capsys):
    assert main(["match", str(skillbook_path), POD_TASK]) == 0

    [line] = capsys.readouterr().out.splitlines()
    assert CRASHLOOP in line and "matched on issue" in line


def test_task_nothing_applies_to_says_so(skillbook_path, capsys):
    assert main(["match", str(skillbook_path), "Write a haiku about autumn leaves."]) == 0

    assert capsys.readouterr().out.strip() == "no skill applies to this task"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [(["missing.json", "task"], "no such skillbook file"), (["{path}", "task", "--limit", "0"], "--limit")],
)
def test_bad_input_exits_2_with_a_one_line_message(skillbook_path, capsys, arguments, message):
    argv = ["match", *(a.format(path=skillbook_path) for a in arguments)]

    assert main(argv) == 2
    assert message in capsys.readouterr().err


class _BrokenEmbedder:
    name = "test/broken"
    dim = 8

    def embed(self, texts):
        raise ConnectionError("embedding service unreachable")


def test_an_embedding_failure_is_a_one_line_error_not_a_traceback(skillbook_path, capsys, monkeypatch):
    monkeypatch.setattr("ace.retrieval.default_embedder", _BrokenEmbedder)

    assert main(["match", str(skillbook_path), POD_TASK]) == 2

    err = capsys.readouterr().err
    assert err.startswith("ace: error: matching failed:") and "unreachable" in err
    assert len(err.strip().splitlines()) == 1


def test_match_writes_no_file_and_leaves_the_skillbook_as_it_was(skillbook_path, capsys):
    before = {path.name: path.read_bytes() for path in skillbook_path.parent.iterdir()}

    assert main(["match", str(skillbook_path), POD_TASK]) == 0
    first = capsys.readouterr().out
    assert main(["match", str(skillbook_path), POD_TASK]) == 0

    assert capsys.readouterr().out == first
    assert {path.name: path.read_bytes() for path in skillbook_path.parent.iterdir()} == before


def test_llm_judge_reranker_scores_the_shortlist_with_the_named_model(skillbook_path, capsys):
    # "test" is pydantic-ai's TestModel: its verdict (applies=False, confidence 0) scores every skill 0.5.
    argv = ["match", str(skillbook_path), POD_TASK, "--json", "--reranker", "llm-judge", "--reranker-model", "test"]

    assert main(argv) == 0

    scores = {match["score"] for match in json.loads(capsys.readouterr().out)}
    assert scores <= {0.5}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--reranker", "cosine"], "unknown --reranker 'cosine'; choose one of field-aware, onnx-cross-encoder"),
        (["--reranker", "llm-judge"], "--reranker llm-judge needs --reranker-model"),
        (["--reranker", "llm-judge", "--reranker-model", "nosuchprovider/x"], "unknown litellm provider"),
        (["--reranker", "onnx-cross-encoder", "--reranker-model", "/nonexistent"], "no model.onnx"),
        (["--reranker-model", "openai/gpt-4.1-mini"], "field-aware takes no --reranker-model"),
    ],
    ids=["unknown-name", "missing-model", "bad-model-string", "missing-onnx-folder", "model-for-field-aware"],
)
def test_bad_reranker_choice_exits_2_with_one_line(skillbook_path, capsys, options, message):
    assert main(["match", str(skillbook_path), POD_TASK, *options]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("ace: error: ") and message in line


def test_a_task_over_the_front_doors_limit_is_refused_in_one_line(skillbook_path, capsys):
    from ace.serving import MAX_TASK_CHARS

    assert main(["match", str(skillbook_path), "x" * (MAX_TASK_CHARS + 1)]) == 2

    err = capsys.readouterr().err
    assert "over the 500,000-character limit" in err and err.count("\n") == 1
