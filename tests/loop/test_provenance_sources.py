"""Provenance in the loop: UpdateStep anchors the learning in the trace (trace_refs), and a skill
built from several traces (later sessions, deduplication) keeps one primary source, the others
supporting."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loop_roles import BagOfWordsEmbedder, skill_manager_model

from ace.deduplication import DeduplicationConfig, DeduplicationManager
from ace.roles import ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook
from ace.steps import ACEStepContext, Sample, UpdateStep, insight_source_for

RECORDED = "tau2trace_gpt-4.1-mini_airline_1sim.json"


def _recorded_trace(recorded_dir: Path) -> dict[str, Any]:
    results = json.loads((recorded_dir / RECORDED).read_text())
    return {"task": results["tasks"][0], "simulation": results["simulations"][0]}


def _quotable(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """The first assistant message with text, and a phrase of it."""
    for index, message in enumerate(messages):
        if message["role"] == "assistant" and isinstance(message.get("content"), str) and len(message["content"]) > 40:
            return index, " ".join(message["content"].split()[:8])
    raise AssertionError("no assistant text in the recorded simulation")


def _reflection(reasoning: str) -> ReflectorOutput:
    return ReflectorOutput(
        reasoning=reasoning, error_identification="e", root_cause_analysis="c", correct_approach="a", key_insight="k"
    )


def test_insight_source_refs_the_recorded_tau2_message_the_reflection_quotes(recorded_dir: Path) -> None:
    trace = _recorded_trace(recorded_dir)
    index, phrase = _quotable(trace["simulation"]["messages"])
    ctx = ACEStepContext(
        sample=Sample(question="q", id="s"), trace=trace, reflections=(_reflection(f'The agent wrote "{phrase}".'),)
    )

    source = insight_source_for(ctx)

    (ref,) = source.trace_refs
    assert index in ref.message_indices
    assert ref.excerpt_location == "trace" and ref.text_excerpt == phrase
    if ref.message_indices == (index,):
        assert ref.json_path == f"$.simulation.messages[{index}]"


async def test_update_step_puts_the_trace_refs_on_every_occurrence(recorded_dir: Path) -> None:
    trace = _recorded_trace(recorded_dir)
    index, phrase = _quotable(trace["simulation"]["messages"])
    book = Skillbook()
    step = UpdateStep(SkillManager(skill_manager_model(), embedder=BagOfWordsEmbedder()), book)
    ctx = ACEStepContext(
        sample=Sample(question="refund?", id="s"), trace=trace, reflections=(_reflection(f'"{phrase}" came too early'),)
    )

    await step(ctx)

    (skill,) = book.skills()
    (occurrence,) = skill.occurrences
    assert occurrence.relation == "primary"
    assert index in occurrence.trace_refs[0].message_indices


def test_a_merge_keeps_the_keepers_primary_trace_and_marks_absorbed_traces_supporting() -> None:
    issue, insight = "Refund requests for basic economy tickets are refused.", "Check the fare first."
    book = Skillbook()
    kept = book.add_skill(
        "context",
        issue,
        ["refund"],
        insight,
        insight_source=InsightSource(source_system="tau2", trace_id="a", relation="primary"),
    )
    book.tag_skill(kept.id, 1, insight_source=InsightSource(source_system="tau2", trace_id="b", relation="supporting"))
    other = book.add_skill(
        "context",
        issue.upper(),
        ["fare"],
        insight,
        insight_source=InsightSource(source_system="tau2", trace_id="c", relation="primary"),
    )
    book.tag_skill(other.id, 1, insight_source=InsightSource(source_system="tau2", trace_id="a", relation="supporting"))

    DeduplicationManager(DeduplicationConfig(embedder=BagOfWordsEmbedder())).run(book)

    occurrences = book.get_skill(kept.id).occurrences
    traces = [(o.trace_uid, o.relation) for o in occurrences if o.source_system == "tau2"]
    assert traces == [("tau2:a", "primary"), ("tau2:b", "supporting"), ("tau2:c", "supporting"), ("tau2:a", "primary")]
    (merge,) = [o for o in occurrences if o.source_system == "ace-dedup"]
    assert merge.relation is None
    assert len({uid for uid, relation in traces if relation == "primary"}) == 1
    assert book.get_skill(other.id).active is False
