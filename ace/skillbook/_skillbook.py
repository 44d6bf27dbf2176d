"""The Skillbook: a thread-safe store of skills with validated mutations, versioning and persistence."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from os import PathLike
from typing import TYPE_CHECKING, Any, cast

from ace import tracing
from ace.skillbook._checks import required_text
from ace.skillbook._errors import SkillbookError, SkillbookFormatError
from ace.skillbook._journal import MutationJournal
from ace.skillbook._operations import UpdateBatch, UpdateOperation
from ace.skillbook._provenance import InsightSource, OperationType, manual_source
from ace.skillbook._skill import (
    EMBEDDING_FIELDS,
    TAG_OUTCOMES,
    VALID_SECTIONS,
    Section,
    Skill,
    id_number,
    utc_now,
)
from ace.skillbook._skillbook_base import SkillbookBase, with_embedding
from ace.skillbook._view import SkillbookView
from ace.skillbook.storage import open_store, state_from_json, state_to_json
from ace.untrusted import quote

if TYPE_CHECKING:
    pass

__all__ = ["Skillbook"]


def _stamped(source: InsightSource | None, operation: OperationType) -> InsightSource:
    """The occurrence to append for `operation`: `source` (a manual `api` record when None) with its
    operation_type set."""
    if source is None:
        source = manual_source("api")
    if not isinstance(source, InsightSource):
        raise SkillbookError(f"insight_source must be an InsightSource, got {quote(source)}")
    return source.replace(operation_type=operation)


class Skillbook(SkillbookBase):
    """A store of skills: validated mutations, id-ordered reads, versioning, JSON+npz persistence.

    Thread-safe: every mutation and read runs under one re-entrant lock. Skills are immutable
    snapshots; a mutation replaces the stored Skill and returns the new one, so readers can keep the
    Skill objects they were given. Every mutation bumps `version`; `changed_ids_since` tells an
    index which ids to refresh.
    """

    def view(self) -> SkillbookView:
        """A live read-only view of this skillbook (it has no mutating methods)."""
        return SkillbookView(self)

    # -- mutations -----------------------------------------------------------------------------

    def add_skill(
        self,
        section: str,
        issue: str,
        keywords: Iterable[str],
        insight: str | None = None,
        *,
        insight_source: InsightSource | None = None,
    ) -> Skill:
        """Add a skill with the next id of its section and return it.

        Raises `SkillbookError` when an invariant is broken (section not in VALID_SECTIONS, empty
        issue, no keyword left after normalisation, missing insight on a context skill).
        """
        return self._add(section, issue, keywords, insight, insight_source, skill_id=None)

    def update_skill(
        self,
        skill_id: str,
        *,
        issue: str | None = None,
        keywords: Iterable[str] | None = None,
        insight: str | None = None,
        insight_source: InsightSource | None = None,
    ) -> Skill:
        """Change the given fields (None keeps a field) and return the new skill.

        An empty insight clears it on a harness skill (a context skill must keep one). A changed
        issue, insight or keywords clears the search embedding; a changed issue or keywords also
        clears the match embedding (an insight-only change keeps it: the match text has no
        insight). Raises `SkillNotFoundError` for
        an unknown id and `SkillbookError` when the result breaks an invariant.
        """
        with tracing.memory_span("update_memory", "UPDATE", **_record(skill_id, insight_source)), self._lock:
            old = self._require(skill_id)
            changes: dict[str, Any] = {}
            if issue is not None:
                changes["issue"] = issue
            if keywords is not None:
                changes["keywords"] = keywords
            if insight is not None:
                changes["insight"] = insight
            new = old.replace(**changes, **self._trail(old, insight_source, "UPDATE"))
            content_changed = (new.issue, new.insight, new.keywords) != (old.issue, old.insight, old.keywords)
            if content_changed:
                for kind in EMBEDDING_FIELDS:
                    if new.embedding_input(kind) != old.embedding_input(kind):
                        new = with_embedding(new, None, kind)
            return self._store(new, content=content_changed)

    def tag_skill(self, skill_id: str, delta: int, *, insight_source: InsightSource | None = None) -> Skill:
        """Record an effectiveness observation: delta +1 helpful, -1 harmful, 0 neutral.

        Raises `SkillNotFoundError` for an unknown id and `SkillbookError` for another delta.
        """
        with (
            tracing.memory_span(
                "update_memory",
                "TAG",
                **_record(skill_id, insight_source),
                **{"ace.tag": TAG_OUTCOMES.get(delta) if isinstance(delta, int) else None},
            ),
            self._lock,
        ):
            if isinstance(delta, bool) or not isinstance(delta, int) or delta not in TAG_OUTCOMES:
                raise SkillbookError(f"delta must be -1, 0 or 1, got {quote(delta)}")
            old = self._require(skill_id)
            counter = f"{TAG_OUTCOMES[delta]}_count"
            new = old.replace(**{counter: getattr(old, counter) + 1}, **self._trail(old, insight_source, "TAG"))
            return self._store(new, content=False)

    def mark_used(self, skill_ids: Iterable[str], *, missing_ok: bool = False) -> None:
        """Bump `used_count` of each listed skill (once per listing). All-or-nothing: raises
        `SkillNotFoundError` before changing anything if an id is unknown; with `missing_ok`,
        unknown ids are skipped instead (a skill handed out, then undone by a concurrent
        SkillManager rollback before its use is counted)."""
        counts = Counter(skill_ids)
        with (
            tracing.memory_span(
                "update_memory",
                "MARK_USED",
                **{tracing.SKILL_IDS: sorted(counts), tracing.MEMORY_RECORD_COUNT: len(counts)},
            ),
            self._lock,
        ):
            if missing_ok:
                counts = Counter({skill_id: n for skill_id, n in counts.items() if skill_id in self._skills})
            for skill_id in counts:
                self._require(skill_id)
            now = utc_now()
            for skill_id, count in counts.items():
                old = self._skills[skill_id]
                self._skills[skill_id] = old.replace(used_count=old.used_count + count, updated_at=now)
            self._log.record(counts, content=False)

    def remove_skill(
        self,
        skill_id: str,
        reason: str,
        *,
        insight_source: InsightSource | None = None,
        soft: bool = True,
    ) -> Skill:
        """Soft-remove a skill (active=False, history kept) and return it; `soft=False` purges it.

        The reason is recorded on the span, and as the REMOVE occurrence's learning_text when the
        source has none (no source: a manual `api` occurrence). Raises `SkillNotFoundError` for an
        unknown id, `SkillbookError` for an empty reason.
        """
        with (
            tracing.memory_span(
                "delete_memory",
                "REMOVE" if soft else "PURGE",
                reason=reason,
                soft=soft,
                **_record(skill_id, insight_source),
            ),
            self._lock,
        ):
            reason = required_text(reason, "reason")
            old = self._require(skill_id)
            if not soft:
                return self._purge(old)
            insight_source = insight_source or manual_source("api")
            if insight_source.learning_text is None:
                insight_source = insight_source.replace(learning_text=reason.strip())
            return self._store(old.replace(active=False, **self._trail(old, insight_source, "REMOVE")), content=True)

    def activate_skill(self, skill_id: str, *, insight_source: InsightSource | None = None) -> Skill:
        """Re-activate an inactive skill (a draft promoted, a soft-removal undone) and return it.

        Its content, counters and history are kept; from now on it is listed, injected and matched
        again (indexes see the change through `changed_ids_since(..., content_only=True)`). An UPDATE
        occurrence (from `insight_source`, else a manual `api` one) is appended whose learning_text
        starts with "re-activated"
        (the schema has no ACTIVATE operation type; the span's `ace.skillbook.operation` is
        ACTIVATE). Raises `SkillNotFoundError` for an unknown id and `SkillbookError` when the
        skill is already active (there is nothing to promote: check the id).
        """
        with tracing.memory_span("update_memory", "ACTIVATE", **_record(skill_id, insight_source)), self._lock:
            old = self._require(skill_id)
            if old.active:
                raise SkillbookError(
                    f"skill {quote(skill_id)} is already active; only an inactive skill can be activated"
                )
            insight_source = insight_source or manual_source("api")
            note = insight_source.learning_text
            insight_source = insight_source.replace(learning_text=f"re-activated: {note}" if note else "re-activated")
            return self._store(old.replace(active=True, **self._trail(old, insight_source, "UPDATE")), content=True)

    def purge(self, skill_id: str) -> Skill:
        """Delete a skill for good and return it (operator use; its id is never reused).

        Raises `SkillNotFoundError` for an unknown id.
        """
        with tracing.memory_span("delete_memory", "PURGE", **_record(skill_id, None)), self._lock:
            return self._purge(self._require(skill_id))

    def apply_update(self, batch: UpdateBatch) -> list[Skill]:
        """Replay an audit log: apply its operations in order, all or nothing; returns the skills the
        operations produced. An ADD re-creates the skill under its recorded `skill_id` (when given).

        Raises what the failing operation raises (`SkillbookError`, `SkillNotFoundError`); the
        skillbook is then left as it was before the batch.
        """
        with tracing.span("skillbook.apply_update", operations=len(batch.operations)), self._lock:
            saved = dict(self._skills), dict(self._last_numbers)
            try:
                return [self._apply(operation) for operation in batch.operations]
            except BaseException:
                self._skills, self._last_numbers = saved
                self._order = None
                raise

    def journal(self) -> MutationJournal:
        """A journal whose `apply(operation)` mutates this skillbook at once and whose `rollback()`
        undoes those mutations as a unit, keeping other writers' changes (see `MutationJournal`)."""
        return MutationJournal(self)

    # -- persistence ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The JSON document `save_to_file` writes (schema v2, no embeddings)."""
        return json.loads(state_to_json(self.snapshot()))

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any]) -> Skillbook:
        """Build from the JSON document; raises `SkillbookFormatError` like `load_from_file`."""
        try:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:  # not JSON-serialisable, circular, lone surrogate
            raise SkillbookFormatError(f"<dict>: not a JSON document ({quote(str(exc))})") from None
        skillbook = cls()
        skillbook.restore(state_from_json(data, "<dict>"))
        return skillbook

    def save_to_file(self, path: str | PathLike[str]) -> None:
        """Write the skillbook to `path`: a JSON file (schema v2) with `<stem>.embeddings.npz`
        beside it, each written atomically, or a `postgresql://` URL, in one transaction (see
        `ace.skillbook.storage`).

        Concurrent saves are safe: every file is always some save's complete output; the last
        rename wins. Use `Skillbook.locked(path)` for read-modify-write across processes. A symlink
        at `path` is followed: the real file is replaced and its sidecar sits beside it. A sidecar
        that is itself a symlink is refused (`SymlinkRefusedError`, an `OSError`; nothing written).
        """
        with self._save_lock:
            open_store(path).save(self.snapshot())

    @classmethod
    def load_from_file(cls, path: str | PathLike[str], *, vectors: bool = True) -> Skillbook:
        """Load `path` and, if present, its `.embeddings.npz` sidecar (absent = no embeddings).
        `vectors=False` leaves the sidecar unread: for reading skills as text (a command line
        showing them starts faster); such a skillbook is not for saving over the file, which would
        drop the vectors.

        Vectors whose recorded text digest does not match the skill are dropped (stale cache).
        Raises `OSError` (e.g. `FileNotFoundError`) when the file cannot be read, and
        `SkillbookFormatError` for any malformed content of the JSON or the sidecar ("Skillbook
        format v2 required — regenerate" for another schema; otherwise naming the file, skill id and
        field). A symlink is resolved first, so the sidecar is the one beside the real file.

        A `postgresql://` URL is read from the database in one consistent snapshot, vectors
        included whatever `vectors` says (`SkillbookStorageError` when it cannot be reached).
        """
        skillbook = cls()
        skillbook.restore(open_store(path).load(vectors=vectors))
        return skillbook

    @classmethod
    @contextmanager
    def locked(cls, path: str | PathLike[str], *, timeout: float = -1) -> Iterator[Skillbook]:
        """Read-modify-write across processes: hold `<path>.lock`, load `path` (or start empty when
        it does not exist), yield the skillbook, and save it if the block exits without an error.

        `timeout` seconds (-1 = wait forever) bounds the wait for the lock; `filelock.Timeout` is
        raised when it expires. A symlink is resolved first: through a link or the real path, every
        process takes the same lock on the same file.

        With a `postgresql://` URL the block is one database transaction holding the skillbook's
        row lock (`SELECT ... FOR UPDATE`); only the changed rows are written, and other processes
        following the skillbook are notified on commit.
        """
        with open_store(path).locked(timeout=timeout) as held:
            skillbook = cls()
            skillbook.restore(held.state)
            yield skillbook
            held.save(skillbook.snapshot())

    # -- internals -----------------------------------------------------------------------------

    def _trail(self, skill: Skill, source: InsightSource | None, operation: OperationType) -> dict[str, Any]:
        """The fields every mutation moves: updated_at, and one more occurrence (a manual `api` one
        when no source is given)."""
        return {"updated_at": utc_now(), "occurrences": (*skill.occurrences, _stamped(source, operation))}

    def _add(
        self,
        section: str,
        issue: str,
        keywords: Iterable[str],
        insight: str | None,
        source: InsightSource | None,
        skill_id: str | None,
    ) -> Skill:
        """A new skill under `skill_id` (None: the section's next id), in its `create_memory` span."""
        with tracing.memory_span("create_memory", "ADD", section=section, **_source_uid(source)) as span, self._lock:
            skill = self._create(section, issue, keywords, insight, source, skill_id)
            span.set_attributes({tracing.MEMORY_RECORD_ID: skill.id, tracing.MEMORY_RECORD_COUNT: 1})
            return skill

    def _create(
        self,
        section: str,
        issue: str,
        keywords: Iterable[str],
        insight: str | None,
        source: InsightSource | None,
        skill_id: str | None,
    ) -> Skill:
        if not isinstance(section, str) or section not in VALID_SECTIONS:
            raise SkillbookError(f"section must be one of {sorted(VALID_SECTIONS)}, got {quote(section)}")
        if skill_id is None:
            skill_id = f"{section}-{self._last_numbers[section] + 1:05d}"
        elif skill_id in self._skills or id_number(skill_id) <= self._last_numbers[section]:
            raise SkillbookError(
                f"skill_id {quote(skill_id)} was already handed out (last {section} number: "
                f"{self._last_numbers[section]}); ids are never reused, so this ADD cannot be replayed here"
            )
        now = utc_now()
        # Skill validates both (keywords are normalised from any iterable of strings into a tuple).
        checked_section, raw_keywords = cast(Section, section), cast(tuple[str, ...], keywords)
        skill = Skill(
            id=skill_id,
            section=checked_section,
            keywords=raw_keywords,
            issue=issue,
            insight=insight,
            occurrences=(_stamped(source, "ADD"),),
            created_at=now,
            updated_at=now,
        )
        self._last_numbers[section] = max(self._last_numbers[section], id_number(skill_id))
        return self._store(skill, content=True)

    def _apply(self, op: UpdateOperation) -> Skill:
        if op.type == "ADD":
            return self._add(
                op.section or "", op.issue or "", op.keywords or (), op.insight, op.insight_source, op.skill_id
            )
        assert op.skill_id is not None  # UpdateOperation guarantees it for non-ADD types
        if op.type == "UPDATE":
            return self.update_skill(
                op.skill_id, issue=op.issue, keywords=op.keywords, insight=op.insight, insight_source=op.insight_source
            )
        if op.type == "TAG":
            return self.tag_skill(op.skill_id, cast(int, op.delta), insight_source=op.insight_source)
        return self.remove_skill(op.skill_id, op.reason or "", insight_source=op.insight_source)


def _source_uid(source: InsightSource | None) -> dict[str, Any]:
    """The span attribute naming the trace behind a mutation (absent: the enclosing step's, if any)."""
    return {tracing.TRACE_UID: source.trace_uid} if isinstance(source, InsightSource) else {}


def _record(skill_id: str, source: InsightSource | None) -> dict[str, Any]:
    return {tracing.MEMORY_RECORD_ID: skill_id, tracing.MEMORY_RECORD_COUNT: 1, **_source_uid(source)}
