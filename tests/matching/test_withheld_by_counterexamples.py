"""A skill's counterexamples withhold it from tasks more like them than like the questions it was learned from."""

from __future__ import annotations

from ace.retrieval.embedder import Embedder
from ace.retrieval.matching import SkillMatcher
from ace.skillbook import COUNTEREXAMPLE, InsightSource, Skillbook

from .fixed_reranker import ScoreById

WEIGHT_LABEL = "What weight goes on the shipping label of parcel 4411, which weighs 2.5 kg?"
WEIGHT_KG = "What does parcel 3107 weigh? It weighs 1.25 kg; answer in kilograms, as a decimal number."
WEIGHT_KG_AGAIN = "What does parcel 8820 weigh? It weighs 0.75 kg; answer in kilograms, as a decimal number."
WEIGHT_LABEL_AGAIN = "What weight goes on the shipping label of parcel 9034, which weighs 0.4 kg?"


def _source(trace_id: str, question: str, relation: str | None = None) -> InsightSource:
    return InsightSource(source_system="test", trace_id=trace_id, sample_question=question, relation=relation)


def _skillbook(*, learned_from: str | None = WEIGHT_LABEL) -> Skillbook:
    skillbook = Skillbook()
    source = _source("taught", learned_from) if learned_from else None
    skillbook.add_skill(
        "context", "The weight of a parcel", ["parcel_weight"], "Write it in whole grams.", insight_source=source
    )
    skillbook.add_skill("context", "Parcel questions", ["parcel"], "Quote the parcel number.")
    return skillbook


def _matcher(skillbook: Skillbook, embedder: Embedder) -> SkillMatcher:
    return SkillMatcher(skillbook, embedder=embedder, reranker=ScoreById({"context-00001": 0.9, "context-00002": 0.6}))


def test_a_counterexample_withholds_the_skill_from_a_task_like_it_and_the_next_skill_takes_its_place(
    embedder: Embedder,
) -> None:
    skillbook = _skillbook()
    matcher = _matcher(skillbook, embedder)
    assert [m.skill_id for m in matcher.match(WEIGHT_KG_AGAIN, limit=1)] == ["context-00001"]

    skillbook.tag_skill("context-00001", -1, insight_source=_source("harmed", WEIGHT_KG, COUNTEREXAMPLE))
    explanation = matcher.explain(WEIGHT_KG_AGAIN, limit=1)

    assert [m.skill_id for m in explanation.withheld] == ["context-00001"]
    assert [m.skill_id for m in explanation.matches] == ["context-00002"] and explanation.above_limit == 0
    assert [m.skill_id for m in matcher.match(WEIGHT_LABEL_AGAIN, limit=1)] == ["context-00001"]
    assert matcher.explain(WEIGHT_LABEL_AGAIN).withheld == ()


def test_a_harmful_tag_that_is_no_counterexample_withholds_nothing(embedder: Embedder) -> None:
    skillbook = _skillbook()
    matcher = _matcher(skillbook, embedder)

    skillbook.tag_skill("context-00001", -1, insight_source=_source("tagged", WEIGHT_KG))

    assert [m.skill_id for m in matcher.match(WEIGHT_KG_AGAIN)] == ["context-00001", "context-00002"]


def test_a_skill_learned_from_no_question_is_told_apart_by_its_issue_and_keywords(embedder: Embedder) -> None:
    skillbook = _skillbook(learned_from=None)
    matcher = _matcher(skillbook, embedder)

    skillbook.tag_skill("context-00001", -1, insight_source=_source("harmed", WEIGHT_KG, COUNTEREXAMPLE))

    assert [m.skill_id for m in matcher.explain(WEIGHT_KG_AGAIN).withheld] == ["context-00001"]


def test_a_counterexample_that_repeats_a_learned_from_question_withholds_nothing(embedder: Embedder) -> None:
    skillbook = _skillbook()
    matcher = _matcher(skillbook, embedder)

    skillbook.tag_skill("context-00001", -1, insight_source=_source("harmed", WEIGHT_LABEL, COUNTEREXAMPLE))

    assert matcher.explain(WEIGHT_LABEL).withheld == () and matcher.explain(WEIGHT_KG_AGAIN).withheld == ()
