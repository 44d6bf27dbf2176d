"""DeduplicationManager: exact and similar pairs are consolidated for real, with an audit trail."""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_roles import BagOfWordsEmbedder

from ace.deduplication import DeduplicationConfig, DeduplicationManager
from ace.skillbook import InsightSource, Skillbook, UpdateBatch

REFUND = "Refund requests for basic economy tickets without insurance are refused."
REFUND_INSIGHT = "Check the fare class and insurance before promising a refund."


def _source(trace_id: str) -> InsightSource:
    return InsightSource(source_system="tau2", trace_id=trace_id, epoch=1)


def _manager(**kwargs: object) -> DeduplicationManager:
    return DeduplicationManager(DeduplicationConfig(embedder=BagOfWordsEmbedder(), **kwargs))


def _book() -> Skillbook:
    book = Skillbook()
    book.add_skill("context", REFUND, ["refund"], REFUND_INSIGHT, insight_source=_source("a"))
    book.add_skill(
        "context",
        "Baggage allowance depends on the membership tier.",
        ["baggage"],
        "Look up the membership tier before quoting bags.",
        insight_source=_source("b"),
    )
    book.add_skill("context", REFUND.upper(), ["refund", "basic_economy"], REFUND_INSIGHT, insight_source=_source("c"))
    return book


def test_exact_duplicate_is_absorbed_with_its_keywords_and_provenance() -> None:
    book = _book()
    book.tag_skill("context-00003", 1)

    report = _manager().run(book)

    assert [(p.kept_id, p.other_id, p.kind) for p in report.pairs] == [("context-00003", "context-00001", "exact")]
    assert report.merged == 1
    kept, removed = book.get_skill("context-00003"), book.get_skill("context-00001")
    assert removed.active is False
    assert kept.keywords == ("refund", "basic_economy")
    # The keeper's trace stays its primary one; the absorbed skill's trace supports it.
    assert [(o.trace_uid, o.relation) for o in kept.occurrences if o.source_system == "tau2"][-1] == (
        "tau2:a",
        "supporting",
    )
    assert [o.operation_type for o in removed.occurrences][-1] == "REMOVE"
    assert [op.type for op in report.operations] == ["UPDATE", "UPDATE", "REMOVE"]
    assert len(book.skills()) == 2


def test_audit_trail_replays_the_consolidation_on_the_starting_skillbook(tmp_path: Path) -> None:
    book = _book()
    start = tmp_path / "start.json"
    book.save_to_file(start)

    report = _manager().run(book)
    replayed = Skillbook.load_from_file(start)
    replayed.apply_update(UpdateBatch(reasoning="dedup", operations=list(report.operations)))

    def content(b: Skillbook) -> list[tuple[str, bool, tuple[str, ...], int]]:
        return [(s.id, s.active, s.keywords, len(s.occurrences)) for s in b.skills(include_inactive=True)]

    assert content(replayed) == content(book)


def test_identical_skills_of_different_sections_are_never_merged_but_each_section_is_deduplicated() -> None:
    book = Skillbook()
    book.add_skill("context", REFUND, ["refund"], REFUND_INSIGHT)
    book.add_skill("harness", REFUND, ["refund"], REFUND_INSIGHT)
    book.add_skill("harness", REFUND.lower(), ["refund", "tau2"], REFUND_INSIGHT)

    report = _manager().run(book)

    assert [(p.kept_id, p.other_id, p.kind) for p in report.pairs] == [("harness-00001", "harness-00002", "exact")]
    assert [s.id for s in book.skills()] == ["context-00001", "harness-00001"]
    assert _manager().find_duplicates(book) == []


def test_there_is_no_option_to_merge_across_sections() -> None:
    # A section is the skill's audience (the agent's prompt, or the harness's issue catalog):
    # merging across it would take the problem away from one of them (see ace.deduplication).
    with pytest.raises(TypeError, match="within_section_only"):
        DeduplicationConfig(within_section_only=False)  # type: ignore[call-arg]


def test_a_pair_recorded_as_distinct_is_not_proposed() -> None:
    book = _book()
    book.record_keep_decision("context-00001", "context-00003", reasoning="refund vs basic economy", similarity=0.97)

    assert _manager().run(book).pairs == ()


def test_distinct_skills_are_left_alone_and_disabled_manager_does_nothing() -> None:
    book = Skillbook()
    book.add_skill("context", REFUND, ["refund"], REFUND_INSIGHT)
    book.add_skill("context", "Seat maps differ per aircraft type.", ["seats"], "Check the aircraft first.")

    assert _manager().run(book).pairs == ()
    assert _manager(enabled=False).run(_book()).pairs == ()


def test_dedup_step_runs_every_n_samples_inside_the_loop(roles: dict[str, object]) -> None:
    from ace.runners import ACE

    ace = ACE.from_roles(**roles, dedup_manager=_manager(), dedup_interval=3)
    ace.run(["same question?"] * 4)

    dedup_step = next(step for step in ace.pipeline.steps if type(step).__name__ == "DeduplicateStep")
    # The third sample to reach the step has had its update applied, as have the two before it.
    assert len(dedup_step.reports) == 1
    assert dedup_step.reports[0].merged >= 2
    assert len(ace.skillbook.skills(include_inactive=True)) == 4
    assert len(ace.skillbook.skills()) == 4 - dedup_step.reports[0].merged
