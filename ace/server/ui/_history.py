"""A skill's history as the skill page shows it: its helpful / harmful / neutral counters after each
TAG occurrence, read from the occurrences the Skillbook appends at every mutation.

A TAG occurrence names its outcome in `learning_text` the way the SkillManager's `tag_skill` tool
writes it ("tagged helpful", "tagged harmful", "tagged neutral"); a TAG whose text says none of
these (a hand-made source) counts as `unknown`. `used_count` has no occurrence (injections are
counted, not recorded one by one), so only its current value is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from ace.skillbook import TAG_OUTCOMES, InsightSource, Skill

__all__ = ["CounterPoint", "counter_history", "tag_outcome"]

_OUTCOMES = tuple(TAG_OUTCOMES.values())


@dataclass(frozen=True, slots=True)
class CounterPoint:
    """The tag counters right after one TAG occurrence."""

    position: int
    """1-based position of the occurrence in the skill's occurrence list."""
    label: str
    """Where it happened: `epoch E step S`, `epoch E`, or `#position` when neither is recorded."""
    helpful: int
    """Helpful tags so far."""
    harmful: int
    """Harmful tags so far."""
    neutral: int
    """Neutral tags so far."""
    unknown: int
    """TAG occurrences so far whose outcome their text does not name."""


def tag_outcome(occurrence: InsightSource) -> str | None:
    """`helpful`, `harmful` or `neutral` for a TAG occurrence that names it, `unknown` for one that
    does not, None for any other operation."""
    if occurrence.operation_type != "TAG":
        return None
    text = (occurrence.learning_text or "").strip().lower()
    for outcome in _OUTCOMES:
        if text.startswith(f"tagged {outcome}"):
            return outcome
    return "unknown"


def counter_history(skill: Skill) -> tuple[CounterPoint, ...]:
    """The counters after each TAG occurrence of `skill`, in occurrence order (empty: never tagged).

    The last point's counts can be below the skill's counters when tags predate the occurrence
    history (e.g. a skillbook imported from ace-framework 0.13 with counters but no TAG records).
    """
    counts: dict[str, int] = dict.fromkeys((*_OUTCOMES, "unknown"), 0)
    points = []
    for position, occurrence in enumerate(skill.occurrences, start=1):
        outcome = tag_outcome(occurrence)
        if outcome is None:
            continue
        counts[outcome] += 1
        points.append(CounterPoint(position=position, label=_where(occurrence, position), **counts))
    return tuple(points)


def _where(occurrence: InsightSource, position: int) -> str:
    if occurrence.epoch is None:
        return f"#{position}"
    if occurrence.step is None:
        return f"epoch {occurrence.epoch}"
    return f"epoch {occurrence.epoch} step {occurrence.step}"
