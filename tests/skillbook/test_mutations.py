"""Mutations: ids, field semantics, provenance trail, embeddings invalidation, counters."""

from __future__ import annotations

import getpass

import numpy as np
import pytest

from ace.skillbook import InsightSource, Skill, Skillbook, SkillbookError, SkillNotFoundError, manual_source


def _old_skill_book() -> Skillbook:
    """A skillbook whose only skill was created and last updated in 2020."""
    return Skillbook.from_dict(
        {
            "schema_version": "2",
            "skills": {
                "context-00001": {
                    "id": "context-00001",
                    "section": "context",
                    "keywords": ["k"],
                    "issue": "issue",
                    "insight": "insight",
                    "created_at": "2020-01-01T00:00:00+00:00",
                    "updated_at": "2020-01-01T00:00:00+00:00",
                }
            },
        }
    )


def test_ids_count_per_section() -> None:
    book = Skillbook()
    ids = [
        book.add_skill("context", "a", ["k"], "x").id,
        book.add_skill("harness", "b", ["k"]).id,
        book.add_skill("context", "c", ["k"], "x").id,
    ]
    assert ids == ["context-00001", "harness-00001", "context-00002"]


def test_ids_are_never_reused_after_purge(skillbook: Skillbook) -> None:
    skillbook.purge("context-00001")
    assert skillbook.add_skill("context", "new", ["k"], "x").id == "context-00002"


def test_add_skill_normalises_keywords(skillbook: Skillbook) -> None:
    skill = skillbook.add_skill("context", "i", ["  Booking API ", "booking-api", "Cabin--Class"], "x")
    assert skill.keywords == ("booking_api", "cabin_class")


def test_add_skill_strips_issue_and_insight() -> None:
    skill = Skillbook().add_skill("context", "  issue \n", ["k"], "\tinsight ")
    assert (skill.issue, skill.insight) == ("issue", "insight")


def test_add_skill_returns_the_stored_skill(skillbook: Skillbook) -> None:
    skill = skillbook.add_skill("harness", "issue", ["k"])
    assert skillbook.get_skill(skill.id) is skill


def test_update_skill_changes_only_given_fields(skillbook: Skillbook) -> None:
    before = skillbook.get_skill("context-00001")
    after = skillbook.update_skill("context-00001", insight="New insight.")
    assert (after.insight, after.issue, after.keywords) == ("New insight.", before.issue, before.keywords)


def test_update_skill_keeps_the_held_snapshot_unchanged(skillbook: Skillbook) -> None:
    held = skillbook.get_skill("context-00001")
    skillbook.update_skill("context-00001", issue="Rewritten issue.")
    assert held.issue != "Rewritten issue." and skillbook.get_skill("context-00001").issue == "Rewritten issue."


def test_update_skill_moves_updated_at() -> None:
    book = _old_skill_book()
    assert book.update_skill("context-00001", issue="new").updated_at > "2020-01-01T00:00:00+00:00"


def test_tag_skill_moves_updated_at() -> None:
    book = _old_skill_book()
    assert book.tag_skill("context-00001", 0).updated_at > "2020-01-01T00:00:00+00:00"


def test_update_skill_keeps_created_at() -> None:
    book = _old_skill_book()
    assert book.update_skill("context-00001", issue="new").created_at == "2020-01-01T00:00:00+00:00"


@pytest.mark.parametrize("changes", [{"issue": "Other issue."}, {"insight": "Other insight."}, {"keywords": ["other"]}])
def test_content_change_clears_embedding(skillbook: Skillbook, changes: dict) -> None:
    skillbook.set_embeddings({"context-00001": np.ones(4)}, model="m")
    assert skillbook.update_skill("context-00001", **changes).embedding is None


