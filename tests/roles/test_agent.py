"""The Agent renders skills into its prompt and reports exactly the ids it rendered."""

from __future__ import annotations

from pydantic_ai.messages import ToolCallPart

from ace.roles import Agent, InjectedSkills
from ace.skillbook import Skill, Skillbook


def _answer_turn() -> list[ToolCallPart]:
    return [ToolCallPart("final_result", {"reasoning": "policy says so", "answer": "no refund"})]


def _user_prompt(request_messages: list) -> str:
    return "\n".join(
        part.content for part in request_messages[0].parts if getattr(part, "part_kind", "") == "user-prompt"
    )


def _book() -> tuple[Skillbook, Skill, Skill]:
    book = Skillbook()
    harness = book.add_skill("harness", "tau2 user simulator stops early on long lists", ["tau2", "user_sim"])
    context = book.add_skill(
        "context",
        "Basic economy bookings cannot be cancelled without insurance",
        ["airline", "cancellation"],
        "Check membership and insurance before cancelling",
    )
    return book, harness, context


async def test_matched_skills_are_rendered_and_reported_in_prompt_order(script) -> None:
    _, harness, context = _book()
    model = script(_answer_turn())

    output = await Agent(model.model).answer("Can I cancel?", context="user: gold member", skills=[harness, context])

    prompt = _user_prompt(model.requests[0])
    assert context.insight in prompt and harness.issue in prompt
    assert "user: gold member" in prompt and "Can I cancel?" in prompt
    # context skills are rendered before harness skills
    assert output.injected_skill_ids == (context.id, harness.id)
    assert prompt.index(context.id) < prompt.index(harness.id)
    assert (output.answer, output.reasoning) == ("no refund", "policy says so")


async def test_whole_skillbook_injection_reports_only_active_skills(script) -> None:
    book, removed, kept = _book()
    book.remove_skill(removed.id, "outdated")
    model = script(_answer_turn())

    output = await Agent(model.model).answer("Can I cancel?", skills=InjectedSkills.from_skillbook(book))

    assert output.injected_skill_ids == (kept.id,)
    prompt = _user_prompt(model.requests[0])
    assert kept.id in prompt and removed.id not in prompt


async def test_no_skills_means_no_injected_ids_and_no_skills_block(script) -> None:
    model = script(_answer_turn())
    output = await Agent(model.model).answer("Can I cancel?")
    assert output.injected_skill_ids == ()
    assert "<skills>" not in _user_prompt(model.requests[0])
