"""The PostgreSQL skillbook backend: load, save, and `locked` read-modify-write as one transaction.

A write takes `SELECT ... FOR UPDATE` on the skillbook's row in `ace_skillbooks`, so writers of one
skillbook are serialised by the database; the per-section id counters live in that row, so ids are
never handed out twice. Only the rows that changed are written (a skill replaced by a mutation is a
new object: identity tells), each stamped with the new version, and `NOTIFY ace_skillbook,
'<name>:<version>'` is sent in the same transaction (delivered on commit). Each process keeps the
last state it read per skillbook and, under the lock, reads only the rows stamped after it.

psycopg is imported on first use; without the `postgres` extra a `SkillbookStorageError` says so.
"""

from __future__ import annotations

import os
import re
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import filelock
import numpy as np

from ace import tracing
from ace.redaction import redact, url_secrets
from ace.skillbook._errors import SkillbookFormatError
from ace.skillbook._pg_rows import decoded_json, last_number, model_name, skill_from_row
from ace.skillbook._pg_schema import NOTIFY_CHANNEL, ensure_schema
from ace.skillbook._skill import VALID_SECTIONS, Skill
from ace.skillbook._storage import MAX_ID_NUMBER
from ace.skillbook._store import SkillbookStorageError
from ace.untrusted import quote

if TYPE_CHECKING:
    import psycopg

    from ace.skillbook._skillbook import Skillbook

__all__ = [
    "PgLocation",
    "StoredState",
    "apply_changes",
    "connect",
    "fetch_state",
    "fill",
    "load",
    "locked",
    "parse_location",
    "save",
    "storage_error",
]

DEFAULT_NAME = "default"
_VECTOR_KINDS = tuple(
    (column, model_attribute)
    for column, model_attribute in (("embedding", "_embedding_model"), ("match_embedding", "_match_embedding_model"))
    if column in Skill.__dataclass_fields__
)
"""Each vector field `Skill` has, with the Skillbook attribute naming its embedder: one `bytea`
column per kind on `ace_skills`, one `json` model column per kind on `ace_skillbooks`."""
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}", re.ASCII)
_SB = TypeVar("_SB", bound="Skillbook")


@dataclass(frozen=True, slots=True)
class PgLocation:
    """A skillbook in a database, parsed from its URL."""

    conninfo: str
    """The URL libpq connects with (the `skillbook` parameter removed)."""
    name: str
    """The skillbook's name inside the database."""
    display: str
    """The URL for messages: secrets hidden (`ace.redaction.redact`)."""
    secrets: tuple[str, ...] = ()
    """The URL's secret strings, hidden wherever a driver's message quotes them."""


def parse_location(url: str) -> PgLocation:
    """Split `postgresql://...[?skillbook=NAME&...]` into what libpq gets and the skillbook name.

    Raises `SkillbookStorageError` for a malformed URL or name."""
    try:
        parts = urlsplit(url)
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError as exc:
        raise SkillbookStorageError(f"not a PostgreSQL URL: {quote(redact(url))} ({redact(str(exc), url_secrets(url))})") from None
    names = [value for key, value in query if key == "skillbook"]
    name = names[-1] if names else DEFAULT_NAME
    if not _NAME.fullmatch(name):
        raise SkillbookStorageError(
            f"skillbook name must be 1-64 letters, digits, '_', '.' or '-', got {quote(name)}"
        )
    rest = urlencode([(key, value) for key, value in query if key != "skillbook"])
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, rest, ""))
    return PgLocation(conninfo, name, redact(url), url_secrets(url))


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise SkillbookStorageError(
            "a postgresql:// skillbook needs the postgres extra: pip install 'ace[postgres]'"
        ) from None
    return psycopg


def storage_error(location: PgLocation, error: BaseException) -> SkillbookStorageError:
    """A database error as one line naming the database (never its password)."""
    message = " ".join(str(error).split()) or type(error).__name__
    return SkillbookStorageError(f"{location.display}: {redact(message, location.secrets)}")


