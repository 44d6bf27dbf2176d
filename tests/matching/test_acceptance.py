"""Acceptance of task -> skills matching on two sets written independently of the tuning set the
reranker was fitted on (tests/data/matching/matching_dev.json), with the real offline models and the
shipped defaults. Nothing was tuned on either set; if the matcher changes, re-measure rather than
edit a set.

Issue 25's targets: F1 >= 0.85 and abstention >= 0.95 on every acceptance set (limit 3).

* The held-out set (`heldout_set.py`, 37 tasks, 18 with no expected skill). Measured before issue
  25: F1 0.923, abstention 0.944 (17/18). With the floor calibrated to the 0.95 abstention target
  on the tuning set: F1 0.947 (precision 1.000, recall 0.900), top-1 0.895, abstention 1.000. The
  two misses: the DNS task with no error string ("we moved the site ... half the office still
  lands on the old box") and the cron task. It meets both targets; the F1 floor sits one more miss
  below the measured figure.
* The hard set (`tests/data/matching/matching_hard.json`, 68 tasks, 35 with no expected skill:
  paraphrases, widened and narrowed skills, near-domain traps, keyword-only overlaps), written
  before any matcher change of issue 25. Measured before: F1 0.743, abstention 0.771; after: F1
  0.762 (precision 0.800, recall 0.727), top-1 0.727, abstention 0.857. It misses both targets:
  the regression floors sit one more miss / false positive below the measured figures, and the
  targets themselves are strict xfails, so whoever reaches them is told to raise the floors.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from data_files import DATA_DIR

from ace.retrieval.matching import SkillMatcher

from .heldout_set import EXPECTED, GRADLE, NGINX, SHELL_TOOL, SHELL_TOOL_TWIN, SKILLS, build_heldout_skillbook
from .labelled_sets import LabelledSet, load_labelled_set

DEV_SET = DATA_DIR / "matching" / "matching_dev.json"
HARD_SET = DATA_DIR / "matching" / "matching_hard.json"
LIMIT = 3
TARGET_F1 = 0.85
TARGET_ABSTENTION = 0.95
HELDOUT_MIN_F1 = 0.91  # measured 0.947 (18 of 20 expected ids, none wrong)
HARD_MIN_F1 = 0.74  # measured 0.762 (24 of 33 expected ids, 6 wrong)
HARD_MIN_ABSTENTION = 0.82  # measured 0.857 (30 of 35 tasks with nothing expected)


def _f1(returned: dict[str, list[str]], expected: dict[str, list[str]]) -> float:
    """Micro F1 of returned ids against the expected ones over all tasks."""
    true_positives = sum(len(set(returned[task]) & set(gold)) for task, gold in expected.items())
    returned_count = sum(len(ids) for ids in returned.values())
    expected_count = sum(len(gold) for gold in expected.values())
    return 2 * true_positives / (returned_count + expected_count)


def _abstention(returned: dict[str, list[str]], expected: dict[str, list[str]]) -> float:
    """Share of the tasks with nothing expected that got `[]`."""
    without_gold = [task for task, gold in expected.items() if not gold]
    return sum(returned[task] == [] for task in without_gold) / len(without_gold)


def _normalised(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


@pytest.fixture(scope="module")
def dev_set() -> LabelledSet:
    return load_labelled_set(DEV_SET)


@pytest.fixture(scope="module")
def hard_set() -> LabelledSet:
    return load_labelled_set(HARD_SET)


@pytest.fixture(scope="module")
def heldout_returned(embedder) -> dict[str, list[str]]:
    matcher = SkillMatcher(build_heldout_skillbook(), embedder=embedder)
    return {task: [match.skill_id for match in matcher.match(task, limit=LIMIT)] for task in EXPECTED}


@pytest.fixture(scope="module")
def hard_expected(hard_set) -> dict[str, list[str]]:
    return {task["task"]: task["gold"] for task in hard_set.tasks}


@pytest.fixture(scope="module")
def hard_returned(embedder, hard_set, hard_expected) -> dict[str, list[str]]:
    matcher = SkillMatcher(hard_set.skillbook, embedder=embedder)
    return {task: [match.skill_id for match in matcher.match(task, limit=LIMIT)] for task in hard_expected}


def test_heldout_f1_meets_the_target_and_the_measured_level(heldout_returned):
    assert _f1(heldout_returned, EXPECTED) >= max(TARGET_F1, HELDOUT_MIN_F1)


def test_heldout_abstention_meets_the_target(heldout_returned):
    assert _abstention(heldout_returned, EXPECTED) >= TARGET_ABSTENTION


def test_heldout_inactive_skills_are_never_returned(heldout_returned):
    assert all({GRADLE, NGINX}.isdisjoint(ids) for ids in heldout_returned.values())


def test_heldout_identical_skills_come_back_together_in_id_order(heldout_returned):
    [twin_task] = [task for task, gold in EXPECTED.items() if gold == [SHELL_TOOL, SHELL_TOOL_TWIN]]

    assert heldout_returned[twin_task] == [SHELL_TOOL, SHELL_TOOL_TWIN]


def test_hard_f1_is_at_least_the_measured_level(hard_returned, hard_expected):
    assert _f1(hard_returned, hard_expected) >= HARD_MIN_F1


def test_hard_abstention_is_at_least_the_measured_level(hard_returned, hard_expected):
    assert _abstention(hard_returned, hard_expected) >= HARD_MIN_ABSTENTION


@pytest.mark.xfail(strict=True, reason="issue 25 target not reached on the hard set: F1 0.762 measured")
def test_hard_f1_meets_the_target(hard_returned, hard_expected):
    assert _f1(hard_returned, hard_expected) >= TARGET_F1


@pytest.mark.xfail(strict=True, reason="issue 25 target not reached on the hard set: abstention 0.857 measured")
def test_hard_abstention_meets_the_target(hard_returned, hard_expected):
    assert _abstention(hard_returned, hard_expected) >= TARGET_ABSTENTION


def test_hard_inactive_skills_are_never_returned(hard_returned, hard_set):
    assert hard_set.inactive_ids
    assert all(hard_set.inactive_ids.isdisjoint(ids) for ids in hard_returned.values())


def test_hard_set_has_at_least_ten_tasks_in_each_category_the_issue_names(hard_set):
    counts = {
        category: sum(task["category"] == category for task in hard_set.tasks)
        for category in ("paraphrase", "widened", "narrowed", "near_domain", "keyword_only")
    }

    assert min(counts.values()) >= 10, counts


def test_acceptance_sets_are_independent_of_the_tuning_set(embedder, dev_set, hard_set):
    dev_tasks = [task["task"] for task in dev_set.tasks]
    dev_issues = [skill["issue"] for skill in dev_set.skills]
    for issues, tasks in [
        ([skill["issue"] for skill in SKILLS], list(EXPECTED)),
        ([skill["issue"] for skill in hard_set.skills], [task["task"] for task in hard_set.tasks]),
    ]:
        assert {_normalised(task) for task in tasks}.isdisjoint(map(_normalised, dev_tasks))
        # Measured maxima: held-out 0.50 between skill issues and 0.65 between tasks, hard set 0.48
        # and 0.57. The near-copies of dev skills in fixture_skills.py score 0.96 to 1.0.
        assert float(np.max(embedder.embed(issues) @ embedder.embed(dev_issues).T)) < 0.6
        assert float(np.max(embedder.embed(tasks) @ embedder.embed(dev_tasks).T)) < 0.7


def test_hard_set_uses_other_domains_than_the_heldout_set(embedder, hard_set):
    # Measured maxima: 0.38 between skill issues, 0.41 between tasks.
    issues = (
        embedder.embed([skill["issue"] for skill in hard_set.skills])
        @ embedder.embed([skill["issue"] for skill in SKILLS]).T
    )
    tasks = embedder.embed([task["task"] for task in hard_set.tasks]) @ embedder.embed(list(EXPECTED)).T

    assert float(np.max(issues)) < 0.6
    assert float(np.max(tasks)) < 0.7
