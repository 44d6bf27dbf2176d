"""`ace serve --reranker NAME [--reranker-model M]`: the app's matcher gets the chosen reranker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import uvicorn

from ace.cli import main
from ace.retrieval.rerankers import FieldAwareReranker, LLMJudgeReranker


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    apps: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **_: apps.append(app))
    return apps


def test_serve_passes_the_chosen_reranker_to_the_app(skillbook_path: Path, served: list[Any]) -> None:
    assert main(["serve", str(skillbook_path), "--reranker", "llm-judge", "--reranker-model", "test"]) == 0

    [app] = served
    reranker = app.state.followed.matcher.reranker
    assert isinstance(reranker, LLMJudgeReranker) and reranker.name == "llm-judge/test"


def test_serve_uses_the_field_aware_reranker_by_default(skillbook_path: Path, served: list[Any]) -> None:
    assert main(["serve", str(skillbook_path)]) == 0

    [app] = served
    assert isinstance(app.state.followed.matcher.reranker, FieldAwareReranker)


def test_serve_bad_reranker_exits_2_with_one_line_before_serving(
    skillbook_path: Path, served: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", str(skillbook_path), "--reranker", "litellm"]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert "--reranker litellm needs --reranker-model" in line and not served
