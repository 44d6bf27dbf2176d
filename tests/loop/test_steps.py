"""Individual ACE steps: matcher-driven injection, markdown export, provenance of UpdateStep."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ace.retrieval import SkillMatcher
from ace.roles import AgentOutput, ReflectorOutput
from ace.runners import ACE
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, AgentStep, ExportMarkdownStep, ReflectStep, Sample, insight_source_for


def _book() -> Skillbook:
    book = Skillbook()
    book.add_skill(
        "context",
        "Refund requests for cancelled flights: eligibility depends on fare class and travel insurance.",
        ["airline", "refund", "cancellation"],
        "Check fare class and insurance before promising a refund.",
    )
    book.add_skill(
        "context",
        "Kubernetes pods stuck in CrashLoopBackOff need their previous container logs inspected.",
        ["kubernetes", "debugging"],
        "Run kubectl logs --previous before restarting the pod.",
    )
    return book


def test_with_a_matcher_only_the_skills_that_apply_are_injected_and_counted(roles: dict[str, Any]) -> None:
    book = _book()
    ace = ACE.from_roles(**roles, skillbook=book, matcher=SkillMatcher(book))

    results = ace.run(
        [
            "My flight was cancelled, can I get a refund for my basic economy ticket?",
            "What is a good name for a cat?",
        ]
    )

    assert [r.output.injected_skill_ids for r in results] == [("context-00001",), ()]
    assert book.get_skill("context-00001").used_count == 1
    assert book.get_skill("context-00002").used_count == 0


def test_without_a_matcher_every_active_skill_is_injected(roles: dict[str, Any]) -> None:
    book = _book()
    book.remove_skill("context-00002", "outdated")
    ace = ACE.from_roles(**roles, skillbook=book)

    results = ace.run(["anything"])

    assert results[0].output.injected_skill_ids == ("context-00001",)


def test_export_markdown_step_writes_the_skillbook_every_n_samples(tmp_path: Path) -> None:
    book = _book()
    path = tmp_path / "out" / "skillbook.md"
    step = ExportMarkdownStep(book, path, interval=2)
    ctx = ACEStepContext(sample="s")

    step(ctx)
    assert not path.exists()
    step(ctx)

    text = path.read_text()
    assert "context-00001" in text and "context-00002" in text


def test_insight_source_carries_trace_identity_epoch_step_and_the_reflection() -> None:
    reflection = ReflectorOutput(
        reasoning="r",
        error_identification="promised a refund",
        root_cause_analysis="c",
        correct_approach="a",
        key_insight="check the fare first",
    )
    ctx = ACEStepContext(
        sample=Sample(question="refund?", id="case-7"),
        trace={"answer": "yes"},
        reflections=(reflection,),
        epoch=2,
        sample_index=4,
    )

    source = insight_source_for(ctx)

    assert (source.trace_uid, source.epoch, source.step) == ("ace:case-7", 2, 4)
    assert (source.sample_question, source.error_identification, source.learning_text) == (
        "refund?",
        "promised a refund",
        "check the fare first",
    )


def test_reflection_failure_names_the_first_failed_reflection_else_is_none() -> None:
    ok = ReflectorOutput(
        reasoning="r", error_identification="e", root_cause_analysis="c", correct_approach="a", key_insight="k"
    )
    unexplained = ReflectorOutput(
        reasoning="", error_identification="", root_cause_analysis="", correct_approach="", key_insight="", failed=True
    )

    def failure(*reflections: ReflectorOutput) -> str | None:
        return ACEStepContext(sample="q", reflections=reflections).reflection_failure

    assert failure() is None and failure(ok) is None
    assert failure(ok, ReflectorOutput.failure("no code ran")) == "no code ran"
    assert failure(unexplained) == "the reflector gave no reason"


def test_a_failed_reflection_contributes_no_learning_text() -> None:
    ctx = ACEStepContext(sample=Sample(question="q", id="x"), reflections=(ReflectorOutput.failure("budget"),))

    source = insight_source_for(ctx)

    assert source.error_identification is None and source.learning_text is None


async def test_reflect_step_refuses_injected_ids_it_cannot_show_to_the_reflector(roles: dict[str, Any]) -> None:
    ctx = ACEStepContext(sample="s", trace="answered 42", injected_skill_ids=("context-00001",))

    with pytest.raises(ValueError, match=r"\['context-00001'\] were injected but the context carries no skillbook"):
        await ReflectStep(roles["reflector"])(ctx)


async def test_reflect_step_shows_the_injected_skills_to_the_reflector(roles: dict[str, Any]) -> None:
    book = _book()
    seen: list[list[str]] = []

    class Recording:
        async def reflect(self, **kwargs: Any) -> ReflectorOutput:
            seen.append([skill.id for skill in kwargs["injected_skills"]])
            return ReflectorOutput.failure("recorded only")

    ctx = ACEStepContext(sample="s", trace="t", injected_skill_ids=("context-00002",), skillbook=book.view())

    await ReflectStep(Recording())(ctx)

    assert seen == [["context-00002"]]


async def test_agent_step_with_a_matcher_on_another_skillbook_fails_instead_of_dropping_skills(
    roles: dict[str, Any],
) -> None:
    import pytest

    step = AgentStep(roles["agent"], Skillbook(), matcher=SkillMatcher(_book()))
    ctx = ACEStepContext(
        sample=Sample(question="My flight was cancelled, can I get a refund for my basic economy ticket?")
    )

    with pytest.raises(ValueError, match="'context-00001', which is not in this skillbook"):
        await step(ctx)


def test_a_matcher_on_another_skillbook_is_refused_at_construction(roles: dict[str, Any]) -> None:
    import pytest

    book = _book()
    with pytest.raises(ValueError, match="another skillbook"):
        ACE.from_roles(**roles, skillbook=book, matcher=SkillMatcher(_book()))
    ACE.from_roles(**roles, skillbook=book, matcher=SkillMatcher(book.view()))


async def test_a_skill_undone_after_it_was_handed_out_is_not_counted_and_the_sample_goes_on() -> None:
    # A SkillManager session running beside the agent adds a skill, the agent is handed it, the
    # session is rolled back (the skill is gone): the sample still counts the skills that remain.
    book = Skillbook()
    kept = book.add_skill("context", "Kept", ["kept"], "Kept insight.")
    tentative = book.add_skill("context", "Tentative", ["tentative"], "Tentative insight.")

    class RolledBackMeanwhile:
        async def answer(self, question: str, *, context: str, skills: Any, sample: Any) -> AgentOutput:
            handed = await skills.for_task(question)
            book.purge(tentative.id)
            return AgentOutput(answer="a", reasoning="r", injected_skill_ids=handed.skill_ids)

    ctx = await AgentStep(RolledBackMeanwhile(), book)(ACEStepContext(sample=Sample(question="q")))

    assert ctx.injected_skill_ids == (kept.id, tentative.id)
    assert [(skill.id, skill.used_count) for skill in book.skills()] == [(kept.id, 1)]
