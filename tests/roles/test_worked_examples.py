"""`SkillManager(worked_examples=True)`: a context skill added from a labelled run carries its example."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic_ai.messages import ToolCallPart

from ace.roles import ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook

REFLECTION = ReflectorOutput(
    reasoning="the agent wrote the reference without its prefix",
    error_identification="missing prefix",
    root_cause_analysis="house rule unknown",
    correct_approach="write the reference with its prefix",
    key_insight="invoice references carry a prefix",
)
QUESTION = "Give the reference of invoice number 8413, issued in 2026."
EXPECTED = "INV/2026/8413"
FINALIZE = ToolCallPart("finalize", {"reasoning": "added"})


def _add(section: str, insight: str | None) -> ToolCallPart:
    return ToolCallPart(
        "add_skill",
        {"section": section, "issue": "Giving an invoice reference", "keywords": ["invoice"], "insight": insight},
    )


async def _learn(
    script: Any, embedder: Any, *turns: list[ToolCallPart], worked_examples: bool, ground_truth: str | None
):
    """The one skill a session playing `turns` leaves in an empty skillbook."""
    book = Skillbook()
    manager = SkillManager(script(*turns).model, embedder=embedder, worked_examples=worked_examples)
    await manager.update_skills(
        reflections=[REFLECTION],
        skillbook=book,
        source=InsightSource(source_system="bench", trace_id="train-1", sample_question=QUESTION),
        ground_truth=ground_truth,
    )
    [skill] = book.skills()
    return skill


async def test_a_context_skill_learned_from_a_labelled_run_ends_with_its_worked_example(script, embedder) -> None:
    skill = await _learn(
        script,
        embedder,
        [_add("context", "Write the prefix first."), FINALIZE],
        worked_examples=True,
        ground_truth=EXPECTED,
    )

    assert skill.insight == f"Write the prefix first. Example: {QUESTION!r} -> {EXPECTED!r}"
    [added] = [o for o in skill.occurrences if o.operation_type == "ADD"]
    assert added.learning_text == skill.insight  # the audit log records the insight as stored


@pytest.mark.parametrize(
    ("section", "insight", "worked_examples", "ground_truth"),
    [
        ("context", f"Write it as {EXPECTED}.", True, EXPECTED),  # already quotes the expected answer
        ("context", "Write the prefix first.", False, EXPECTED),  # not asked for
        ("context", "Write the prefix first.", True, None),  # no label (verdict feedback)
        ("harness", None, True, EXPECTED),  # not agent-facing
    ],
)
async def test_the_insight_is_kept_as_written_otherwise(
    script, embedder, section: str, insight: str | None, worked_examples: bool, ground_truth: str | None
) -> None:
    skill = await _learn(
        script, embedder, [_add(section, insight), FINALIZE], worked_examples=worked_examples, ground_truth=ground_truth
    )

    assert skill.insight == insight


async def test_an_insight_rewritten_by_update_skill_keeps_the_worked_example(script, embedder) -> None:
    update = ToolCallPart(
        "update_skill",
        {"skill_id": "context-00001", "issue": "Giving an invoice reference", "insight": "Start with the prefix."},
    )
    skill = await _learn(
        script,
        embedder,
        [_add("context", "Write the prefix first.")],
        [update, FINALIZE],
        worked_examples=True,
        ground_truth=EXPECTED,
    )

    assert skill.insight == f"Start with the prefix. Example: {QUESTION!r} -> {EXPECTED!r}"