_migrated: set[tuple[int, str]] = set()


def connect(location: PgLocation, *, connect_timeout: int = 5) -> psycopg.Connection:
    """A new autocommit connection, the schema created or migrated (once per process and database).

    Raises `SkillbookStorageError` when the server cannot be reached or refuses the login."""
    psycopg = _psycopg()
    try:
        conn = psycopg.connect(location.conninfo, autocommit=True, connect_timeout=connect_timeout)
    except psycopg.Error as exc:
        raise storage_error(location, exc) from None
    try:
        if (os.getpid(), location.conninfo) not in _migrated:
            ensure_schema(conn)
            _migrated.add((os.getpid(), location.conninfo))
    except BaseException as exc:
        conn.close()
        if isinstance(exc, psycopg.Error):
            raise storage_error(location, exc) from None
        raise
    return conn


_sessions = threading.local()


@contextmanager
def _session(location: PgLocation) -> Iterator[psycopg.Connection]:
    """This thread's connection to the database, reused across calls; dropped after an error (a
    broken connection is replaced on the next call) and converted to `SkillbookStorageError`."""
    pg = _psycopg()
    cache: dict[tuple[int, str], psycopg.Connection] = _sessions.__dict__.setdefault("connections", {})
    key = (os.getpid(), location.conninfo)
    conn = cache.get(key)
    if conn is not None and not conn.closed and _hung_up(conn):
        conn.close()  # the server went away (restart, idle timeout) since the last call
    if conn is None or conn.closed:
        conn = cache[key] = connect(location)
    try:
        yield conn
    except pg.errors.LockNotAvailable:
        raise filelock.Timeout(location.display) from None
    except pg.Error as exc:
        cache.pop(key, None)
        conn.close()
        raise storage_error(location, exc) from None


def _hung_up(conn: psycopg.Connection) -> bool:
    """Whether an idle connection (no LISTEN, no query in flight) has something to read: that is
    only ever the server's goodbye (a termination notice or EOF). One zero-timeout poll."""
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


# -- the state of one skillbook -----------------------------------------------------------------

@dataclass(slots=True)
class StoredState:
    """A skillbook as read from the database at `version`. Skills are immutable, so states share them."""

    version: int = -1
    """The skillbook row's version (-1: nothing read yet)."""
    skills: dict[str, Skill] = field(default_factory=dict)
    last_numbers: dict[str, int] = field(default_factory=lambda: dict.fromkeys(sorted(VALID_SECTIONS), 0))
    decisions: dict[str, Any] = field(default_factory=dict)
    models: dict[str, str | None] = field(default_factory=dict)
    """Per vector column (`embedding`, ...), the embedder that made its vectors."""

    def copy(self) -> StoredState:
        return StoredState(self.version, dict(self.skills), dict(self.last_numbers), dict(self.decisions),
                           dict(self.models))


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed in the database after some version."""

    version: int
    skills: list[Skill]
    purged: list[str]
    decisions: list[tuple[str, Any]]
    """(pair, record or None when removed), in the order the decisions were first made."""
    last_numbers: dict[str, int]
    models: dict[str, str | None]


_SKILL_COLUMNS = ", ".join(("id, section, content, active, used_count, helpful_count, harmful_count, neutral_count, "
                            "created_at, updated_at", *(column for column, _ in _VECTOR_KINDS)))
_SKILL_SELECT = _SKILL_COLUMNS.replace("content", "content::text", 1)
"""The skill columns as read: JSON as text, parsed with `ace.untrusted`'s limits (`_pg_rows`)."""
_MODEL_SELECT = ", ".join(f"{column}_model::text" for column, _ in _VECTOR_KINDS)
_VECTOR_COLUMNS = tuple(column for column, _ in _VECTOR_KINDS)


