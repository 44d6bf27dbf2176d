"""Rows of a PostgreSQL skillbook turned into skills, decisions and model names.

A row may have been edited by hand (or by anyone with write access to the database), so it is read
like a file: JSON columns arrive as text and go through `ace.untrusted.parse_json` (depth, number
size, duplicate keys, lone surrogates), vectors must be whole float32 values, and every field is
validated by the same `Skill` / `InsightSource` checks as a file. Any defect is one
`SkillbookFormatError` naming the database (secrets hidden), the skill and the field.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ace.skillbook._errors import SkillbookError, SkillbookFormatError
from ace.skillbook._provenance import InsightSource
from ace.skillbook._skill import COUNTERS, EMBEDDING_FIELDS, Skill, as_embedding
from ace.skillbook.storage._json_format import MAX_ID_NUMBER
from ace.untrusted import UntrustedInputError, parse_json, quote

__all__ = ["decoded_json", "last_number", "model_name", "skill_from_row"]
_FLOAT32_BYTES = 4


def decoded_json(text: Any, where: str) -> Any:
    """The JSON value of a `json` column read as text (`column::text`); None for SQL NULL."""
    if text is None:
        return None
    try:
        return parse_json(text, where)
    except UntrustedInputError as exc:
        raise SkillbookFormatError(str(exc)) from None


def model_name(text: Any, where: str) -> str | None:
    """An embedder name column (JSON text): a string or null."""
    value = decoded_json(text, where)
    if value is not None and not isinstance(value, str):
        raise SkillbookFormatError(f"{where} must be a string or null, got {quote(value)}")
    return value


def last_number(value: Any, where: str) -> int:
    """A section's id counter: an integer from 0 to the largest id number."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID_NUMBER:
        raise SkillbookFormatError(f"{where} must be an integer from 0 to {MAX_ID_NUMBER}, got {quote(value)}")
    return value


def skill_from_row(row: tuple[Any, ...], occurrences: list[Any], where: str) -> Skill:
    """The skill of an `ace_skills` row read in `SKILL_COLUMNS` order (`content` and the occurrence
    records as JSON text, then one `bytea` per vector column); `where` names the database in errors."""
    skill_id, section, content, active, *rest = row
    counters: dict[str, Any] = dict(zip(COUNTERS, rest[: len(COUNTERS)]))
    created_at, updated_at, *vectors = rest[len(COUNTERS) :]
    try:
        content = decoded_json(content, "content")
        if not isinstance(content, dict):
            raise SkillbookError(f"content must be an object, got {quote(content)}")
        arrays: dict[str, Any] = {
            column: _vector(vector, f"{skill_id!r} ({column})")
            for column, vector in zip(EMBEDDING_FIELDS.values(), vectors)
            if vector is not None
        }
        sources = [decoded_json(record, f"occurrence {number}") for number, record in enumerate(occurrences)]
        return Skill(
            id=skill_id,
            section=section,
            keywords=content.get("keywords", ()),
            issue=content.get("issue", ""),
            insight=content.get("insight"),
            occurrences=tuple(InsightSource.from_dict(source) for source in sources),
            active=active,
            created_at=created_at,
            updated_at=updated_at,
            **counters,
            **arrays,
        )
    except SkillbookError as exc:
        raise SkillbookFormatError(f"{where}: skill {quote(skill_id)}: {exc}") from None


def _vector(data: bytes, what: str) -> np.ndarray:
    if len(data) % _FLOAT32_BYTES:
        raise SkillbookError(f"vector {what} is {len(data)} bytes, not a whole number of float32 values")
    return as_embedding(np.frombuffer(data, dtype="<f4"), what)
