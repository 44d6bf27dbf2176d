"""Acceptance on a held-out set (`heldout_set.py`): skills and tasks written independently of the
dev set the reranker was fitted on, scored with the real offline models and shipped defaults.

Measured when the set was written, before any threshold was chosen (limit 3, 37 tasks, 18 with no
expected skill): F1 0.923 (precision 0.947, recall 0.900), top-1 0.895, abstention 0.944 (17/18),
no inactive skill returned. The misses: the DNS task with no error string ("we moved the site ...
half the office still lands on the old box") and the cron task are not matched, and "write a
Terraform module ..." returns the Terraform state-lock skill. The thresholds below sit one more
miss (F1) or one more false positive (abstention) below those figures. Nothing was tuned on this
set; if the matcher changes, re-measure rather than edit the set.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from ace.retrieval.matching import SkillMatcher
from data_files import DATA_DIR

from .heldout_set import EXPECTED, GRADLE, NGINX, SHELL_TOOL, SHELL_TOOL_TWIN, SKILLS, build_heldout_skillbook

DEV_SET = DATA_DIR / "matching" / "matching_dev.json"
LIMIT = 3
MIN_F1 = 0.89  # measured 0.923
MIN_ABSTENTION = 0.88  # measured 0.944 (17 of 18 tasks with nothing expected)


@pytest.fixture(scope="module")
def returned(embedder) -> dict[str, list[str]]:
    matcher = SkillMatcher(build_heldout_skillbook(), embedder=embedder)
    return {task: [match.skill_id for match in matcher.match(task, limit=LIMIT)] for task in EXPECTED}


def _f1(returned: dict[str, list[str]]) -> float:
    """Micro F1 of returned ids against the expected ones over all tasks."""
    true_positives = sum(len(set(returned[task]) & set(gold)) for task, gold in EXPECTED.items())
    returned_count = sum(len(ids) for ids in returned.values())
    expected_count = sum(len(gold) for gold in EXPECTED.values())
    return 2 * true_positives / (returned_count + expected_count)


def test_heldout_f1_is_at_least_the_measured_level(returned):
    assert _f1(returned) >= MIN_F1


def test_heldout_tasks_that_no_skill_fits_mostly_get_an_empty_answer(returned):
    without_gold = [task for task, gold in EXPECTED.items() if not gold]

    abstained = sum(returned[task] == [] for task in without_gold)

    assert abstained / len(without_gold) >= MIN_ABSTENTION


def test_heldout_inactive_skills_are_never_returned(returned):
    assert all({GRADLE, NGINX}.isdisjoint(ids) for ids in returned.values())


def test_heldout_identical_skills_come_back_together_in_id_order(returned):
    [twin_task] = [task for task, gold in EXPECTED.items() if gold == [SHELL_TOOL, SHELL_TOOL_TWIN]]

    assert returned[twin_task] == [SHELL_TOOL, SHELL_TOOL_TWIN]


def test_heldout_set_is_independent_of_the_dev_set(embedder):
    dev = json.loads(DEV_SET.read_text())

    def normalised(text: str) -> str:
        return re.sub(r"\W+", " ", text.lower()).strip()

    dev_tasks = [task["task"] for task in dev["tasks"]]
    assert {normalised(task) for task in EXPECTED}.isdisjoint(map(normalised, dev_tasks))
    # Measured maxima: 0.50 between skill issues, 0.65 between tasks. The near-copies of dev skills in
    # fixture_skills.py score 0.96 to 1.0.
    issues = embedder.embed([skill["issue"] for skill in SKILLS]) @ embedder.embed(
        [skill["issue"] for skill in dev["skills"]]
    ).T
    assert float(np.max(issues)) < 0.6
    tasks = embedder.embed(list(EXPECTED)) @ embedder.embed(dev_tasks).T
    assert float(np.max(tasks)) < 0.7
