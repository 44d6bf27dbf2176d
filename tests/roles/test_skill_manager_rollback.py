"""A SkillManager session is all-or-nothing: one that does not finalize leaves the skillbook as it was."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic_ai.messages import ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace.agentic import AgenticConfig
from ace.retrieval import SkillMatcher
from ace.roles import ReflectorOutput, SessionCheck, SkillManager, SkillManagerIncompleteError
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="the agent cancelled a basic economy booking",
    error_identification="cancelled without checking insurance",
    root_cause_analysis="policy not consulted",
    correct_approach="check insurance and membership first",
    key_insight="verify cancellation eligibility before cancelling",
)

ADD = ToolCallPart(
    "add_skill", {"section": "harness", "issue": "tau2 slow retries", "keywords": ["tau2"], "insight": None}
)
UPDATE = ToolCallPart(
    "update_skill", {"skill_id": "context-00001", "issue": "Wider cancellation rule.", "keywords": ["wide"]}
)
TAG = ToolCallPart("tag_skill", {"skill_id": "context-00001", "delta": -1})
REMOVE = ToolCallPart("remove_skill", {"skill_id": "harness-00001", "reason": "fixed upstream"})
SEARCH = ToolCallPart("search_skills", {"query": "anything"})
FINALIZE = ToolCallPart("finalize", {"reasoning": "done"})


def _populated(embedder: Any) -> Skillbook:
    """Two skills with history, their search and match vectors made by the session's own embedder
    (as after any earlier session)."""
    book = Skillbook()
    taught = InsightSource(source_system="tau2-airline", trace_id="task-1")
    book.add_skill("context", "Cancellation rule.", ["cancel"], "Check insurance first.", insight_source=taught)
    book.add_skill("harness", "Sandbox has no network.", ["sandbox"], insight_source=taught)
    book.tag_skill("context-00001", 1, insight_source=taught)
    skills = book.skills()
    vectors = embedder.embed([skill.embedding_text() for skill in skills])
    book.set_embeddings({skill.id: vector for skill, vector in zip(skills, vectors)}, model=embedder.name)
    SkillMatcher(book, embedder=embedder).refresh()
    return book


def _saved(book: Skillbook, path: Path) -> tuple[bytes, dict[str, Any]]:
    book.save_to_file(path)
    with np.load(path.with_name(path.stem + ".embeddings.npz")) as archive:
        vectors = {key: archive[key].tolist() for key in archive.files}
    return path.read_bytes(), vectors


async def _session(
    script, book: Skillbook, embedder, *turns: Any, max_requests: int = 20, check: SessionCheck | None = None
) -> Any:
    model = script(*turns)
    return await SkillManager(
        model.model, embedder=embedder, config=AgenticConfig(max_requests=max_requests)
    ).update_skills(
        reflections=[REFLECTION],
        skillbook=book,
        source=InsightSource(source_system="tau2-airline", trace_id="task-9"),
        injected_skill_ids=("context-00001",),
        check=check,
    )


def _raising(message: str):
    def turn(messages: list[Any]) -> list[ToolCallPart]:
        raise RuntimeError(message)

    return turn


async def test_a_session_that_raises_after_add_update_tag_remove_leaves_the_file_byte_identical(
    script, tmp_path: Path, embedder
) -> None:
    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")

    with pytest.raises(RuntimeError, match="provider died"):
        await _session(script, book, embedder, [ADD], [UPDATE], [TAG], [REMOVE], _raising("provider died"))

    assert _saved(book, tmp_path / "after.json") == before


async def test_an_exhausted_budget_rolls_the_session_back_and_lists_what_it_undid(
    script, tmp_path: Path, embedder
) -> None:
    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")

    with pytest.raises(SkillManagerIncompleteError, match="rolled back") as raised:
        await _session(script, book, embedder, [ADD, UPDATE], [TAG], *([[SEARCH]] * 5), max_requests=4)

    assert [op.type for op in raised.value.operations] == ["ADD", "UPDATE", "TAG"]
    assert _saved(book, tmp_path / "after.json") == before


async def test_a_single_tool_call_pass_without_finalize_is_rolled_back(script, tmp_path: Path, embedder) -> None:
    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")

    with pytest.raises(SkillManagerIncompleteError, match="without finalize"):
        await _session(script, book, embedder, [ADD, TAG], max_requests=1)

    assert _saved(book, tmp_path / "after.json") == before


async def test_a_single_tool_call_pass_that_finalizes_keeps_its_operations(script, embedder) -> None:
    book = _populated(embedder)

    output = await _session(script, book, embedder, [ADD, FINALIZE], max_requests=1)

    assert output.finished and [op.type for op in output.operations] == ["ADD"]
    assert book.get_skill("harness-00002") is not None


async def test_a_cancelled_session_is_rolled_back(tmp_path: Path, embedder) -> None:
    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")
    turns = iter([[ADD], [TAG]])
    waiting = asyncio.Event()

    async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        parts = next(turns, None)
        if parts is None:  # the third request never returns: the caller cancels it
            waiting.set()
            await asyncio.Event().wait()
        return ModelResponse(parts=parts)

    manager = SkillManager(FunctionModel(respond), embedder=embedder)
    task = asyncio.ensure_future(
        manager.update_skills(
            reflections=[REFLECTION],
            skillbook=book,
            source=InsightSource(source_system="t", trace_id="9"),
            injected_skill_ids=("context-00001",),
        )
    )
    await waiting.wait()
    assert book.get_skill("harness-00002") is not None  # the session's add is visible while it runs
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert _saved(book, tmp_path / "after.json") == before


async def test_rollback_keeps_what_other_writers_did_during_the_session(script, embedder) -> None:
    book = _populated(embedder)

    def meanwhile(messages: list[Any]) -> list[ToolCallPart]:
        book.mark_used(["context-00001"])  # the agent of another sample got this skill injected
        book.tag_skill("harness-00001", 0)  # another writer's observation
        raise RuntimeError("provider died")

    with pytest.raises(RuntimeError):
        await _session(script, book, embedder, [ADD, UPDATE], [TAG], meanwhile)

    context, harness = book.get_skill("context-00001"), book.get_skill("harness-00001")
    assert book.get_skill("harness-00002") is None
    assert (context.issue, context.keywords, context.helpful_count, context.harmful_count, context.used_count) == (
        "Cancellation rule.",
        ("cancel",),
        1,
        0,
        1,
    )
    assert [o.trace_id for o in context.occurrences] == ["task-1", "task-1"]
    assert harness.neutral_count == 1 and harness.occurrences[-1].source_system == "api"


async def test_after_a_rollback_the_next_added_skill_takes_the_id_the_failed_session_used(script, embedder) -> None:
    book = _populated(embedder)

    with pytest.raises(RuntimeError):
        await _session(script, book, embedder, [ADD], _raising("provider died"))

    assert book.add_skill("harness", "Next.", ["k"]).id == "harness-00002"


async def test_a_session_whose_check_fails_again_after_its_revision_is_undone_and_says_what_and_why(
    script, tmp_path: Path, embedder
) -> None:
    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")
    checked: list[list[str]] = []

    async def check(operations: Any) -> str | None:
        checked.append([op.type for op in operations])
        assert book.get_skill("harness-00002") is not None  # the check sees the session's mutations applied
        return "the lesson did not fix its own task"

    output = await _session(script, book, embedder, [ADD, UPDATE], [TAG, FINALIZE], [FINALIZE], check=check)

    assert checked == [["ADD", "UPDATE", "TAG"]] * 2  # finalize refused once with the reason, then undone
    assert output.finished and output.operations == ()
    assert [op.type for op in output.undone] == ["ADD", "UPDATE", "TAG"]
    assert output.undone_because == "the lesson did not fix its own task"
    assert _saved(book, tmp_path / "after.json") == before


async def test_a_check_that_passes_keeps_the_session_and_one_that_raises_undoes_it(
    script, tmp_path: Path, embedder
) -> None:
    async def passes(operations: Any) -> str | None:
        return None

    async def raises(operations: Any) -> str | None:
        raise RuntimeError("the recheck's agent fell over")

    kept = _populated(embedder)
    output = await _session(script, kept, embedder, [ADD, FINALIZE], check=passes)
    assert [op.type for op in output.operations] == ["ADD"] and output.undone == () and output.undone_because is None
    assert kept.get_skill("harness-00002") is not None

    book = _populated(embedder)
    before = _saved(book, tmp_path / "before.json")
    with pytest.raises(RuntimeError, match="fell over"):
        await _session(script, book, embedder, [ADD, FINALIZE], check=raises)
    assert _saved(book, tmp_path / "after.json") == before


async def test_a_session_without_mutations_is_not_checked(script, embedder) -> None:
    async def never(operations: Any) -> str | None:
        raise AssertionError("a session that changed nothing has nothing to check")

    output = await _session(script, _populated(embedder), embedder, [SEARCH], [FINALIZE], check=never)

    assert output.finished and output.operations == () and output.undone_because is None
