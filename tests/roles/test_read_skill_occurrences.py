"""read_skill (SkillManager and RecursiveReflector alike) shows a skill's occurrences as seed 000
says: the newest first, at most READ_SKILL_OCCURRENCES, and how many older ones were left out."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ToolCallPart, ToolReturnPart

from ace.roles import RecursiveReflector, ReflectorOutput, SkillManager
from ace.roles._skill_dicts import READ_SKILL_OCCURRENCES
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="r", error_identification="e", root_cause_analysis="c", correct_approach="a", key_insight="k"
)


def _book_with_occurrences(count: int) -> tuple[Skillbook, str]:
    book = Skillbook()
    first = InsightSource(source_system="tau2", trace_id="t0", epoch=1, learning_text="learned 0")
    skill = book.add_skill("context", "Refund rules", ["refund"], "Check the fare", insight_source=first)
    for n in range(1, count):
        book.tag_skill(
            skill.id,
            1,
            insight_source=InsightSource(source_system="tau2", trace_id=f"t{n}", epoch=1, learning_text=f"learned {n}"),
        )
    return book, skill.id


def _read_result(messages: list[Any]) -> dict[str, Any]:
    (result,) = [p.content for p in messages[-1].parts if isinstance(p, ToolReturnPart) and p.tool_name == "read_skill"]
    return result


async def test_sm_read_skill_shows_the_newest_occurrences_first_and_counts_the_rest(script, embedder) -> None:
    book, skill_id = _book_with_occurrences(READ_SKILL_OCCURRENCES + 3)
    seen: dict[str, Any] = {}

    def inspect(messages: list[Any]) -> list[ToolCallPart]:
        seen["read"] = _read_result(messages)
        return [ToolCallPart("finalize", {"reasoning": "read only"})]

    model = script([ToolCallPart("read_skill", {"skill_id": skill_id})], inspect)
    await SkillManager(model.model, embedder=embedder).update_skills(
        reflections=[REFLECTION], skillbook=book, source=InsightSource(source_system="tau2", trace_id="now")
    )

    read = seen["read"]
    newest = READ_SKILL_OCCURRENCES + 2
    assert [o["trace_uid"] for o in read["occurrences"]] == [
        f"tau2:t{n}" for n in range(newest, newest - READ_SKILL_OCCURRENCES, -1)
    ]
    assert read["older_occurrences"] == 3
    assert read["occurrences"][0]["operation_type"] == "TAG"
    assert "occurrence_count" not in read and "recent_occurrences" not in read


async def test_rr_read_skill_has_the_same_shape(script, embedder) -> None:
    book, skill_id = _book_with_occurrences(2)
    seen: dict[str, Any] = {}

    def inspect(messages: list[Any]) -> list[ToolCallPart]:
        seen["read"] = _read_result(messages)
        return [
            ToolCallPart(
                "finalize",
                {
                    "reasoning": "r",
                    "error_identification": "e",
                    "root_cause_analysis": "c",
                    "correct_approach": "a",
                    "key_insight": "k",
                },
            )
        ]

    model = script(
        [ToolCallPart("execute_code", {"code": "print(1)"}), ToolCallPart("read_skill", {"skill_id": skill_id})],
        inspect,
    )
    await RecursiveReflector(model.model, skillbook=book, embedder=embedder).reflect(trace="t")

    read = seen["read"]
    assert [(o["trace_uid"], o["operation_type"], o["learning_text"]) for o in read["occurrences"]] == [
        ("tau2:t1", "TAG", "learned 1"),
        ("tau2:t0", "ADD", "learned 0"),
    ]
    assert read["older_occurrences"] == 0