def test_update_with_same_content_keeps_embedding(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": np.ones(4)}, model="m")
    issue = skillbook.get_skill("context-00001").issue
    assert skillbook.update_skill("context-00001", issue=issue).embedding is not None


def test_tag_skill_keeps_embedding(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": np.ones(4)}, model="m")
    assert skillbook.tag_skill("context-00001", 1).embedding is not None


@pytest.mark.parametrize("delta, counter", [(1, "helpful_count"), (-1, "harmful_count"), (0, "neutral_count")])
def test_tag_skill_bumps_the_matching_counter_only(skillbook: Skillbook, delta: int, counter: str) -> None:
    skill = skillbook.tag_skill("context-00001", delta)
    counts = {name: getattr(skill, name) for name in ("helpful_count", "harmful_count", "neutral_count")}
    assert counts == {name: int(name == counter) for name in counts}


def test_mark_used_bumps_used_count_of_each_listed_skill(skillbook: Skillbook) -> None:
    skillbook.mark_used(["context-00001", "harness-00001"])
    skillbook.mark_used(["context-00001"])
    assert [s.used_count for s in skillbook.skills()] == [2, 1]


def test_mark_used_with_one_unknown_id_changes_nothing(skillbook: Skillbook) -> None:
    with pytest.raises(KeyError):
        skillbook.mark_used(["context-00001", "context-00042"])
    assert skillbook.get_skill("context-00001").used_count == 0


def test_mark_used_with_missing_ok_counts_the_known_ids_and_skips_the_unknown(skillbook: Skillbook) -> None:
    skillbook.mark_used(["context-00001", "context-00042"], missing_ok=True)
    assert [s.used_count for s in skillbook.skills()] == [1, 0]


def test_soft_remove_deactivates_and_keeps_the_skill(skillbook: Skillbook) -> None:
    skillbook.remove_skill("context-00001", "outdated")
    assert [s.id for s in skillbook.skills()] == ["harness-00001"]
    assert skillbook.get_skill("context-00001").active is False


def test_activate_skill_brings_a_soft_removed_skill_back_with_its_history(
    skillbook: Skillbook, source: InsightSource
) -> None:
    skillbook.tag_skill("context-00001", 1)
    removed = skillbook.remove_skill("context-00001", "outdated", insight_source=source)

    activated = skillbook.activate_skill("context-00001", insight_source=source.replace(trace_id="task-8"))

    assert [s.id for s in skillbook.skills()] == ["context-00001", "harness-00001"]
    assert activated.active and skillbook.get_skill("context-00001") is activated
    assert (activated.issue, activated.insight, activated.helpful_count) == (removed.issue, removed.insight, 1)
    assert [(o.operation_type, o.source_system, o.trace_id) for o in activated.occurrences] == [
        ("ADD", "api", getpass.getuser()),
        ("TAG", "api", getpass.getuser()),
        ("REMOVE", "tau2-airline", "task-7"),
        ("UPDATE", "tau2-airline", "task-8"),
    ]
    assert activated.occurrences[-1].learning_text == "re-activated: cabin class is all-or-nothing"
    assert activated.updated_at >= removed.updated_at


def test_activate_skill_says_re_activated_when_the_source_has_no_learning_text(
    skillbook: Skillbook, source: InsightSource
) -> None:
    skillbook.remove_skill("harness-00001", "stale")
    skill = skillbook.activate_skill("harness-00001", insight_source=source.replace(learning_text=None))
    assert skill.occurrences[-1].learning_text == "re-activated"


def test_activate_skill_keeps_the_embedding(skillbook: Skillbook) -> None:
    skillbook.set_embeddings({"context-00001": [1.0, 0.0]}, model="m")
    skillbook.remove_skill("context-00001", "outdated")
    assert skillbook.activate_skill("context-00001").embedding is not None


def test_activating_an_active_skill_raises_and_changes_nothing(skillbook: Skillbook) -> None:
    version = skillbook.version
    with pytest.raises(SkillbookError, match="context-00001.*already active"):
        skillbook.activate_skill("context-00001")
    assert skillbook.version == version


def test_activating_an_unknown_skill_raises_skill_not_found(skillbook: Skillbook) -> None:
    with pytest.raises(SkillNotFoundError, match="no skill with id 'context-00042'"):
        skillbook.activate_skill("context-00042")


def test_hard_remove_deletes_the_skill(skillbook: Skillbook) -> None:
    skillbook.remove_skill("context-00001", "wrong", soft=False)
    assert skillbook.get_skill("context-00001") is None


def test_skills_include_inactive_on_request_in_id_order(skillbook: Skillbook) -> None:
    skillbook.add_skill("context", "another", ["k"], "x")
    skillbook.remove_skill("context-00001", "outdated")
    assert [s.id for s in skillbook.skills(include_inactive=True)] == [
        "context-00001",
        "context-00002",
        "harness-00001",
    ]


def test_len_counts_inactive_skills(skillbook: Skillbook) -> None:
    skillbook.remove_skill("context-00001", "outdated")
    assert len(skillbook) == 2


@pytest.mark.parametrize(
    "mutate, operation",
    [
        (lambda b, s: b.add_skill("harness", "new", ["k"], insight_source=s), "ADD"),
        (lambda b, s: b.update_skill("harness-00001", issue="wider", insight_source=s), "UPDATE"),
        (lambda b, s: b.tag_skill("harness-00001", 1, insight_source=s), "TAG"),
        (lambda b, s: b.remove_skill("harness-00001", "stale", insight_source=s), "REMOVE"),
    ],
    ids=["ADD", "UPDATE", "TAG", "REMOVE"],
)
def test_mutation_with_source_appends_occurrence_with_operation_type(
    skillbook: Skillbook, source: InsightSource, mutate, operation: str
) -> None:
    skill = mutate(skillbook, source)
    assert skill.occurrences[-1] == source.replace(operation_type=operation)


def test_occurrences_accumulate_in_order(skillbook: Skillbook, source: InsightSource) -> None:
    skillbook.update_skill("harness-00001", issue="wider", insight_source=source)
    skill = skillbook.tag_skill("harness-00001", -1, insight_source=source.replace(trace_id="task-8"))
    assert [(o.operation_type, o.trace_id) for o in skill.occurrences] == [
        ("ADD", getpass.getuser()),
        ("UPDATE", "task-7"),
        ("TAG", "task-8"),
    ]


def test_remove_records_reason_as_learning_text_when_source_has_none(
    skillbook: Skillbook, source: InsightSource
) -> None:
    skill = skillbook.remove_skill("harness-00001", "superseded", insight_source=source.replace(learning_text=None))
    assert skill.occurrences[-1].learning_text == "superseded"


@pytest.mark.parametrize(
    "mutate, operation, learning_text",
    [
        (lambda b: b.add_skill("harness", "new", ["k"]), "ADD", None),
        (lambda b: b.update_skill("harness-00001", issue="wider"), "UPDATE", None),
        (lambda b: b.tag_skill("harness-00001", 1), "TAG", None),
        (lambda b: b.remove_skill("harness-00001", "stale"), "REMOVE", "stale"),
    ],
    ids=["ADD", "UPDATE", "TAG", "REMOVE"],
)
def test_mutation_without_source_appends_a_manual_api_occurrence_naming_the_os_user(
    skillbook: Skillbook, mutate, operation: str, learning_text: str | None
) -> None:
    occurrence = mutate(skillbook).occurrences[-1]
    assert (occurrence.source_system, occurrence.trace_id, occurrence.operation_type, occurrence.learning_text) == (
        "api",
        getpass.getuser(),
        operation,
        learning_text,
    )


def test_activate_without_source_appends_a_manual_api_occurrence(skillbook: Skillbook) -> None:
    skillbook.remove_skill("harness-00001", "stale")
    occurrence = skillbook.activate_skill("harness-00001").occurrences[-1]
    assert (occurrence.source_system, occurrence.operation_type, occurrence.learning_text) == (
        "api",
        "UPDATE",
        "re-activated",
    )


def test_manual_source_names_origin_user_and_reason() -> None:
    source = manual_source("ui", reason="wrong airline", user="alice")
    assert (source.trace_uid, source.learning_text) == ("ui:alice", "wrong airline")


def test_manual_source_refuses_an_unknown_origin() -> None:
    with pytest.raises(SkillbookError, match="origin must be one of"):
        manual_source("cron")  # type: ignore[arg-type]


def test_embedding_text_joins_issue_insight_and_keywords(skillbook: Skillbook) -> None:
    skill = Skillbook().add_skill("context", "The issue.", ["airline", "cabin_class"], "The insight.")
    assert skill.embedding_text() == "The issue.\n\nThe insight.\n\nKeywords: airline, cabin_class"


def test_embedding_text_without_insight_has_issue_and_keywords() -> None:
    skill = Skillbook().add_skill("harness", "The issue.", ["tau2"])
    assert skill.embedding_text() == "The issue.\n\nKeywords: tau2"


def test_skill_constructed_directly_is_validated() -> None:
    with pytest.raises(ValueError, match="insight"):
        Skill(id="context-00001", section="context", keywords=("k",), issue="issue")


def test_skill_is_immutable(skillbook: Skillbook) -> None:
    with pytest.raises(AttributeError):
        skillbook.get_skill("context-00001").issue = "changed"  # type: ignore[misc]


def test_update_with_empty_insight_clears_it_on_a_harness_skill(skillbook: Skillbook) -> None:
    skillbook.update_skill("harness-00001", insight="Back off per provider.")
    assert skillbook.update_skill("harness-00001", insight="").insight is None


def test_skills_with_six_digit_ids_come_after_five_digit_ones() -> None:
    book = Skillbook.from_dict(
        {
            "schema_version": "2",
            "skills": {
                skill_id: {
                    "id": skill_id,
                    "section": "harness",
                    "keywords": ["k"],
                    "issue": f"issue {skill_id}",
                    "created_at": "2026-01-01T00:00:00+00:00",
                    "updated_at": "2026-01-01T00:00:00+00:00",
                }
                for skill_id in ("harness-100000", "harness-99999")
            },
        }
    )
    assert [s.id for s in book.skills()] == ["harness-99999", "harness-100000"]
