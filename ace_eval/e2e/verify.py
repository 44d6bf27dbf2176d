"""`ace-eval verify RUN_DIR`: check a run folder the way the Skillbook v2 smoke test does, plus attribution.

Checks (each problem names the skill ids involved):
- `skillbook.json` loads as a v2 skillbook; its `.embeddings.npz` sidecar exists and holds a vector
  for every active skill;
- every skill has at least one occurrence and one keyword; every context skill has an insight;
- counters agree with the recorded injections of the training Results files (`train/epoch_*.json`):
  `used_count` is the number of training simulations that injected (or read) the skill;
  helpful + harmful + neutral is its number of TAG occurrences, by label where the label is
  recorded; and every TAG occurrence names a training simulation that injected the skill.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from ace.skillbook import TAG_OUTCOMES, Skill, Skillbook, SkillbookError, embedding_sidecar_path
from ace_eval.tau2 import ResultsFormatError, load_results

__all__ = ["verify_run"]

_TAG_LABELS = {f"tagged {outcome}": f"{outcome}_count" for outcome in TAG_OUTCOMES.values()}
"""The learning text of a SkillManager's TAG occurrence, and the counter it bumped."""


def verify_run(run_dir: str | Path) -> list[str]:
    """The problems found in `run_dir` (empty when it passes). Raises nothing for a broken run:
    an unreadable skillbook or Results file is itself a problem."""
    run_dir = Path(run_dir)
    path = run_dir / "skillbook.json"
    try:
        skillbook = Skillbook.load_from_file(path)
    except (OSError, SkillbookError, ValueError) as exc:
        return [f"{path}: cannot be loaded as a v2 skillbook: {exc}"]
    problems = _shape_problems(skillbook, path)
    try:
        injections = _train_injections(run_dir)
    except ResultsFormatError as exc:
        return [*problems, str(exc)]
    return problems + _counter_problems(skillbook, injections)


def _shape_problems(skillbook: Skillbook, path: Path) -> list[str]:
    problems: list[str] = []
    active = skillbook.skills()
    if active and not embedding_sidecar_path(path).exists():
        problems.append(f"{embedding_sidecar_path(path)} is missing (the skillbook has {len(active)} active skills)")
    else:
        _add(
            problems,
            "active skills without a vector in the .embeddings.npz sidecar",
            [s.id for s in active if s.embedding is None],
        )
    every = skillbook.skills(include_inactive=True)
    _add(problems, "skills without an occurrence", [s.id for s in every if not s.occurrences])
    _add(problems, "skills without a keyword", [s.id for s in every if not s.keywords])
    _add(
        problems,
        "context skills without an insight",
        [s.id for s in every if s.section == "context" and not (s.insight or "").strip()],
    )
    return problems


def _train_injections(run_dir: Path) -> dict[str, set[str]]:
    """skill id -> trace uids (`tau2:<simulation id>`) of the training simulations that injected it."""
    injected: dict[str, set[str]] = defaultdict(set)
    for file in sorted((run_dir / "train").glob("epoch_*.json")):
        for simulation in load_results(file).simulations:
            for skill_id in simulation.injected_skill_ids or ():
                injected[skill_id].add(f"tau2:{simulation.id}")
    return injected


def _counter_problems(skillbook: Skillbook, injections: dict[str, set[str]]) -> list[str]:
    problems: list[str] = []
    skills = skillbook.skills(include_inactive=True)
    unknown = sorted(set(injections) - {s.id for s in skills})
    _add(problems, "skills injected in training but missing from the skillbook", unknown)
    _add(
        problems,
        "used_count differs from the training simulations that injected the skill",
        [
            f"{s.id} ({s.used_count} vs {len(injections.get(s.id, ()))})"
            for s in skills
            if s.used_count != len(injections.get(s.id, ()))
        ],
    )
    _add(problems, "tag counters differ from the skill's TAG occurrences", [s.id for s in skills if not _tags_agree(s)])
    _add(
        problems,
        "TAG occurrences naming a trace that did not inject the skill",
        [
            f"{s.id} ({o.trace_uid})"
            for s in skills
            for o in s.occurrences
            if o.operation_type == "TAG" and o.trace_uid not in injections.get(s.id, set())
        ],
    )
    return problems


def _tags_agree(skill: Skill) -> bool:
    tags = [o for o in skill.occurrences if o.operation_type == "TAG"]
    if len(tags) != sum(getattr(skill, counter) for counter in _TAG_LABELS.values()):
        return False
    labelled = Counter(_TAG_LABELS[o.learning_text] for o in tags if o.learning_text in _TAG_LABELS)
    if sum(labelled.values()) < len(tags):
        return True  # some tags carry no label: only the total can be checked
    return all(labelled[counter] == getattr(skill, counter) for counter in _TAG_LABELS.values())


def _add(problems: list[str], what: str, ids: list[str]) -> None:
    if ids:
        problems.append(f"{what}: {', '.join(ids)}")