def fetch_state(conn: psycopg.Connection, location: PgLocation, since: int, *, for_update: bool = False) -> Changes | None:
    """The rows changed after version `since` (-1: everything), or None when the skillbook does not
    exist. Run it inside one transaction (REPEATABLE READ, or after FOR UPDATE) for a consistent read.
    Raises `SkillbookFormatError` (one line naming the database, skill and field) for any row that is
    not valid: rows are untrusted, see `_pg_rows`."""
    name, where = location.name, location.display
    row = conn.execute(
        f"SELECT version, last_context, last_harness, {_MODEL_SELECT} FROM ace_skillbooks WHERE name = %s"
        + (" FOR UPDATE" if for_update else ""),
        (name,),
    ).fetchone()
    if row is None:
        return None
    version, last_context, last_harness, *model_names = row
    last_numbers = {section: last_number(value, f"{where}: last_{section}")
                    for section, value in (("context", last_context), ("harness", last_harness))}
    models = {column: model_name(model, f"{where}: {column}_model") for column, model in zip(_VECTOR_COLUMNS, model_names)}
    if version == since:
        return Changes(version, [], [], [], last_numbers, models)
    occurrences: dict[str, list[Any]] = {}
    for skill_id, record in conn.execute(
        "SELECT o.skill_id, o.record::text FROM ace_occurrences o JOIN ace_skills s "
        "ON s.skillbook = o.skillbook AND s.id = o.skill_id "
        "WHERE s.skillbook = %s AND s.updated_version > %s ORDER BY o.skill_id, o.position",
        (name, since),
    ):
        occurrences.setdefault(skill_id, []).append(record)
    skills = [
        skill_from_row(row, occurrences.get(row[0], []), _VECTOR_COLUMNS, where)
        for row in conn.execute(
            f"SELECT {_SKILL_SELECT} FROM ace_skills WHERE skillbook = %s AND updated_version > %s",
            (name, since),
        )
    ]
    purged = [] if since < 0 else [r[0] for r in conn.execute(
        "SELECT skill_id FROM ace_purged_skills WHERE skillbook = %s AND purged_version > %s", (name, since)
    )]
    decisions = [(pair, decoded_json(record, f"{where}: similarity decision {quote(pair)}")) for pair, record in conn.execute(
        "SELECT pair, record::text FROM ace_similarity_decisions WHERE skillbook = %s AND updated_version > %s "
        "ORDER BY position",
        (name, since),
    ) if record is not None or since >= 0]
    return Changes(version, skills, purged, decisions, last_numbers, models)


def apply_changes(state: StoredState, changes: Changes) -> StoredState:
    """`state` (not modified) moved forward by `changes`."""
    new = state.copy()
    for skill_id in changes.purged:
        new.skills.pop(skill_id, None)
    for skill in changes.skills:
        new.skills[skill.id] = skill
    for pair, record in changes.decisions:
        if record is None:
            new.decisions.pop(pair, None)
        else:
            new.decisions[pair] = record
    new.last_numbers = dict(changes.last_numbers)
    new.models = dict(changes.models)
    new.version = changes.version
    return new


def fill(skillbook: Skillbook, state: StoredState) -> None:
    """Give a new, empty Skillbook the content of `state` (the counterpart of its file `_restore`)."""
    with skillbook._lock:
        skillbook._skills = dict(state.skills)
        skillbook._last_numbers = dict(state.last_numbers)
        skillbook._similarity_decisions = dict(state.decisions)
        for column, attribute in _VECTOR_KINDS:
            setattr(skillbook, attribute, state.models.get(column))
        skillbook._order = None
        skillbook._log.record(state.skills, content=True)


# -- the per-process cache of the last state read -------------------------------------------------

_cache: dict[tuple[int, str, str], StoredState] = {}
_cache_lock = threading.Lock()


