"""A journal of one writer's mutations, so they can be undone as a unit (a SkillManager session).

Each operation is applied to the real skillbook at once (readers see it, search finds it) and its
before/after skill recorded. `rollback()` undoes the journal's own changes in reverse order and
keeps what other writers did meanwhile: a skill nobody else touched gets its old snapshot back; one
that changed since (an injection counted, vectors computed) keeps those changes and loses only the
journal's (its counter deltas, its occurrences, the fields it set). A skill the journal added is
deleted, and its section's id counter wound back when no other skill was added after it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ace.skillbook._operations import UpdateBatch, UpdateOperation
from ace.skillbook._skill import COUNTERS, EMBEDDING_FIELDS, Skill, id_number
from ace.skillbook._state import SkillbookChanges

if TYPE_CHECKING:
    from ace.skillbook._skillbook import Skillbook

__all__ = ["MutationJournal"]

_FIELDS = ("section", "keywords", "issue", "insight", "active", "updated_at")


@dataclass(frozen=True)
class _Entry:
    before: Skill | None
    """The skill before the operation; None when the operation added it."""
    after: Skill
    """The skill the operation produced."""
    last_number: int
    """The section's highest id number before the operation."""


class MutationJournal:
    """Applies `UpdateOperation`s to a skillbook and remembers them until `rollback()`.

    Build it with `Skillbook.journal()`. Not for concurrent use by several writers: one journal per
    session (other writers may mutate the skillbook meanwhile).
    """

    def __init__(self, skillbook: Skillbook) -> None:
        self._skillbook = skillbook
        self._entries: list[_Entry] = []
        self.operations: list[UpdateOperation] = []
        """The audit log: every operation applied through this journal, in order (an ADD with the id
        it received); emptied by `rollback()`."""

    def apply(self, operation: UpdateOperation) -> Skill:
        """Apply `operation` to the skillbook, record it, and return the skill it produced.

        Raises what the skillbook raises (`SkillbookError`, `SkillNotFoundError`); nothing is then
        applied or recorded.
        """
        skillbook = self._skillbook
        with skillbook.exclusive():
            before = skillbook.get_skill(operation.skill_id) if operation.type != "ADD" and operation.skill_id else None
            section = operation.section if operation.type == "ADD" else None
            last_number = skillbook.snapshot().last_numbers.get(section, 0) if section is not None else 0
            [after] = skillbook.apply_update(UpdateBatch(reasoning="", operations=(operation,)))
            self._entries.append(_Entry(before, after, last_number))
        if operation.type == "ADD":
            operation = dataclasses.replace(operation, skill_id=after.id, keywords=after.keywords)
        self.operations.append(operation)
        return after

    def rollback(self) -> list[str]:
        """Undo every recorded operation, newest first; returns the ids of the skills restored or
        deleted. The journal is empty afterwards."""
        skillbook = self._skillbook
        touched: list[str] = []
        with skillbook.exclusive():
            for entry in reversed(self._entries):
                skill_id = entry.after.id
                current = skillbook.get_skill(skill_id)
                if current is None:  # purged by someone else meanwhile: nothing left to restore
                    continue
                if entry.before is None:
                    skillbook.apply_changes(_unadded(current, entry.last_number, skillbook.snapshot().last_numbers))
                else:
                    skillbook.apply_changes(SkillbookChanges(skills=(_undone(current, entry),)))
                touched.append(skill_id)
            self._entries.clear()
            self.operations.clear()
        return touched


def _unadded(skill: Skill, last_number: int, last_numbers: Mapping[str, int]) -> SkillbookChanges:
    """Undo an ADD: delete `skill`, and wind its section's id counter back to `last_number` when
    no skill was added after it."""
    if last_numbers.get(skill.section) != id_number(skill.id):
        return SkillbookChanges(purged=(skill.id,))
    return SkillbookChanges(purged=(skill.id,), last_numbers={**last_numbers, skill.section: last_number})


def _undone(current: Skill, entry: _Entry) -> Skill:
    """`current` without the change from `entry.before` to `entry.after`."""
    before, after = entry.before, entry.after
    assert before is not None
    if current is after:
        return before
    changes: dict[str, Any] = {
        name: getattr(before, name) for name in _FIELDS if getattr(current, name) == getattr(after, name)
    }
    for name in COUNTERS:
        changes[name] = getattr(current, name) - (getattr(after, name) - getattr(before, name))
    added = after.occurrences[len(before.occurrences) :]
    changes["occurrences"] = tuple(o for o in current.occurrences if not any(o is a for a in added))
    undone = current.replace(**changes)
    for kind, name in EMBEDDING_FIELDS.items():  # a vector stays only beside the text it was made from
        text = undone.embedding_input(kind)
        if current.embedding_input(kind) == text and getattr(current, name) is not None:
            vector = getattr(current, name)
        else:
            vector = getattr(before, name) if before.embedding_input(kind) == text else None
        object.__setattr__(undone, name, vector)
    return undone
