"""Score task -> skills matching on the tuning set (tests/data/matching/matching_dev.json) and refit the
default reranker's coefficients on it.

    python benchmarks/matching_dev_eval.py            # dev-set figures of the shipped defaults
    python benchmarks/matching_dev_eval.py --fit      # refit the 5 coefficients, print them, a
                                                      # 5-fold x 5-seed cross-validation over tasks,
                                                      # leave-one-domain-out and two stress tests

Scores use limit=3: micro precision / recall / F1 of returned ids against gold, top-1 accuracy on
tasks with gold, abstention accuracy on tasks whose gold is [], and inactive skills returned.
The matcher never sees the file's `trap_labels`; this script reads them only for the breakdown.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import logfire
import numpy as np

from ace.retrieval.matching import SkillMatcher
from ace.retrieval.rerankers import FieldAwareReranker, FieldWeights, RerankCandidate
from ace.skillbook import Skillbook

DEV_SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "matching" / "matching_dev.json"
LIMIT = 3
ABSTENTION_TARGET = 0.95


def load_dev_set(path: Path) -> tuple[Skillbook, list[dict], set[str]]:
    """The dev skillbook, its tasks and the ids of its inactive skills."""
    data = json.loads(path.read_text())
    stamp = "2026-01-01T00:00:00+00:00"
    skills = {s["id"]: {**s, "created_at": stamp, "updated_at": stamp} for s in data["skills"]}
    skillbook = Skillbook.from_dict({"schema_version": "2", "skills": skills})
    inactive = {s["id"] for s in data["skills"] if not s["active"]}
    return skillbook, data["tasks"], inactive


@dataclass
class Scores:
    f1: float
    precision: float
    recall: float
    top1: float
    abstention: float
    inactive_returned: int

    def line(self) -> str:
        return (
            f"F1 {self.f1:.3f}  P {self.precision:.3f}  R {self.recall:.3f}  top-1 {self.top1:.3f}  "
            f"abstention {self.abstention:.3f}  inactive returned {self.inactive_returned}"
        )


def score(returned: Sequence[list[str]], tasks: Sequence[dict], inactive: set[str]) -> Scores:
    """Micro P/R/F1, top-1, abstention and inactive count of `returned` ids per task."""
    tp = fp = fn = top1 = with_gold = abstained = without_gold = bad = 0
    for ids, task in zip(returned, tasks):
        gold = task["gold"]
        tp += len(set(ids) & set(gold))
        fp += len(set(ids) - set(gold))
        fn += len(set(gold) - set(ids))
        bad += len(set(ids) & inactive)
        if gold:
            with_gold += 1
            top1 += bool(ids) and ids[0] == gold[0]
        else:
            without_gold += 1
            abstained += not ids
    precision = tp / max(tp + fp, 1)
    recall = tp / max(tp + fn, 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    return Scores(f1, precision, recall, top1 / max(with_gold, 1), abstained / max(without_gold, 1), bad)


def _features(candidates: Sequence[RerankCandidate]) -> np.ndarray:
    best = max(c.similarity for c in candidates)
    return np.array([[c.similarity, c.issue_overlap, c.keyword_overlap, c.similarity - best] for c in candidates])


def _fit_logistic(features: np.ndarray, labels: np.ndarray, l2: float = 1e-3, steps: int = 4000) -> np.ndarray:
    """[bias, *weights] by gradient descent on standardised features."""
    mean, std = features.mean(0), features.std(0) + 1e-9
    scaled = (features - mean) / std
    weights, bias = np.zeros(features.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(scaled @ weights + bias)))
        weights -= 0.5 * (scaled.T @ (p - labels) / len(labels) + l2 * weights)
        bias -= 0.5 * float((p - labels).mean())
    raw = weights / std
    return np.array([bias - float(mean @ raw), *raw])


def _returned(shortlists: Sequence[list[RerankCandidate]], weights: FieldWeights) -> list[list[str]]:
    reranker = FieldAwareReranker(weights)
    out = []
    for candidates in shortlists:
        scored = sorted(
            ((round(s, 6), c.skill_id) for s, c in zip(reranker.rerank("", candidates), candidates) if s >= 0.5),
            key=lambda pair: (-pair[0], pair[1]),
        )
        out.append([skill_id for _, skill_id in scored[:LIMIT]])
    return out


def fit_weights(shortlists: Sequence[list[RerankCandidate]], tasks: Sequence[dict]) -> FieldWeights:
    """Fit the logistic weights on `tasks`, then shift the bias so that 0.5 is the floor with the best
    F1 among those that abstain on at least ABSTENTION_TARGET of the tasks without gold."""
    features = np.vstack([_features(c) for c in shortlists])
    labels = np.array([c.skill_id in t["gold"] for cs, t in zip(shortlists, tasks) for c in cs], dtype=float)
    bias, *weights = _fit_logistic(features, labels)
    best_floor, best_objective = 0.5, (False, -1.0)
    for floor in np.arange(0.05, 0.95, 0.01):
        shifted = FieldWeights(bias - math.log(floor / (1 - floor)), *weights)
        scores = score(_returned(shortlists, shifted), tasks, set())
        objective = (scores.abstention >= ABSTENTION_TARGET, scores.f1)
        if objective > best_objective:
            best_floor, best_objective = floor, objective
    shift = math.log(best_floor / (1 - best_floor))
    return FieldWeights(*(round(float(v), 2) for v in (bias - shift, *weights)))


def cross_validate(shortlists: list, tasks: list, inactive: set[str], folds: int = 5, seeds: int = 5) -> Scores:
    """Mean held-out scores: fit on (folds-1)/folds of the tasks, score the rest."""
    runs = []
    for seed in range(seeds):
        order = np.random.default_rng(seed).permutation(len(tasks))
        returned: list[list[str]] = [[] for _ in tasks]
        for fold in range(folds):
            held = set(order[fold::folds].tolist())
            train = [i for i in range(len(tasks)) if i not in held]
            weights = fit_weights([shortlists[i] for i in train], [tasks[i] for i in train])
            for i, ids in zip(sorted(held), _returned([shortlists[i] for i in sorted(held)], weights)):
                returned[i] = ids
        runs.append(score(returned, tasks, inactive))
    return Scores(*(float(np.mean([getattr(r, f) for r in runs])) for f in Scores.__dataclass_fields__))


def leave_one_domain_out(shortlists: list, tasks: list, inactive: set[str], domain_of_task: list[str | None]) -> Scores:
    """Held-out scores when each domain's tasks are scored by weights fitted without that domain
    (tasks without gold are spread over the folds round-robin)."""
    domains = sorted({d for d in domain_of_task if d is not None})
    folds = [d if d is not None else domains[i % len(domains)] for i, d in enumerate(domain_of_task)]
    returned: list[list[str]] = [[] for _ in tasks]
    for domain in domains:
        held = [i for i, fold in enumerate(folds) if fold == domain]
        train = [i for i, fold in enumerate(folds) if fold != domain]
        weights = fit_weights([shortlists[i] for i in train], [tasks[i] for i in train])
        for i, ids in zip(held, _returned([shortlists[i] for i in held], weights)):
            returned[i] = ids
    return score(returned, tasks, inactive)


def stress(weights: FieldWeights, tasks: list, inactive: set[str], dev: Skillbook) -> None:
    """Scores under conditions the dev skills do not show: issues cut to their first 14 words, and
    the dev skills among 1,000 synthetic distractors (their `irrelevant` tasks must still abstain)."""
    from matching import synthetic_skillbook  # benchmarks/matching.py imports this module

    document = dev.to_dict()
    for skill in document["skills"].values():
        skill["issue"] = " ".join(skill["issue"].split()[:14])
    crowded = Skillbook.from_dict(dev.to_dict())
    for skill in synthetic_skillbook(1055).skills()[55:]:
        crowded.add_skill(skill.section, skill.issue, skill.keywords, insight=skill.insight)
    irrelevant = [t for t in tasks if t["category"] == "irrelevant"]
    for label, skillbook, scored in [
        ("issues cut to 14 words", Skillbook.from_dict(document), tasks),
        ("among 1,000 synthetic skills", crowded, tasks),
        ("among 1,000 synthetic skills, irrelevant tasks", crowded, irrelevant),
    ]:
        matcher = SkillMatcher(skillbook, reranker=FieldAwareReranker(weights))
        returned = [[m.skill_id for m in matcher.match(t["task"], limit=LIMIT)] for t in scored]
        print(f"  {label}: " + score(returned, scored, inactive).line())


def breakdown(returned: Sequence[list[str]], tasks: Sequence[dict], *, show_misses: bool = True) -> None:
    """Per-category hit rate (returned ids == gold, or the right first id and nothing outside gold),
    and the misses unless `show_misses` is False."""
    by_category: dict[str, list[bool]] = defaultdict(list)
    for ids, task in zip(returned, tasks):
        exact = ids == task["gold"] or (task["gold"] and ids[:1] == task["gold"][:1] and set(ids) <= set(task["gold"]))
        by_category[task["category"]].append(bool(exact))
        if not exact and show_misses:
            print(f"  miss {task['id']:5} {task['category']:11} gold={task['gold']} got={ids}  {task['task'][:60]}")
    for category, hits in sorted(by_category.items()):
        print(f"  {category:12} {sum(hits)}/{len(hits)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev-set", type=Path, default=DEV_SET)
    parser.add_argument("--fit", action="store_true", help="refit the weights and cross-validate")
    args = parser.parse_args(argv)
    logfire.configure(send_to_logfire=False, console=False)
    skillbook, tasks, inactive = load_dev_set(args.dev_set)
    matcher = SkillMatcher(skillbook)
    returned = [[m.skill_id for m in matcher.match(t["task"], limit=LIMIT)] for t in tasks]
    print(f"dev set, shipped defaults ({matcher.reranker.name}, floor {matcher.floor}):")
    print("  " + score(returned, tasks, inactive).line())
    shortlists = [matcher.shortlist(t["task"]) for t in tasks]
    recalled = sum(all(g in {c.skill_id for c in s} for g in t["gold"]) for s, t in zip(shortlists, tasks))
    print(
        f"  recall stage: gold fully in the {matcher.shortlist_size}-skill shortlist for {recalled}/{len(tasks)} tasks"
    )
    breakdown(returned, tasks)
    if args.fit:
        refit = fit_weights(shortlists, tasks)
        print("refit on all dev tasks:", refit)
        print("5-fold x 5-seed cross-validation over tasks (held-out):")
        print("  " + cross_validate(shortlists, tasks, inactive).line())
        # The domain labels are analysis metadata: used here for grouping only, never by the matcher.
        skill_domains = json.loads(args.dev_set.read_text())["trap_labels"]["skill_domains"]
        domain_of_task = [
            skill_domains[t["gold"][0]].split(":")[-1].split("+")[0] if t["gold"] else None for t in tasks
        ]
        print(f"leave-one-domain-out ({len(set(d for d in domain_of_task if d))} domains held out in turn):")
        print("  " + leave_one_domain_out(shortlists, tasks, inactive, domain_of_task).line())
        print("stress tests with the refit weights:")
        stress(refit, tasks, inactive, skillbook)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
