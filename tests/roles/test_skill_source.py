"""SkillSource hands out skills by policy (matched, all, tool) and records exactly what it handed out;
the Agent role uses it, with a read_skill tool in `tool` mode."""

from __future__ import annotations

import pytest
from pydantic_ai.messages import ToolCallPart, ToolReturnPart

from ace.retrieval import SkillMatcher, default_embedder
from ace.roles import Agent, SkillSource, UnknownSkillError
from ace.roles.worked_examples import worked_example
from ace.skillbook import Skill, Skillbook


@pytest.fixture
def book() -> tuple[Skillbook, Skill, Skill]:
    skillbook = Skillbook()
    cancel = skillbook.add_skill(
        "context",
        "Cancelling a basic economy airline reservation: it is refundable only with travel insurance.",
        ["airline", "cancellation", "basic_economy"],
        "Check the cabin and the insurance before calling cancel_reservation.",
    )
    bags = skillbook.add_skill(
        "context",
        "Checked baggage allowance for gold members flying economy.",
        ["airline", "baggage"],
        "Count free bags from membership and cabin before charging.",
    )
    return skillbook, cancel, bags


async def test_matched_hands_out_only_the_skills_the_matcher_finds_for_the_task(book) -> None:
    skillbook, cancel, _ = book
    source = SkillSource(skillbook, injection="matched", matcher=SkillMatcher(skillbook, embedder=default_embedder()))

    injected = await source.for_task("Hi, I need to cancel my basic economy reservation and get my money back.")

    assert injected.skill_ids == (cancel.id,)
    assert cancel.insight in injected.text
    assert source.used_skill_ids == (cancel.id,)


async def test_matched_on_an_unrelated_or_blank_task_hands_out_nothing(book) -> None:
    skillbook, _, _ = book
    source = SkillSource(skillbook, injection="matched", matcher=SkillMatcher(skillbook, embedder=default_embedder()))

    assert (await source.for_task("Write a haiku about autumn leaves.")).skill_ids == ()
    assert (await source.for_task("   ")).text == ""
    assert source.used_skill_ids == ()


async def test_all_hands_out_every_active_skill(book) -> None:
    skillbook, cancel, bags = book
    skillbook.remove_skill(bags.id, "outdated")
    source = SkillSource(skillbook, injection="all")

    injected = await source.for_task("anything")

    assert injected.skill_ids == (cancel.id,) and source.used_skill_ids == (cancel.id,)
    assert injected.text == skillbook.as_prompt()


async def test_tool_lists_ids_and_issues_and_records_only_what_is_read(book) -> None:
    skillbook, cancel, bags = book
    source = SkillSource(skillbook, injection="tool")

    catalog = await source.for_task("anything")

    assert catalog.skill_ids == () and source.used_skill_ids == ()
    assert f"[{cancel.id}] {cancel.issue}" in catalog.text and f"[{bags.id}] {bags.issue}" in catalog.text
    assert cancel.insight not in catalog.text
    assert bags.insight in source.read(bags.id)
    source.read(bags.id)  # a second read is still one use
    assert source.used_skill_ids == (bags.id,)
    with pytest.raises(UnknownSkillError, match=f"the skills you can read are: {cancel.id}, {bags.id}"):
        source.read("context-09999")


def test_a_policy_that_does_not_fit_the_matcher_is_refused(book) -> None:
    skillbook, _, _ = book
    with pytest.raises(ValueError, match="a matcher is needed for injection='matched'"):
        SkillSource(skillbook, injection="matched")
    with pytest.raises(ValueError, match="only for it"):
        SkillSource(skillbook, injection="tool", matcher=SkillMatcher(skillbook, embedder=default_embedder()))
    with pytest.raises(ValueError, match="injection must be one of matched, all, tool"):
        SkillSource(skillbook, injection="some")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="only offered with injection='tool'"):
        SkillSource(skillbook, injection="all").read("context-00001")


async def test_agent_in_tool_mode_reads_a_skill_through_its_tool_and_reports_it(book, script) -> None:
    skillbook, cancel, bags = book
    model = script(
        [ToolCallPart("read_skill", {"skill_id": "context-09999"})],
        [ToolCallPart("read_skill", {"skill_id": cancel.id})],
        [ToolCallPart("final_result", {"reasoning": "read the cancellation skill", "answer": "check insurance"})],
    )
    source = SkillSource(skillbook, injection="tool")

    output = await Agent(model.model).answer("Can I cancel?", skills=source)

    prompt = "\n".join(str(part.content) for part in model.requests[0][0].parts if part.part_kind == "user-prompt")
    assert f"[{bags.id}] {bags.issue}" in prompt and bags.insight not in prompt
    returns = [
        part
        for message in model.requests[2]
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolReturnPart)
    ]
    assert cancel.insight in str(returns[-1].content)
    assert output.injected_skill_ids == (cancel.id,) == source.used_skill_ids


async def test_agent_with_a_source_injects_the_skills_of_its_question(book, script) -> None:
    skillbook, cancel, bags = book
    model = script([ToolCallPart("final_result", {"reasoning": "r", "answer": "a"})])

    output = await Agent(model.model).answer("Can I cancel?", skills=SkillSource(skillbook, injection="all"))

    prompt = "\n".join(str(part.content) for part in model.requests[0][0].parts if part.part_kind == "user-prompt")
    assert output.injected_skill_ids == (cancel.id, bags.id)
    assert cancel.insight in prompt and bags.insight in prompt


async def test_a_withheld_worked_example_is_cut_from_the_insights_handed_out_and_kept_in_the_skillbook() -> None:
    example = worked_example("Give the reference of invoice 8413.", "INV/2026/8413")
    assert example is not None
    skillbook = Skillbook()
    rule = skillbook.add_skill("context", "Invoice references", ["invoice"], f"Write the prefix first. {example.text}")
    only = skillbook.add_skill("context", "Invoice numbers", ["invoice"], example.text)
    other = skillbook.add_skill("context", "Dates", ["date"], "Write dates as YYYY.MM.DD.")

    injected = await SkillSource(skillbook, injection="all", withheld=example).for_task("anything")
    read = SkillSource(skillbook, injection="tool", withheld=example).read(rule.id)

    assert example.text not in injected.text and example.text not in read
    assert "Insight: Write the prefix first.\n" in f"{read}\n" and "Write the prefix first." in injected.text
    assert "(withheld: this insight is only a worked example" in injected.text  # the skill `only`
    assert other.insight is not None and other.insight in injected.text
    assert injected.skill_ids == (rule.id, only.id, other.id)
    assert skillbook.get_skill(rule.id) == rule and skillbook.get_skill(only.id) == only