def _current(conn: psycopg.Connection, location: PgLocation, *, for_update: bool) -> StoredState | None:
    """The skillbook as the database holds it now, reading only rows changed since this process
    last read it. None when it does not exist."""
    key = (os.getpid(), location.conninfo, location.name)
    with _cache_lock:
        cached = _cache.get(key)
    since = cached.version if cached is not None else -1
    changes = fetch_state(conn, location, since, for_update=for_update)
    if changes is None:
        return None
    if since >= 0 and changes.version < since:  # the database was reset under us: read it whole
        changes = fetch_state(conn, location, -1)
        assert changes is not None
    state = apply_changes(cached if since >= 0 and cached is not None else StoredState(), changes)
    _remember(key, state)
    return state


def _remember(key: tuple[int, str, str], state: StoredState) -> None:
    with _cache_lock:
        _cache[key] = state


def _forget(location: PgLocation) -> None:
    with _cache_lock:
        _cache.pop((os.getpid(), location.conninfo, location.name), None)


# -- writing ------------------------------------------------------------------------------------

def _same(old: Skill | None, new: Skill, by_identity: bool) -> bool:
    if old is None:
        return False
    if by_identity or old is new:
        return old is new
    if old != new:
        return False
    for column, _ in _VECTOR_KINDS:
        a, b = getattr(old, column), getattr(new, column)
        if not ((a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))):
            return False
    return True


def _write(conn: psycopg.Connection, location: PgLocation, base: StoredState, target: StoredState,
           *, by_identity: bool, force: bool = False) -> int | None:
    """Write the rows in which `target` differs from `base` (what the database holds, row locked) and
    notify; returns the new version, or None when nothing changed (unless `force`: the caller
    changed rows already)."""
    from psycopg.types.json import Json

    name = location.name
    changed = [s for skill_id, s in target.skills.items() if not _same(base.skills.get(skill_id), s, by_identity)]
    purged = [skill_id for skill_id in base.skills if skill_id not in target.skills]
    decided = [(pair, record) for pair, record in target.decisions.items()
               if pair not in base.decisions or base.decisions[pair] != record]
    undecided = [pair for pair in base.decisions if pair not in target.decisions]
    numbers = {section: max(target.last_numbers.get(section, 0), base.last_numbers.get(section, 0))
               for section in sorted(VALID_SECTIONS)}
    if (not (changed or purged or decided or undecided) and numbers == base.last_numbers
            and target.models == base.models and not force):
        return None
    version = base.version + 1
    with conn.cursor() as cur:
        if purged:
            cur.execute("DELETE FROM ace_skills WHERE skillbook = %s AND id = ANY(%s)", (name, purged))
            cur.executemany(
                "INSERT INTO ace_purged_skills (skillbook, skill_id, purged_version) VALUES (%s, %s, %s) "
                "ON CONFLICT (skillbook, skill_id) DO UPDATE SET purged_version = EXCLUDED.purged_version",
                [(name, skill_id, version) for skill_id in purged],
            )
        if changed:
            cur.execute("DELETE FROM ace_purged_skills WHERE skillbook = %s AND skill_id = ANY(%s)",
                        (name, [s.id for s in changed]))
            cur.executemany(
                f"INSERT INTO ace_skills ({_SKILL_COLUMNS}, skillbook, updated_version) "
                f"VALUES ({', '.join(['%s'] * (12 + len(_VECTOR_KINDS)))}) "
                "ON CONFLICT (skillbook, id) DO UPDATE SET section = EXCLUDED.section, content = EXCLUDED.content, "
                "active = EXCLUDED.active, used_count = EXCLUDED.used_count, "
                "helpful_count = EXCLUDED.helpful_count, harmful_count = EXCLUDED.harmful_count, "
                "neutral_count = EXCLUDED.neutral_count, created_at = EXCLUDED.created_at, "
                "updated_at = EXCLUDED.updated_at, updated_version = EXCLUDED.updated_version"
                + "".join(f", {column} = EXCLUDED.{column}" for column, _ in _VECTOR_KINDS),
                [_skill_row(s, name, version) for s in changed],
            )
            rewritten, occurrence_rows = [], []
            for skill in changed:
                old = base.skills.get(skill.id)
                start = len(old.occurrences) if old is not None else 0
                if old is not None and skill.occurrences[:start] != old.occurrences:
                    rewritten.append(skill.id)  # not an append (a replayed or replaced file): rewrite all
                    start = 0
                occurrence_rows += [(name, skill.id, position, Json(skill.occurrences[position].to_dict()))
                                    for position in range(start, len(skill.occurrences))]
            if rewritten:
                cur.execute("DELETE FROM ace_occurrences WHERE skillbook = %s AND skill_id = ANY(%s)", (name, rewritten))
            if occurrence_rows:
                cur.executemany(
                    "INSERT INTO ace_occurrences (skillbook, skill_id, position, record) VALUES (%s, %s, %s, %s)",
                    occurrence_rows,
                )
        if decided:
            cur.executemany(
                "INSERT INTO ace_similarity_decisions AS d (skillbook, pair, record, updated_version) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (skillbook, pair) DO UPDATE SET record = EXCLUDED.record, "
                "updated_version = EXCLUDED.updated_version, "
                "position = CASE WHEN d.record IS NULL THEN EXCLUDED.position ELSE d.position END",
                [(name, pair, Json(record), version) for pair, record in decided],
            )
        if undecided:
            cur.execute(
                "UPDATE ace_similarity_decisions SET record = NULL, updated_version = %s "
                "WHERE skillbook = %s AND pair = ANY(%s)",
                (version, name, undecided),
            )
        models = [target.models.get(column) for column, _ in _VECTOR_KINDS]
        cur.execute(
            "UPDATE ace_skillbooks SET version = %s, last_context = %s, last_harness = %s"
            + "".join(f", {column}_model = %s" for column, _ in _VECTOR_KINDS) + " WHERE name = %s",
            (version, numbers["context"], numbers["harness"], *(None if m is None else Json(m) for m in models), name),
        )
        cur.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, f"{name}:{version}"))
    return version


