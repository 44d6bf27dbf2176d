"""Every skill invariant rejects bad input with a SkillbookError naming the field and value."""

from __future__ import annotations

import pytest

from ace.skillbook import MAX_KEYWORD_LENGTH, InsightSource, Skillbook, SkillbookError, SkillNotFoundError, TraceRef


@pytest.fixture
def book() -> Skillbook:
    return Skillbook()


def test_add_skill_with_unknown_section_raises_naming_section(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"section.*'general'"):
        book.add_skill("general", "issue", ["k"], "insight")


def test_add_skill_with_empty_issue_raises_naming_issue(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"issue.*'   '"):
        book.add_skill("context", "   ", ["k"], "insight")


def test_add_skill_with_non_string_issue_raises_naming_issue(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"issue.*None"):
        book.add_skill("context", None, ["k"], "insight")  # type: ignore[arg-type]


def test_add_context_skill_without_insight_raises_naming_insight(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"insight.*None"):
        book.add_skill("context", "issue", ["k"])


def test_add_context_skill_with_blank_insight_raises_naming_insight(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"insight.*''"):
        book.add_skill("context", "issue", ["k"], "")


def test_add_harness_skill_without_insight_is_allowed(book: Skillbook) -> None:
    assert book.add_skill("harness", "issue", ["k"]).insight is None


def test_add_harness_skill_with_blank_insight_stores_none(book: Skillbook) -> None:
    assert book.add_skill("harness", "issue", ["k"], "  ").insight is None


def test_add_skill_with_no_keywords_raises_naming_keywords(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"keywords.*\[\]"):
        book.add_skill("context", "issue", [], "insight")


def test_add_skill_with_only_blank_keywords_raises_naming_keywords(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"keywords.*' ', '--'"):
        book.add_skill("context", "issue", [" ", "--"], "insight")


def test_add_skill_with_keywords_as_one_string_raises_naming_keywords(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"keywords must be a list.*'airline, booking'"):
        book.add_skill("context", "issue", "airline, booking", "insight")


def test_add_skill_with_non_string_keyword_raises_naming_keywords(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"keywords.*42"):
        book.add_skill("context", "issue", ["airline", 42], "insight")  # type: ignore[list-item]


def test_add_skill_with_overlong_keyword_raises_naming_keywords(book: Skillbook) -> None:
    long_keyword = "x" * (MAX_KEYWORD_LENGTH + 1)
    with pytest.raises(SkillbookError, match=rf"keywords.*'{long_keyword}'"):
        book.add_skill("context", "issue", [long_keyword], "insight")


def test_rejected_add_does_not_consume_an_id(book: Skillbook) -> None:
    with pytest.raises(SkillbookError):
        book.add_skill("context", "issue", ["k"])
    assert book.add_skill("context", "issue", ["k"], "insight").id == "context-00001"


def test_update_context_skill_to_blank_insight_raises_and_keeps_skill(book: Skillbook) -> None:
    skill = book.add_skill("context", "issue", ["k"], "insight")
    with pytest.raises(SkillbookError, match=r"insight.*''"):
        book.update_skill(skill.id, insight="")
    assert book.get_skill(skill.id) == skill


def test_update_skill_with_empty_keywords_raises_naming_keywords(book: Skillbook) -> None:
    skill = book.add_skill("context", "issue", ["k"], "insight")
    with pytest.raises(SkillbookError, match=r"keywords"):
        book.update_skill(skill.id, keywords=[])


def test_update_skill_with_blank_issue_raises_naming_issue(book: Skillbook) -> None:
    skill = book.add_skill("context", "issue", ["k"], "insight")
    with pytest.raises(SkillbookError, match=r"issue.*' '"):
        book.update_skill(skill.id, issue=" ")


@pytest.mark.parametrize("delta", [2, -2, True, "1", None])
def test_tag_skill_with_delta_outside_minus_one_to_one_raises_naming_delta(book: Skillbook, delta: object) -> None:
    skill = book.add_skill("context", "issue", ["k"], "insight")
    with pytest.raises(SkillbookError, match=rf"delta.*{delta!r}"):
        book.tag_skill(skill.id, delta)  # type: ignore[arg-type]


def test_remove_skill_without_reason_raises_naming_reason(book: Skillbook) -> None:
    skill = book.add_skill("context", "issue", ["k"], "insight")
    with pytest.raises(SkillbookError, match=r"reason.*''"):
        book.remove_skill(skill.id, "")
    assert book.get_skill(skill.id).active


def test_insight_source_given_as_dict_raises_naming_insight_source(book: Skillbook) -> None:
    with pytest.raises(SkillbookError, match=r"insight_source.*trace_id"):
        book.add_skill("context", "issue", ["k"], "insight", insight_source={"trace_id": "t"})  # type: ignore[arg-type]


def test_insight_source_without_trace_identity_raises_naming_fields() -> None:
    with pytest.raises(SkillbookError, match=r"source_system.*trace_id"):
        InsightSource(source_system="tau2")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.update_skill("context-00099", issue="x"),
        lambda b: b.tag_skill("context-00099", 1),
        lambda b: b.remove_skill("context-00099", "outdated"),
        lambda b: b.purge("context-00099"),
        lambda b: b.mark_used(["context-00099"]),
        lambda b: b.set_embeddings({"context-00099": [1.0]}, model="m"),
    ],
    ids=["update_skill", "tag_skill", "remove_skill", "purge", "mark_used", "set_embeddings"],
)
def test_mutating_an_unknown_skill_raises_skill_not_found_naming_the_id(book: Skillbook, mutate) -> None:
    with pytest.raises(SkillNotFoundError, match="context-00099") as caught:
        mutate(book)
    assert isinstance(caught.value, KeyError)


def test_get_skill_of_unknown_id_returns_none(book: Skillbook) -> None:
    assert book.get_skill("context-00099") is None


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"step_indices": [1, None]}, "step_indices"),
        ({"message_indices": "3"}, "message_indices"),
        ({"span_ids": [7]}, "span_ids"),
        ({"text_excerpt": 12}, "text_excerpt"),
    ],
)
def test_trace_ref_with_mistyped_field_raises_naming_it(fields: dict, named: str) -> None:
    with pytest.raises(SkillbookError, match=named):
        TraceRef(**fields)


@pytest.mark.parametrize(
    "fields, named",
    [({"epoch": "1"}, "epoch"), ({"step": 1.5}, "step"), ({"operation_type": "MERGE"}, "operation_type")],
)
def test_insight_source_with_mistyped_field_raises_naming_it(fields: dict, named: str) -> None:
    with pytest.raises(SkillbookError, match=named):
        InsightSource(source_system="tau2", trace_id="t", **fields)


def test_insight_source_from_dict_with_unknown_field_raises_naming_it() -> None:
    with pytest.raises(SkillbookError, match="'confidence'"):
        InsightSource.from_dict({"trace_uid": "tau2:t", "confidence": 0.9})


def test_insight_source_derives_identity_from_trace_uid() -> None:
    source = InsightSource.from_dict({"trace_uid": "tau2-airline:task-3"})
    assert (source.source_system, source.trace_id) == ("tau2-airline", "task-3")
