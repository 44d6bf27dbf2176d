"""SkillMatcher mechanics: the index follows the skillbook incrementally, validation, reranker wiring."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pytest

from ace.retrieval.embedder import EmbeddingError
from ace.retrieval.matching import SkillMatcher
from ace.retrieval.rerankers import RerankCandidate, RerankError, match_text
from ace.skillbook import Skillbook

from .fixture_skills import (
    CRASHLOOP,
    LOCKFILES,
    RATE_LIMIT,
    RATE_LIMIT_TWIN,
    build_acceptance_skillbook,
)

ACTIVE_SKILLS = 8
DISTINCT_ACTIVE_TEXTS = 7  # the two rate-limit skills share one text
TASK = "Merging main into my branch leaves conflicts in poetry.lock."


class ConstantReranker:
    """Gives every candidate the same score and records what it was asked."""

    name = "constant"

    def __init__(self, score: float | list[float]) -> None:
        self.score = score
        self.calls: list[tuple[str, list[str]]] = []

    def rerank(self, task: str, candidates: Sequence[RerankCandidate]) -> list[float]:
        self.calls.append((task, [c.skill_id for c in candidates]))
        return self.score if isinstance(self.score, list) else [self.score] * len(candidates)


def skill_texts(calls: list[list[str]]) -> list[str]:
    return [text for call in calls for text in call if "\nKeywords: " in text]


def test_first_match_embeds_each_distinct_skill_text_once_and_later_matches_embed_only_the_task(
    skillbook, counting_embedder
):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)

    matcher.match(TASK)
    matcher.match("another task")
    matcher.match(TASK)

    texts = skill_texts(counting_embedder.calls)
    assert len(texts) == len(set(texts)) == DISTINCT_ACTIVE_TEXTS
    assert counting_embedder.calls[-2:] == [["another task"], [TASK]]


def test_editing_one_skill_re_embeds_only_that_skill(skillbook, counting_embedder):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)
    matcher.match(TASK)
    counting_embedder.calls.clear()

    edited = skillbook.update_skill(LOCKFILES, keywords=["git", "lockfiles", "poetry"])
    matcher.match(TASK)

    assert skill_texts(counting_embedder.calls) == [match_text(edited.issue, edited.keywords)]


def test_counter_changes_embed_nothing_but_the_task(skillbook, counting_embedder):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)
    matcher.match(TASK)
    counting_embedder.calls.clear()

    skillbook.tag_skill(LOCKFILES, 1)
    matcher.match(TASK)

    assert counting_embedder.calls == [[TASK]]


def test_rebind_to_a_reloaded_copy_reuses_every_unchanged_vector(skillbook, counting_embedder):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)
    matcher.match(TASK)
    reloaded = Skillbook.from_dict(skillbook.to_dict())
    reloaded.update_skill(CRASHLOOP, issue="Pods in CrashLoopBackOff show empty kubectl logs output.")
    counting_embedder.calls.clear()

    matcher.rebind(reloaded)

    assert skill_texts(counting_embedder.calls) == [
        match_text(reloaded.get_skill(CRASHLOOP).issue, reloaded.get_skill(CRASHLOOP).keywords)
    ]
    assert [c.skill_id for c in matcher.shortlist(TASK)][:1] == [LOCKFILES]


def test_empty_skillbook_returns_empty_without_embedding_the_task(counting_embedder):
    assert SkillMatcher(Skillbook(), embedder=counting_embedder).match(TASK) == []
    assert counting_embedder.calls == []


def test_equal_scores_sort_by_skill_id_and_respect_the_limit(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ConstantReranker(0.9))

    assert [m.skill_id for m in matcher.match(TASK, limit=4)] == sorted(s.id for s in skillbook.skills())[:4]


def test_scores_below_the_floor_are_dropped(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ConstantReranker(0.59), floor=0.6)

    assert matcher.match(TASK) == []


def test_identical_skills_tied_at_the_shortlist_cut_keep_the_lower_id(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder, shortlist_size=1)

    assert [c.skill_id for c in matcher.shortlist("HTTP 429 rate limit errors from the LLM provider")] == [RATE_LIMIT]


def test_reranker_sees_the_shortlist_in_recall_order(skillbook, embedder):
    reranker = ConstantReranker(0.1)
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=reranker, shortlist_size=3)

    matcher.match(TASK)

    assert reranker.calls == [(TASK, [c.skill_id for c in matcher.shortlist(TASK)])]
    assert len(reranker.calls[0][1]) == 3


@pytest.mark.parametrize("scores", [[0.5], [1.5] * ACTIVE_SKILLS, [float("nan")] * ACTIVE_SKILLS])
def test_invalid_reranker_scores_raise_rerank_error(skillbook, embedder, scores):
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ConstantReranker(scores))

    with pytest.raises(RerankError, match="constant"):
        matcher.match(TASK)


@pytest.mark.parametrize(("task", "limit"), [("  ", 3), ("fix it", 0), ("fix it", True)])
def test_blank_task_or_bad_limit_raises_value_error(skillbook, embedder, task, limit):
    with pytest.raises(ValueError):
        SkillMatcher(skillbook, embedder=embedder).match(task, limit=limit)


@pytest.mark.parametrize(
    "settings",
    [
        {"floor": 1.5},
        {"floor": -0.1},
        {"floor": "0.5"},
        {"floor": float("nan")},
        {"shortlist_size": 0},
        {"shortlist_size": 2.5},
        {"shortlist_size": True},
    ],
)
def test_out_of_range_settings_raise_value_error(embedder, settings):
    with pytest.raises(ValueError):
        SkillMatcher(build_acceptance_skillbook(), embedder=embedder, **settings)


def test_match_is_traced_with_the_matched_ids(skillbook, embedder, capfire):
    SkillMatcher(skillbook, embedder=embedder).match(
        "Error code: 429 - rate_limit_exceeded from the LLM provider with 32 workers"
    )

    spans = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"] == "search_memory skillbook"]
    assert len(spans) == 1
    assert spans[0]["attributes"]["gen_ai.operation.name"] == "search_memory"
    assert spans[0]["attributes"]["ace.skillbook.operation"] == "MATCH"
    assert json.loads(spans[0]["attributes"]["ace.skill_ids"]) == [RATE_LIMIT, RATE_LIMIT_TWIN]
    assert spans[0]["attributes"]["gen_ai.memory.record.count"] == 2


def test_a_task_nothing_matches_is_a_search_memory_span_with_record_count_0(skillbook, embedder, capfire):
    assert SkillMatcher(skillbook, embedder=embedder).match("Bake a sourdough loaf with a crisp crust") == []

    spans = [s for s in capfire.exporter.exported_spans_as_dict() if s["name"] == "search_memory skillbook"]
    assert [span["attributes"]["gen_ai.memory.record.count"] for span in spans] == [0]
    assert json.loads(spans[0]["attributes"]["ace.skill_ids"]) == []


class TaskSabotagingEmbedder:
    """Embeds skill texts with the real embedder; the task gets `task_vector`, or `task_error` is raised."""

    def __init__(self, inner, *, task_vector: np.ndarray | None = None, task_error: Exception | None = None):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.task_vector, self.task_error = task_vector, task_error

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if list(texts) != [TASK]:
            return self.inner.embed(texts)
        if self.task_error is not None:
            raise self.task_error
        return self.task_vector[None, :]


@pytest.mark.parametrize("value", [0.0, float("nan")])
def test_a_zero_or_non_finite_task_vector_raises_embedding_error(skillbook, embedder, value):
    sabotaged = TaskSabotagingEmbedder(embedder, task_vector=np.full(embedder.dim, value, dtype=np.float32))
    matcher = SkillMatcher(skillbook, embedder=sabotaged, reranker=ConstantReranker(0.9))

    with pytest.raises(EmbeddingError, match="zero or non-finite"):
        matcher.match(TASK)


def test_an_embedder_exception_on_the_task_becomes_embedding_error_with_cause(skillbook, embedder):
    sabotaged = TaskSabotagingEmbedder(embedder, task_error=ConnectionError("embedding server down"))

    with pytest.raises(EmbeddingError, match="embedding server down") as caught:
        SkillMatcher(skillbook, embedder=sabotaged).match(TASK)
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_an_embedder_exception_on_skill_texts_becomes_embedding_error(skillbook, embedder):
    class Failing:
        name, dim = embedder.name, embedder.dim

        def embed(self, texts):
            raise ConnectionError("embedding server down")

    with pytest.raises(EmbeddingError, match="embedding server down"):
        SkillMatcher(skillbook, embedder=Failing()).refresh()


def test_numpy_float_scores_are_accepted(skillbook, embedder):
    scores = list(np.full(ACTIVE_SKILLS, 0.9, dtype=np.float32))
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ConstantReranker(scores))

    assert [m.score for m in matcher.match(TASK, limit=2)] == [pytest.approx(0.9)] * 2


def test_boolean_scores_raise_rerank_error(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ConstantReranker([True] * ACTIVE_SKILLS))

    with pytest.raises(RerankError, match="True"):
        matcher.match(TASK)


def test_equal_scores_beyond_99999_skills_sort_by_id_number_not_by_string(embedder):
    book = Skillbook.from_dict(
        {
            "schema_version": "2",
            "skills": {
                skill_id: {
                    "id": skill_id,
                    "section": "harness",
                    "keywords": ["rate_limit"],
                    "issue": "LLM provider answers HTTP 429 rate-limit errors.",
                    "created_at": "2026-01-01T00:00:00+00:00",
                    "updated_at": "2026-01-01T00:00:00+00:00",
                }
                for skill_id in ("harness-100000", "harness-99999")
            },
        }
    )
    matcher = SkillMatcher(book, embedder=embedder, reranker=ConstantReranker(0.9))

    in_id_order = ["harness-99999", "harness-100000"]
    assert [m.skill_id for m in matcher.match("HTTP 429 from the provider", limit=2)] == in_id_order
    assert [c.skill_id for c in matcher.shortlist("HTTP 429 from the provider")] == in_id_order


def test_match_vectors_are_stored_on_the_skills_and_a_saved_copy_embeds_only_the_task(
    skillbook, counting_embedder, tmp_path
):
    SkillMatcher(skillbook, embedder=counting_embedder).match(TASK)
    assert all(skill.match_embedding is not None for skill in skillbook.skills())
    assert skillbook.match_embedding_model == counting_embedder.name
    skillbook.save_to_file(tmp_path / "sb.json")
    counting_embedder.calls.clear()

    loaded = Skillbook.load_from_file(tmp_path / "sb.json")
    SkillMatcher(loaded, embedder=counting_embedder).match(TASK)

    assert counting_embedder.calls == [[TASK]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sb.embeddings.npz", "sb.json"]


def test_stored_match_vectors_of_another_embedder_are_recomputed_and_replaced(skillbook, counting_embedder):
    ids = [skill.id for skill in skillbook.skills()]
    skillbook.set_embeddings({skill_id: np.ones(3) for skill_id in ids}, model="other/model", kind="match")

    SkillMatcher(skillbook, embedder=counting_embedder).match(TASK)

    assert len(skill_texts(counting_embedder.calls)) == DISTINCT_ACTIVE_TEXTS
    assert skillbook.match_embedding_model == counting_embedder.name
    assert {skillbook.get_skill(skill_id).match_embedding.shape for skill_id in ids} == {(counting_embedder.dim,)}


def test_match_vectors_leave_the_search_vectors_alone(skillbook, counting_embedder):
    skillbook.set_embeddings({LOCKFILES: np.ones(3)}, model="search/model")

    SkillMatcher(skillbook, embedder=counting_embedder).match(TASK)

    assert skillbook.embedding_model == "search/model"
    assert np.array_equal(skillbook.get_skill(LOCKFILES).embedding, np.ones(3, dtype=np.float32))


def test_an_insight_edit_embeds_nothing_but_the_task(skillbook, counting_embedder):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)
    matcher.match(TASK)
    counting_embedder.calls.clear()

    skillbook.update_skill(LOCKFILES, insight="Regenerate the lock file with poetry lock --no-update.")
    matcher.match(TASK)

    assert counting_embedder.calls == [[TASK]]
    assert skillbook.get_skill(LOCKFILES).match_embedding is not None


def test_matching_stores_each_vector_once(skillbook, counting_embedder):
    matcher = SkillMatcher(skillbook, embedder=counting_embedder)
    matcher.match(TASK)
    version = skillbook.version

    matcher.match(TASK)
    matcher.match(TASK)

    assert skillbook.version == version