def _skill_row(skill: Skill, name: str, version: int) -> tuple[Any, ...]:
    from psycopg.types.json import Json

    content = {"keywords": list(skill.keywords), "issue": skill.issue, "insight": skill.insight}
    vectors = [getattr(skill, column) for column, _ in _VECTOR_KINDS]
    return (skill.id, skill.section, Json(content), skill.active, skill.used_count, skill.helpful_count,
            skill.harmful_count, skill.neutral_count, skill.created_at, skill.updated_at,
            *(None if v is None else v.astype("<f4").tobytes() for v in vectors), name, version)


def _state_of(skillbook: Skillbook, version: int) -> StoredState:
    with skillbook._lock:
        return StoredState(version, dict(skillbook._skills), dict(skillbook._last_numbers),
                           dict(skillbook._similarity_decisions),
                           {column: getattr(skillbook, attribute, None) for column, attribute in _VECTOR_KINDS})


# -- the three entry points ---------------------------------------------------------------------

def load(cls: type[_SB], url: str) -> _SB:
    """`Skillbook.load_from_file(url)`: one consistent read (REPEATABLE READ).

    Raises `FileNotFoundError` when the database holds no skillbook of that name,
    `SkillbookStorageError` when it cannot be reached."""
    location = parse_location(url)
    with tracing.span("skillbook.load", path=location.display) as span, _session(location) as conn:
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            state = _current(conn, location, for_update=False)
        if state is None:
            raise FileNotFoundError(2, f"no skillbook named {quote(location.name)} in the database", location.display)
        skillbook = cls()
        fill(skillbook, state)
        span.set_attribute("skills", len(skillbook))
        return skillbook


