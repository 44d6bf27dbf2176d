"""Provenance rules (ace.roles.provenance): trace refs anchored where the reflection's evidence is,
and one primary trace per skill with the others supporting."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ToolCallPart, ToolReturnPart

from ace.roles import ReflectorOutput, SkillManager
from ace.roles.provenance import MAX_TRACE_REFS, TRACE_EXCERPT_CHARS, trace_refs_for
from ace.skillbook import InsightSource, Skillbook, TraceRef

CONVERSATION = [
    {"role": "user", "content": "Please cancel reservation EHGLP3, I want my money back."},
    {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "EHGLP3"}}],
    },
    {"role": "tool", "content": '{"cabin": "basic_economy", "insurance": "no"}'},
    {"role": "assistant", "content": "Done, the full amount is refunded to your card."},
]


def _reflection(**fields: str) -> ReflectorOutput:
    base = dict(
        reasoning="",
        error_identification="refunded an ineligible booking",
        root_cause_analysis="",
        correct_approach="",
        key_insight="check insurance before cancelling",
    )
    return ReflectorOutput(**{**base, **fields})


def test_a_quote_found_in_a_tau2_message_refs_that_message_and_its_json_path() -> None:
    trace = {"task": {"id": "7"}, "simulation": {"id": "sim-1", "messages": CONVERSATION}}
    reflection = _reflection(
        reasoning='The agent said "the full amount is  REFUNDED to your card" although no insurance.'
    )

    (ref,) = trace_refs_for(trace, [reflection])

    assert ref == TraceRef(
        text_excerpt="the full amount is REFUNDED to your card",
        excerpt_location="trace",
        json_path="$.simulation.messages[3]",
        message_indices=(3,),
    )


def test_a_cited_message_index_refs_that_message_with_an_excerpt_of_it() -> None:
    reflection = _reflection(reasoning="At [2] the tool showed basic economy without insurance; [99] is out of range.")

    (ref,) = trace_refs_for(CONVERSATION, [reflection])

    assert (ref.message_indices, ref.json_path) == ((2,), "$[2]")
    assert "basic_economy" in ref.text_excerpt


def test_a_quote_in_tool_call_arguments_and_a_list_of_steps_are_found() -> None:
    steps = [{"action": "search", "query": "refund policy"}, {"action": "answer", "text": "refund granted"}]
    reflection = _reflection(reasoning="It searched `refund policy` and then answered 'refund granted'.")

    (ref,) = trace_refs_for(steps, [reflection])  # single quotes are not a quote (apostrophes)

    assert (ref.step_indices, ref.json_path, ref.message_indices) == ((0,), "$[0]", ())
    (tool_ref,) = trace_refs_for(CONVERSATION, [_reflection(reasoning='called "get_reservation_details" first')])
    assert tool_ref.message_indices == (1,)


def test_a_quote_found_in_several_messages_lists_them_without_one_json_path() -> None:
    trace = {
        "messages": [
            {"role": "user", "content": "cancel EHGLP3 now"},
            {"role": "assistant", "content": "I will cancel EHGLP3 now"},
        ]
    }

    (ref,) = trace_refs_for(trace, [_reflection(reasoning='"cancel EHGLP3 now"')])

    assert (ref.message_indices, ref.json_path) == ((0, 1), None)


def test_a_string_trace_and_a_mapping_are_referenced_as_a_whole_and_by_key() -> None:
    (text_ref,) = trace_refs_for(
        "user: refund please\nagent: refund granted at once", [_reflection(reasoning='"refund granted at once"')]
    )
    (key_ref,) = trace_refs_for(
        {"answer": "refund granted at once", "feedback": "wrong"}, [_reflection(reasoning='"refund granted at once"')]
    )

    assert (text_ref.text_excerpt, text_ref.json_path, text_ref.excerpt_location) == (
        "refund granted at once",
        None,
        "trace",
    )
    assert key_ref.json_path == "$.answer"


def test_without_anything_found_in_the_trace_the_ref_is_an_excerpt_of_the_reflection() -> None:
    long_error = "refunded an ineligible booking " * 20

    (ref,) = trace_refs_for(
        CONVERSATION, [_reflection(error_identification=long_error, reasoning='"not in the trace at all"')]
    )

    assert ref.excerpt_location == "reflection.error_identification"
    assert len(ref.text_excerpt) == TRACE_EXCERPT_CHARS and ref.text_excerpt.endswith("...")
    assert ref.message_indices == () and ref.json_path is None


def test_refs_are_capped_and_failed_reflections_give_none() -> None:
    messages = [{"role": "user", "content": f"message number {n:02d} here"} for n in range(10)]
    reflection = _reflection(reasoning=" ".join(f'"message number {n:02d}"' for n in range(10)))

    refs = trace_refs_for(messages, [reflection])

    assert [ref.message_indices for ref in refs] == [(n,) for n in range(MAX_TRACE_REFS)]
    assert trace_refs_for(messages, [ReflectorOutput.failure("budget")]) == ()


def test_relation_is_primary_for_the_first_trace_and_supporting_for_others() -> None:
    book = Skillbook()
    skill = book.add_skill(
        "context",
        "Refund rules",
        ["refund"],
        "Check the fare",
        insight_source=InsightSource(source_system="tau2", trace_id="a"),
    )  # no relation: older file

    assert skill.primary_trace_uid == "tau2:a"
    assert skill.relation_of("tau2:a") == "primary"
    assert skill.relation_of("tau2:b") == "supporting"


def _returns(messages: list[Any], tool: str) -> list[Any]:
    return [p.content for p in messages[-1].parts if isinstance(p, ToolReturnPart) and p.tool_name == tool]


async def test_sm_sessions_from_two_traces_leave_one_primary_and_a_supporting_source(script, embedder) -> None:
    book = Skillbook()
    refs = (TraceRef(text_excerpt="refunded", message_indices=(3,)),)
    first = InsightSource(source_system="tau2", trace_id="a", trace_refs=refs)
    second = InsightSource(source_system="tau2", trace_id="b")
    add = script(
        [
            ToolCallPart(
                "add_skill",
                {
                    "section": "context",
                    "issue": "Refunds in airline",
                    "keywords": ["refund"],
                    "insight": "Check the fare",
                },
            )
        ],
        [ToolCallPart("finalize", {"reasoning": "added"})],
    )
    await SkillManager(add.model, embedder=embedder).update_skills(
        reflections=[_reflection()], skillbook=book, source=first
    )
    (skill,) = book.skills()
    widen = script(
        [ToolCallPart("update_skill", {"skill_id": skill.id, "issue": "Refunds in airline and retail"})],
        [ToolCallPart("finalize", {"reasoning": "widened"})],
    )
    output = await SkillManager(widen.model, embedder=embedder).update_skills(
        reflections=[_reflection()], skillbook=book, source=second
    )

    occurrences = book.get_skill(skill.id).occurrences
    assert [(o.trace_uid, o.operation_type, o.relation) for o in occurrences] == [
        ("tau2:a", "ADD", "primary"),
        ("tau2:b", "UPDATE", "supporting"),
    ]
    assert occurrences[0].trace_refs == refs
    assert output.operations[0].insight_source.relation == "supporting"
