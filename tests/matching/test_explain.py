"""`SkillMatcher.explain`: the matches `match` returns, plus the near misses under the floor."""

from __future__ import annotations

import pytest

from ace.retrieval.matching import SkillMatcher

from .fixed_reranker import ScoreById
from .fixture_skills import LOCKFILES

TASK = "Merging main into my branch leaves conflicts in poetry.lock."


def test_explain_splits_the_shortlist_at_the_floor_and_agrees_with_match(skillbook, embedder):
    reranker = ScoreById({"context-00002": 0.9, "context-00003": 0.7, "context-00004": 0.49, "context-00005": 0.2})
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=reranker, floor=0.5)

    explanation = matcher.explain(TASK, limit=1)

    assert [m.skill_id for m in explanation.matches] == [LOCKFILES]
    assert [m.skill_id for m in explanation.matches] == [m.skill_id for m in matcher.match(TASK, limit=1)]
    assert explanation.above_limit == 1  # context-00003 scored above the floor, cut by limit=1
    assert [m.skill_id for m in explanation.near_misses[:2]] == ["context-00004", "context-00005"]
    assert explanation.near_misses[0].score == pytest.approx(0.49)
    assert all(m.score < 0.5 for m in explanation.near_misses)
    assert explanation.floor == 0.5
    # every active skill is shortlisted (8 < 20): each is either matched, cut by the limit or a near miss
    assert (
        len(explanation.matches) + explanation.above_limit + len(explanation.near_misses)
        == explanation.shortlist_size
        == 8
    )


def test_explain_with_nothing_above_the_floor_has_no_match_and_every_candidate_as_near_miss(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder, reranker=ScoreById({}), floor=0.5)

    explanation = matcher.explain("Water the office plants on Fridays.")

    assert explanation.matches == ()
    assert len(explanation.near_misses) == explanation.shortlist_size
    ids = [m.skill_id for m in explanation.near_misses]
    assert ids == sorted(ids)  # equal scores (0.0) sort by skill id


def test_explain_refuses_a_blank_task_like_match(skillbook, embedder):
    matcher = SkillMatcher(skillbook, embedder=embedder)

    with pytest.raises(ValueError, match="non-empty"):
        matcher.explain("   ")
