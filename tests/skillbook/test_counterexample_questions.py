"""`Skill.learned_from_questions`, `Skill.counterexample_questions` and `Skill.backing_trace_uids`
read the provenance chain."""

from __future__ import annotations

from ace.skillbook import CONFIRMATION, COUNTEREXAMPLE, DEDUP_SOURCE_SYSTEM, InsightSource, Skillbook, manual_source


def _source(trace_id: str, question: str | None, relation: str | None = None) -> InsightSource:
    return InsightSource(source_system="test", trace_id=trace_id, sample_question=question, relation=relation)


def test_the_questions_are_distinct_oldest_first_and_each_list_reads_its_own_records() -> None:
    skillbook = Skillbook()
    skillbook.add_skill(
        "context", "Dates on delivery notes", ["date"], "Use YYYY.MM.DD.", insight_source=_source("a", "q1")
    )
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD always.", insight_source=_source("b", "q2"))
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD.", insight_source=_source("c", "q1"))
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD!", insight_source=_source("d", None))
    skillbook.tag_skill("context-00001", -1, insight_source=_source("e", "c2", COUNTEREXAMPLE))
    skillbook.tag_skill("context-00001", -1, insight_source=_source("f", "tagged harmful, no counterexample"))
    skillbook.tag_skill("context-00001", 1, insight_source=_source("g", "helped"))
    skillbook.tag_skill("context-00001", -1, insight_source=_source("h", "c1", COUNTEREXAMPLE))
    skillbook.tag_skill("context-00001", -1, insight_source=_source("i", "c2", COUNTEREXAMPLE))

    skill = skillbook.get_skill("context-00001")

    assert skill is not None
    assert skill.learned_from_questions == ("q1", "q2")
    assert skill.counterexample_questions == ("c2", "c1")


def test_counterexamples_survive_a_save_and_load(tmp_path) -> None:
    skillbook = Skillbook()
    skillbook.add_skill(
        "context", "Dates on delivery notes", ["date"], "Use YYYY.MM.DD.", insight_source=_source("a", "q1")
    )
    skillbook.tag_skill("context-00001", -1, insight_source=_source("b", "c1", COUNTEREXAMPLE))
    skillbook.save_to_file(tmp_path / "skillbook.json")

    [skill] = Skillbook.load_from_file(tmp_path / "skillbook.json").skills()

    assert skill.counterexample_questions == ("c1",) and skill.harmful_count == 1


def test_a_skill_is_backed_by_the_traces_that_taught_it_and_its_confirmations_only() -> None:
    skillbook = Skillbook()
    skillbook.add_skill(
        "context", "Dates on delivery notes", ["date"], "Use YYYY.MM.DD.", insight_source=_source("a", "q1")
    )
    skillbook.tag_skill("context-00001", 1, insight_source=_source("b", "helped, no confirmation"))
    skillbook.tag_skill("context-00001", -1, insight_source=_source("c", "c1", COUNTEREXAMPLE))
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD!", insight_source=manual_source("cli", user="ann"))
    dedup = InsightSource(source_system=DEDUP_SOURCE_SYSTEM, trace_id="merge-1")
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD.", insight_source=dedup)
    skill = skillbook.get_skill("context-00001")
    assert skill is not None and skill.backing_trace_uids == ("test:a",) and skill.learned_from_traces

    skillbook.tag_skill("context-00001", 1, insight_source=_source("d", "q3", CONFIRMATION))
    skillbook.update_skill("context-00001", insight="Use YYYY.MM.DD always.", insight_source=_source("e", "q2"))
    skillbook.tag_skill("context-00001", 1, insight_source=_source("d", "q3", CONFIRMATION))

    skill = skillbook.get_skill("context-00001")
    assert skill is not None and skill.backing_trace_uids == ("test:a", "test:d", "test:e")


def test_a_hand_made_skill_is_not_learned_from_traces() -> None:
    skillbook = Skillbook()
    skill = skillbook.add_skill("context", "Dates on delivery notes", ["date"], "Use YYYY.MM.DD.")

    assert not skill.learned_from_traces and skill.backing_trace_uids == ()
