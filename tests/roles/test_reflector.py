"""The one-pass Reflector puts the whole trace and the task inputs into its prompt."""

from __future__ import annotations

from typing import Any

from pydantic_ai.messages import ToolCallPart

from ace.roles import Reflector
from ace.skillbook import Skillbook

ANALYSIS = {
    "reasoning": "r",
    "error_identification": "e",
    "root_cause_analysis": "c",
    "correct_approach": "a",
    "key_insight": "k",
}


def _user_prompt(request_messages: list) -> str:
    return "\n".join(
        part.content for part in request_messages[0].parts if getattr(part, "part_kind", "") == "user-prompt"
    )


async def test_prompt_contains_the_recorded_trace_text(script, recorded_simulation: dict[str, Any]) -> None:
    model = script([ToolCallPart("final_result", ANALYSIS)])

    reflection = await Reflector(model.model).reflect(
        trace=recorded_simulation, question="Cancel EHGLP3", feedback="reward 1.0"
    )

    prompt = _user_prompt(model.requests[0])
    texts = [m["content"] for m in recorded_simulation["messages"] if m.get("content")]
    assert texts and all(text in prompt for text in texts)
    assert "Cancel EHGLP3" in prompt and "reward 1.0" in prompt
    assert reflection.key_insight == "k" and not reflection.failed


async def test_prompt_shows_injected_skills_with_ids_and_text(script) -> None:
    book = Skillbook()
    skill = book.add_skill("context", "Refunds need a cancelled flight", ["airline"], "Verify the flight status first")
    model = script([ToolCallPart("final_result", ANALYSIS)])

    await Reflector(model.model).reflect(trace="agent refunded", injected_skills=[skill])

    prompt = _user_prompt(model.requests[0])
    assert f"[{skill.id}]" in prompt and "Verify the flight status first" in prompt


async def test_oversized_trace_is_truncated_with_a_marker(script) -> None:
    model = script([ToolCallPart("final_result", ANALYSIS)])

    trace = "START " + "y" * 5_000 + " END"
    await Reflector(model.model, max_trace_chars=500).reflect(trace=trace)

    prompt = _user_prompt(model.requests[0])
    assert "START" in prompt and "END" in prompt
    assert f"TRACE TRUNCATED: {len(trace) - 500} of {len(trace)} characters cut" in prompt


async def test_the_verdict_follows_the_trace_in_the_prompt(script) -> None:
    model = script([ToolCallPart("final_result", ANALYSIS)])

    await Reflector(model.model).reflect(
        trace={"answer": "June 9, 2022", "reasoning": "I wrote the date correctly."},
        question="Write the date.",
        ground_truth="2022.06.09",
        feedback="Incorrect. The expected answer is: 2022.06.09",
    )

    prompt = _user_prompt(model.requests[0])
    order = [prompt.index(tag) for tag in ("<trace>", "<question>", "<agent_answer>", "<ground_truth>", "<feedback>")]
    assert order == sorted(order), "the question, the answer beside the ground truth, and the feedback follow the trace"
    assert "<agent_answer>\nJune 9, 2022\n</agent_answer>\n\n<ground_truth>\n2022.06.09\n</ground_truth>" in prompt


async def test_no_answer_block_without_a_ground_truth_or_an_answer(script) -> None:
    model = script([ToolCallPart("final_result", ANALYSIS)], [ToolCallPart("final_result", ANALYSIS)])
    reflector = Reflector(model.model)

    await reflector.reflect(trace={"answer": "June 9, 2022"}, question="q", feedback="Incorrect.")
    await reflector.reflect(trace=[{"role": "user", "content": "hi"}], question="q", ground_truth="x")

    assert all("<agent_answer>" not in _user_prompt(request) for request in model.requests)


async def test_the_prompt_ends_with_the_comparison_that_decides_the_lesson(script) -> None:
    reflector = Reflector(script().model)  # build_prompt sends nothing

    wrong = reflector.build_prompt(trace={"answer": "June 9, 2022"}, question="q", ground_truth="2022.06.09")
    right = reflector.build_prompt(trace={"answer": "2022.06.09"}, question="q", ground_truth="2022.06.09")

    assert wrong.endswith(
        "Answered: `June 9, 2022`. Expected: `2022.06.09`. What does the expected answer do differently?"
    )
    assert right.endswith("Judge the run by the feedback, not by the trace's own account of it.")