def save(skillbook: Skillbook, url: str) -> None:
    """`save_to_file(url)`: make the database hold exactly this skillbook, in one transaction
    (rows compared with what it holds; the id counters never go back). Rows that cannot be read
    (edited by hand into malformed documents) are overwritten whole, as a save overwrites a
    malformed file: this is how `ace skillbook copy --replace` repairs a damaged skillbook."""
    location = parse_location(url)
    with tracing.span("skillbook.save", path=location.display), _session(location) as conn:
        try:
            with conn.transaction():
                conn.execute("INSERT INTO ace_skillbooks (name) VALUES (%s) ON CONFLICT DO NOTHING", (location.name,))
                overwritten = False
                try:
                    base = _current(conn, location, for_update=True)
                except SkillbookFormatError:
                    base, overwritten = _unreadable_rows_removed(conn, location, skillbook), True
                assert base is not None
                target = _state_of(skillbook, base.version)
                version = _write(conn, location, base, target, by_identity=False, force=overwritten)
        except BaseException:
            _forget(location)
            raise
        if version is not None:
            target.version = version
            target.last_numbers = {s: max(target.last_numbers.get(s, 0), base.last_numbers.get(s, 0))
                                   for s in sorted(VALID_SECTIONS)}
            _remember((os.getpid(), location.conninfo, location.name), target)


def _unreadable_rows_removed(conn: psycopg.Connection, location: PgLocation, skillbook: Skillbook) -> StoredState:
    """Make way for `skillbook` over rows that cannot be read: delete the skills it does not hold
    (tombstoned, so followers drop them), every occurrence, and the decisions it does not hold
    (nulled); return the state to write against, holding only the row's version and counters
    (clamped to valid ones). Runs inside the caller's transaction, the row locked FOR UPDATE."""
    name = location.name
    row = conn.execute("SELECT version, last_context, last_harness FROM ace_skillbooks WHERE name = %s FOR UPDATE",
                       (name,)).fetchone()
    assert row is not None  # inserted by the caller
    version, *numbers = row
    with skillbook._lock:
        ids, pairs = list(skillbook._skills), list(skillbook._similarity_decisions)
    with conn.cursor() as cur:
        cur.execute("DELETE FROM ace_occurrences WHERE skillbook = %s", (name,))
        cur.execute("DELETE FROM ace_skills WHERE skillbook = %s AND NOT (id = ANY(%s)) RETURNING id", (name, ids))
        gone = [(name, skill_id, version + 1) for (skill_id,) in cur.fetchall()]
        if gone:
            cur.executemany(
                "INSERT INTO ace_purged_skills (skillbook, skill_id, purged_version) VALUES (%s, %s, %s) "
                "ON CONFLICT (skillbook, skill_id) DO UPDATE SET purged_version = EXCLUDED.purged_version", gone,
            )
        cur.execute(
            "UPDATE ace_similarity_decisions SET record = NULL, updated_version = %s "
            "WHERE skillbook = %s AND record IS NOT NULL AND NOT (pair = ANY(%s))", (version + 1, name, pairs),
        )
    last_numbers = {section: min(max(value, 0), MAX_ID_NUMBER) for section, value in zip(("context", "harness"), numbers)}
    return StoredState(version, {}, last_numbers, {}, {})


@contextmanager
def locked(cls: type[_SB], url: str, *, timeout: float = -1) -> Iterator[_SB]:
    """`Skillbook.locked(url)`: one transaction holding the skillbook's row lock from the read to
    the write; the write happens only if the block exits without an error. `timeout` >= 0 bounds
    the wait for the lock (`filelock.Timeout` when it expires)."""
    location = parse_location(url)
    with _session(location) as conn:
        try:
            with conn.transaction():
                if timeout >= 0:
                    conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{max(int(timeout * 1000), 1)}ms",))
                conn.execute("INSERT INTO ace_skillbooks (name) VALUES (%s) ON CONFLICT DO NOTHING", (location.name,))
                base = _current(conn, location, for_update=True)
                assert base is not None
                skillbook = cls()
                fill(skillbook, base)
                yield skillbook
                target = _state_of(skillbook, base.version)
                version = _write(conn, location, base, target, by_identity=True)
        except BaseException:
            _forget(location)
            raise
        if version is not None:
            target.version = version
            _remember((os.getpid(), location.conninfo, location.name), target)

