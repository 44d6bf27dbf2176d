"""What a write must change in the database: the difference between the state it holds (`base`,
read under the row lock) and the state to store (`target`), as rows. Pure: no SQL, no connection
(`_pg_write` turns it into statements)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ace.skillbook._provenance import InsightSource
from ace.skillbook._skill import EMBEDDING_FIELDS, EmbeddingKind, Skill
from ace.skillbook._state import SkillbookState, merged_last_numbers

__all__ = ["RowChanges", "row_changes"]


@dataclass(frozen=True, slots=True)
class RowChanges:
    """The rows that move the database from one state to another."""

    upserted: tuple[Skill, ...]
    """Skills to insert or replace (their `ace_skills` row)."""
    purged: tuple[str, ...]
    """Ids of skills to delete (and tombstone, so followers drop them)."""
    rewritten: tuple[str, ...]
    """Ids of skills whose occurrence rows are all deleted before `occurrences` are inserted (their
    history is not an append of the stored one: a replayed or replaced file)."""
    occurrences: tuple[tuple[str, int, InsightSource], ...]
    """(skill id, position, record) of occurrence rows to insert."""
    decided: tuple[tuple[str, Any], ...]
    """(pair key, record) of similarity decisions to insert or replace."""
    undecided: tuple[str, ...]
    """Pair keys of decisions to remove (nulled, so followers drop them)."""
    last_numbers: Mapping[str, int]
    """The id counters to store: never lower than the stored ones."""
    embedding_models: Mapping[EmbeddingKind, str | None]
    """The embedder names to store."""


def row_changes(
    base: SkillbookState, target: SkillbookState, *, by_identity: bool, force: bool = False
) -> RowChanges | None:
    """The rows in which `target` differs from `base`, or None when nothing does (unless `force`:
    the caller changed rows already, so a new version must be written all the same).

    With `by_identity` a skill counts as changed when it is another object than the stored one (a
    mutation replaces the Skill: cheap and exact for a skillbook read from `base`); otherwise its
    fields and vectors are compared (a skillbook from elsewhere, e.g. a file being copied in)."""
    upserted = tuple(
        skill for skill_id, skill in target.skills.items() if not _same(base.skills.get(skill_id), skill, by_identity)
    )
    purged = tuple(skill_id for skill_id in base.skills if skill_id not in target.skills)
    decided = tuple(
        (pair, record)
        for pair, record in target.similarity_decisions.items()
        if base.similarity_decisions.get(pair, _ABSENT) != record
    )
    undecided = tuple(pair for pair in base.similarity_decisions if pair not in target.similarity_decisions)
    numbers = merged_last_numbers(target.last_numbers, base.last_numbers)
    models = dict(target.embedding_models)
    unchanged = (
        not (upserted or purged or decided or undecided)
        and numbers == dict(base.last_numbers)
        and models == dict(base.embedding_models)
    )
    if unchanged and not force:
        return None
    rewritten: list[str] = []
    occurrences: list[tuple[str, int, InsightSource]] = []
    for skill in upserted:
        old = base.skills.get(skill.id)
        start = len(old.occurrences) if old is not None else 0
        if old is not None and skill.occurrences[:start] != old.occurrences:
            rewritten.append(skill.id)
            start = 0
        occurrences += [
            (skill.id, position, skill.occurrences[position]) for position in range(start, len(skill.occurrences))
        ]
    return RowChanges(upserted, purged, tuple(rewritten), tuple(occurrences), decided, undecided, numbers, models)


_ABSENT = object()


def _same(old: Skill | None, new: Skill, by_identity: bool) -> bool:
    if old is None:
        return False
    if by_identity or old is new:
        return old is new
    if old != new:
        return False
    import numpy as np

    for field_name in EMBEDDING_FIELDS.values():
        a, b = getattr(old, field_name), getattr(new, field_name)
        if not ((a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))):
            return False
    return True
