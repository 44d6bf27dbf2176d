"""Matching quality on every labelled set, side by side: the tuning set and both acceptance sets.

    python benchmarks/matching_acceptance.py                 # figures of the shipped defaults
    python benchmarks/matching_acceptance.py --misses dev    # also list the misses of one set

Sets: `dev` (tests/data/matching/matching_dev.json, the only set anything is tuned on), `heldout`
(tests/matching/heldout_set.py) and `hard` (tests/data/matching/matching_hard.json). For each: micro
F1 / precision / recall, top-1 on tasks with gold, abstention on tasks without, inactive skills
returned, the share of tasks answered exactly per category (same rule as matching_dev_eval.py), and
the p50 latency of `SkillMatcher.match` on that set's skillbook (index built beforehand).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")

sys.path.insert(0, str(Path(__file__).parent))
from matching_dev_eval import DEV_SET, LIMIT, breakdown, load_dev_set, score

from ace.retrieval.matching import SkillMatcher
from ace.skillbook import Skillbook

ROOT = Path(__file__).resolve().parents[1]
HARD_SET = ROOT / "tests" / "data" / "matching" / "matching_hard.json"
HELDOUT_SET = ROOT / "tests" / "matching" / "heldout_set.py"


@dataclass
class LabelledSet:
    name: str
    skillbook: Skillbook
    tasks: list[dict]
    """Each `{"id", "task", "gold", "category"}`."""
    inactive: set[str]


def heldout_set() -> LabelledSet:
    """tests/matching/heldout_set.py in the dev set's shape."""
    spec = importlib.util.spec_from_file_location("heldout_set", HELDOUT_SET)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    skillbook = module.build_heldout_skillbook()
    tasks = [
        {"id": f"ho{n:02d}", "task": task, "gold": gold, "category": module.CATEGORIES[task]}
        for n, (task, gold) in enumerate(module.EXPECTED.items(), start=1)
    ]
    inactive = {skill.id for skill in skillbook.skills(include_inactive=True) if not skill.active}
    return LabelledSet("heldout", skillbook, tasks, inactive)


def labelled_sets() -> list[LabelledSet]:
    """The tuning set, then the two acceptance sets."""
    sets = []
    for name, path in [("dev", DEV_SET), ("hard", HARD_SET)]:
        skillbook, tasks, inactive = load_dev_set(path)
        sets.append(LabelledSet(name, skillbook, tasks, inactive))
    sets.insert(1, heldout_set())
    return sets


def evaluate(labelled: LabelledSet, show_misses: bool) -> None:
    matcher = SkillMatcher(labelled.skillbook)
    matcher.refresh()
    returned, timings = [], []
    for task in labelled.tasks:
        start = time.perf_counter()
        matches = matcher.match(task["task"], limit=LIMIT)
        timings.append(time.perf_counter() - start)
        returned.append([match.skill_id for match in matches])
    without_gold = sum(not task["gold"] for task in labelled.tasks)
    print(
        f"{labelled.name}: {len(labelled.tasks)} tasks ({without_gold} without gold), "
        f"match p50 {np.percentile(timings, 50) * 1e3:.1f} ms"
    )
    print("  " + score(returned, labelled.tasks, labelled.inactive).line())
    breakdown(returned, labelled.tasks, show_misses=show_misses)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--misses",
        choices=["dev", "heldout", "hard"],
        action="append",
        default=[],
        help="list the tasks of this set that were not answered exactly (repeatable)",
    )
    args = parser.parse_args(argv)
    for labelled in labelled_sets():
        evaluate(labelled, labelled.name in args.misses)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
