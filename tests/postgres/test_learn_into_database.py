"""`ace learn --skillbook postgresql://...` learns into the database under `Skillbook.locked`."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.cli import CommandError, make_parser
from ace.skillbook import Skillbook


def _reflector() -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart(
                    info.output_tools[0].name,
                    {
                        "reasoning": "r",
                        "error_identification": "no booking id asked",
                        "root_cause_analysis": "c",
                        "correct_approach": "ask for it",
                        "key_insight": "ask for the booking id before a refund",
                    },
                )
            ]
        )

    return FunctionModel(respond)


def _skill_manager(fail: bool = False) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(part, ToolReturnPart) for part in messages[-1].parts):
            if fail:
                raise RuntimeError("the provider went away")
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "added"})])
        return ModelResponse(
            parts=[
                ToolCallPart(
                    "add_skill",
                    {
                        "section": "context",
                        "issue": "Refund requests without a booking id.",
                        "keywords": ["refund"],
                        "insight": "Ask for the booking id first.",
                    },
                )
            ]
        )

    return FunctionModel(respond)


def _learn(trace: Path, url: str, *, fail: bool = False) -> int:
    argv = [
        "learn",
        str(trace),
        "--skillbook",
        url,
        "--reflector-model",
        "x",
        "--skill-manager-model",
        "x",
        "--reflector-type",
        "simple",
    ]
    args = make_parser(argv).parse_args(argv)
    args.reflector_model, args.skill_manager_model = _reflector(), _skill_manager(fail)
    return int(args.handler(args))


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"question": "Refund my flight", "feedback": "wrong: no booking id was asked"}))
    return path


def test_learning_into_a_database_writes_the_skill_there_and_no_local_file(
    trace: Path, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())

    assert _learn(trace, pg_url) == 0

    [skill] = Skillbook.load_from_file(pg_url).skills()
    assert skill.issue == "Refund requests without a booking id."
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    out = capsys.readouterr().out
    assert "skills added: 1 (context-00001)" in out and f"-> {pg_url}" in out


def test_a_failed_session_writes_nothing_to_the_database_and_adds_nothing_to_the_report(
    trace: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("harness", "Seed skill.", ["seed"])
    document = Skillbook.load_from_file(pg_url).to_dict()

    assert _learn(trace, pg_url, fail=True) == 1

    assert Skillbook.load_from_file(pg_url).to_dict() == document
    out = capsys.readouterr().out
    assert "skills added: 0" in out and "traces: learned from 0, nothing learned 0, failed 1" in out


def _hold(url: str, ready: Any, release: Any) -> None:
    with Skillbook.locked(url) as skillbook:  # another learner, mid-run
        skillbook.add_skill("harness", "Held.", ["held"])
        ready.set()
        release.wait(60)


def test_a_second_learner_is_refused_while_the_first_holds_the_skillbook(trace: Path, pg_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(pg_url, ready, release))
    holder.start()
    try:
        assert ready.wait(60)
        with pytest.raises(CommandError, match="is locked by another writer; try again when it is done"):
            _learn(trace, pg_url)
    finally:
        release.set()
        holder.join(60)
    assert holder.exitcode == 0
    assert [s.issue for s in Skillbook.load_from_file(pg_url).skills()] == ["Held."]
