"""The PostgreSQL writer's row diff (`ace.skillbook.storage._pg_diff`), pure: no database needed."""

from __future__ import annotations

from ace.skillbook import Skillbook, manual_source
from ace.skillbook.storage import SkillbookState
from ace.skillbook.storage._pg_diff import row_changes


def _book() -> Skillbook:
    book = Skillbook()
    book.add_skill("context", "First issue.", ["a"], "Do a.")
    book.add_skill("context", "Second issue.", ["b"], "Do b.")
    return book


def test_an_unchanged_state_writes_nothing_unless_forced() -> None:
    state = _book().snapshot()

    assert row_changes(state, state, by_identity=True) is None
    forced = row_changes(state, state, by_identity=True, force=True)
    assert forced is not None and forced.upserted == () and forced.occurrences == ()


def test_a_tag_writes_one_skill_row_and_only_its_new_occurrence() -> None:
    book = _book()
    base = book.snapshot()
    book.tag_skill("context-00002", 1, insight_source=manual_source("cli"))

    rows = row_changes(base, book.snapshot(), by_identity=True)

    assert rows is not None
    assert [skill.id for skill in rows.upserted] == ["context-00002"]
    assert [(skill_id, position) for skill_id, position, _ in rows.occurrences] == [("context-00002", 1)]
    assert rows.rewritten == () and rows.purged == ()


def test_a_history_that_is_not_an_append_is_rewritten_whole() -> None:
    base = _book().snapshot()
    other = Skillbook()  # the same id, another history: a file copied over the database
    other.add_skill("context", "First issue.", ["a"], "Do a.", insight_source=manual_source("cli", reason="imported"))
    other.update_skill("context-00001", insight="Do a, differently.")

    rows = row_changes(base, other.snapshot(), by_identity=False)

    assert rows is not None and rows.rewritten == ("context-00001",) and rows.purged == ("context-00002",)
    assert [(skill_id, position) for skill_id, position, _ in rows.occurrences] == [
        ("context-00001", 0),
        ("context-00001", 1),
    ]


def test_a_purge_and_decisions_set_and_removed_are_rows_too() -> None:
    book = _book()
    book.record_keep_decision("context-00001", "context-00002", reasoning="distinct", similarity=0.9)
    base = book.snapshot()
    book.purge("context-00002")
    target = SkillbookState(book.snapshot().skills, base.last_numbers, {}, base.embedding_models)

    rows = row_changes(base, target, by_identity=True)

    assert rows is not None
    assert rows.purged == ("context-00002",) and rows.undecided == ("context-00001,context-00002",)


def test_the_id_counters_never_go_back() -> None:
    base = _book().snapshot()
    behind = SkillbookState(base.skills, {"context": 1, "harness": 0}, base.similarity_decisions, base.embedding_models)

    rows = row_changes(base, behind, by_identity=True, force=True)

    assert rows is not None and dict(rows.last_numbers) == {"context": 2, "harness": 0}


def test_equal_skills_from_elsewhere_are_not_rewritten_when_compared_by_value() -> None:
    book = _book()
    copy = Skillbook.from_dict(book.to_dict())

    assert row_changes(book.snapshot(), copy.snapshot(), by_identity=False) is None
    assert row_changes(book.snapshot(), copy.snapshot(), by_identity=True) is not None
