"""The audit log: operations round-trip through JSON and replaying them rebuilds the skillbook."""

from __future__ import annotations

import json

import pytest

from ace.skillbook import InsightSource, Skillbook, SkillbookError, UpdateBatch, UpdateOperation


def _session(book: Skillbook, source: InsightSource) -> UpdateBatch:
    """Run a SkillManager-like session on `book`, recording each mutation as it happens."""
    ops = []
    added = book.add_skill(
        "context", "Refund rules differ by fare.", ["airline", "refund"], "Check the fare first.", insight_source=source
    )
    ops.append(
        UpdateOperation(
            type="ADD",
            section="context",
            skill_id=added.id,
            issue=added.issue,
            keywords=added.keywords,
            insight=added.insight,
            insight_source=source,
        )
    )
    wider = source.replace(trace_id="task-12", epoch=2)
    book.update_skill(
        "context-00001",
        issue="Cabin rules apply to all legs, on every booking API.",
        keywords=["airline", "cabin_class"],
        insight_source=wider,
    )
    ops.append(
        UpdateOperation(
            type="UPDATE",
            skill_id="context-00001",
            issue="Cabin rules apply to all legs, on every booking API.",
            keywords=("airline", "cabin_class"),
            insight_source=wider,
        )
    )
    for skill_id, delta in [(added.id, 1), ("context-00001", -1), (added.id, 0)]:
        book.tag_skill(skill_id, delta, insight_source=source)
        ops.append(UpdateOperation(type="TAG", skill_id=skill_id, delta=delta, insight_source=source))
    book.remove_skill("harness-00001", "fixed upstream", insight_source=source)
    ops.append(UpdateOperation(type="REMOVE", skill_id="harness-00001", reason="fixed upstream", insight_source=source))
    return UpdateBatch("Generalised the cabin rule, added the refund rule.", ops)


def _content(book: Skillbook) -> list[tuple]:
    return [
        (
            s.id,
            s.section,
            s.keywords,
            s.issue,
            s.insight,
            s.active,
            s.used_count,
            s.helpful_count,
            s.harmful_count,
            s.neutral_count,
            s.occurrences,
        )
        for s in book.skills(include_inactive=True)
    ]


def test_replaying_a_session_reproduces_the_final_skillbook(skillbook: Skillbook, source: InsightSource) -> None:
    start = Skillbook.from_dict(skillbook.to_dict())
    batch = _session(skillbook, source)
    start.apply_update(batch)
    assert _content(start) == _content(skillbook)


def test_replay_from_serialised_log_reproduces_the_final_skillbook(skillbook: Skillbook, source: InsightSource) -> None:
    start = Skillbook.from_dict(skillbook.to_dict())
    log = json.dumps(_session(skillbook, source).to_json())
    start.apply_update(UpdateBatch.from_json(json.loads(log)))
    assert _content(start) == _content(skillbook)


def test_update_batch_json_round_trip(skillbook: Skillbook, source: InsightSource) -> None:
    batch = _session(skillbook, source)
    assert UpdateBatch.from_json(batch.to_json()) == batch


def test_failing_operation_leaves_the_skillbook_unchanged(skillbook: Skillbook) -> None:
    before = _content(skillbook)
    batch = UpdateBatch(
        "r",
        [
            UpdateOperation(type="TAG", skill_id="context-00001", delta=1),
            UpdateOperation(type="ADD", section="harness", issue="new", keywords=("k",)),
            UpdateOperation(type="UPDATE", skill_id="context-00077", issue="x"),
        ],
    )
    with pytest.raises(KeyError, match="context-00077"):
        skillbook.apply_update(batch)
    assert _content(skillbook) == before
    assert skillbook.add_skill("harness", "after", ["k"]).id == "harness-00002"


def test_add_with_a_purged_id_raises(skillbook: Skillbook) -> None:
    skillbook.purge("harness-00001")
    batch = UpdateBatch(
        "r", [UpdateOperation(type="ADD", section="harness", skill_id="harness-00001", issue="i", keywords=("k",))]
    )
    with pytest.raises(SkillbookError, match="harness-00001"):
        skillbook.apply_update(batch)


def test_add_with_a_recorded_id_that_exists_raises(skillbook: Skillbook) -> None:
    batch = UpdateBatch(
        "r", [UpdateOperation(type="ADD", section="harness", skill_id="harness-00001", issue="i", keywords=("k",))]
    )
    with pytest.raises(SkillbookError, match="harness-00001"):
        skillbook.apply_update(batch)


def test_kayba013_tag_delta_in_metadata_is_read() -> None:
    op = UpdateOperation.from_json(
        {"type": "tag", "section": "context", "skill_id": "context-00001", "metadata": {"delta": -1}}
    )
    assert (op.type, op.delta) == ("TAG", -1)


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"type": "MERGE", "skill_id": "context-00001"}, "type"),
        ({"type": "TAG", "skill_id": "context-00001", "delta": 5}, "delta"),
        ({"type": "UPDATE", "issue": "x"}, "skill_id"),
        ({"type": "ADD", "issue": "x"}, "section"),
        ({"type": "ADD", "section": "context", "content": "v1"}, "content"),
    ],
)
def test_invalid_operation_json_raises_naming_the_field(payload: dict, field: str) -> None:
    with pytest.raises(SkillbookError, match=field):
        UpdateOperation.from_json(payload)
