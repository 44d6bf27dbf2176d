"""The on-disk format of `skillbook.json` (schema v2, no vectors; the vectors are in the sidecar,
see `_sidecar`), and the state the two files hold together. Both files are written atomically (temp file in
the same folder, fsync, rename),
so a crash leaves either the old or the new complete file.

The JSON is untrusted input: it is parsed with `ace.untrusted.parse_json` (size, depth, duplicate
keys, NaN, huge numbers, lone surrogates) and every field is validated, so any malformed file
raises `SkillbookFormatError` naming the file and the field, never another exception.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ace.skillbook._errors import SkillbookError, SkillbookFormatError
from ace.skillbook._skill import MAX_ID_DIGITS, SECTIONS, Skill, id_number, skill_id_order
from ace.skillbook._state import SkillbookState
from ace.untrusted import UntrustedInputError, parse_json, quote

__all__ = [
    "MAX_SKILLBOOK_BYTES",
    "embedding_sidecar_path",
    "SCHEMA_VERSION",
    "StoredSkillbook",
    "decode_skillbook",
    "encode_skillbook",
    "id_number",
    "state_to_json",
]

SCHEMA_VERSION = "2"
FORMAT_V2_REQUIRED = "Skillbook format v2 required — regenerate"
MAX_SKILLBOOK_BYTES = 256 * 1024 * 1024
"""Largest `skillbook.json` loaded (about 300,000 skills); a bigger file is refused before parsing."""
MAX_ID_NUMBER = 10**MAX_ID_DIGITS - 1
_TOP_LEVEL_KEYS = frozenset({"schema_version", "skills", "sections", "next_id", "next_ids", "similarity_decisions"})


@dataclass(frozen=True, slots=True)
class StoredSkillbook:
    """The content of a `skillbook.json`."""

    skills: list[Skill]
    """Skills in file order, without embeddings unless the file carried them inline."""
    last_numbers: dict[str, int]
    """Per section, the highest id number ever handed out."""
    similarity_decisions: dict[str, Any]
    """Deduplication decisions, kept verbatim."""


def encode_skillbook(
    skills: Sequence[Skill], last_numbers: Mapping[str, int], similarity_decisions: Mapping[str, Any]
) -> bytes:
    """The JSON bytes of a skillbook. `next_id` is the highest number in use across sections, so
    ace-framework 0.13 (one global counter) never hands out an id that exists here."""
    payload = {
        "schema_version": SCHEMA_VERSION,
        "skills": {skill.id: skill.to_dict() for skill in skills},
        "sections": {section: [s.id for s in skills if s.section == section] for section in SECTIONS},
        "next_id": max(last_numbers.values(), default=0),
        "next_ids": dict(last_numbers),
        "similarity_decisions": dict(similarity_decisions),
    }
    return json.dumps(payload, ensure_ascii=False, indent=2).encode("utf-8")


def _format_error(source: str, message: str) -> SkillbookFormatError:
    return SkillbookFormatError(f"{source}: {message}")


def _number(value: Any, source: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ID_NUMBER:
        raise _format_error(source, f"{field} must be an integer from 0 to {MAX_ID_NUMBER}, got {quote(value)}")
    return value


def decode_skillbook(data: bytes, source: str) -> StoredSkillbook:
    """Parse and validate JSON bytes read from `source` (a path, for messages).

    Raises `SkillbookFormatError`: "Skillbook format v2 required — regenerate" for a missing or other
    schema_version; otherwise a message naming the file, and the skill id and field at fault.
    """
    if len(data) > MAX_SKILLBOOK_BYTES:
        raise _format_error(source, f"file is {len(data)} bytes, over the {MAX_SKILLBOOK_BYTES}-byte limit")
    try:
        payload = parse_json(data, source)
    except UntrustedInputError as exc:
        raise SkillbookFormatError(str(exc)) from None
    if not isinstance(payload, dict):
        raise _format_error(source, f"expected a JSON object at the top level, got {type(payload).__name__}")
    if payload.get("schema_version") != SCHEMA_VERSION:
        error = SkillbookFormatError(FORMAT_V2_REQUIRED)
        error.add_note(f"{source} has schema_version={quote(payload.get('schema_version'))}")
        raise error
    unknown = sorted(set(payload) - _TOP_LEVEL_KEYS)
    if unknown:
        raise _format_error(source, f"unknown top-level key(s) {quote(unknown)}")
    raw_skills = payload.get("skills", {})
    if not isinstance(raw_skills, dict):
        raise _format_error(source, f"'skills' must be an object keyed by skill id, got {type(raw_skills).__name__}")
    skills = []
    for key, raw in raw_skills.items():
        try:
            skill = Skill.from_dict(raw)
        except SkillbookError as exc:
            raise _format_error(source, f"skill {quote(key)}: {exc}") from None
        if skill.id != key:
            raise _format_error(source, f"skill {quote(key)}: field id is {quote(skill.id)}, expected the key")
        skills.append(skill)
    global_last = _number(payload.get("next_id", 0), source, "next_id")
    raw_last = payload.get("next_ids")
    if raw_last is not None and not isinstance(raw_last, dict):
        raise _format_error(source, f"next_ids must be an object, got {quote(raw_last)}")
    last_numbers: dict[str, int] = {}
    for section in SECTIONS:
        recorded = global_last if raw_last is None else _number(raw_last.get(section, 0), source, f"next_ids.{section}")
        in_use = [id_number(s.id) for s in skills if s.section == section]
        last_numbers[section] = max([recorded, *in_use])
    decisions = payload.get("similarity_decisions", {})
    if not isinstance(decisions, dict):
        raise _format_error(source, f"similarity_decisions must be an object, got {quote(decisions)}")
    return StoredSkillbook(skills, last_numbers, decisions)


def embedding_sidecar_path(path: str | os.PathLike[str]) -> Path:
    """`dir/name.json` -> `dir/name.embeddings.npz` (the name ace-framework 0.13 uses). The Skillbook
    passes the resolved path (`os.path.realpath`), so a symlink and its target share one sidecar."""
    path = Path(path)
    return path.with_name(f"{path.stem}.embeddings.npz")


def state_to_json(state: SkillbookState) -> bytes:
    """The JSON bytes of `state` (skills in id order; no vectors: they go to the sidecar)."""
    skills = sorted(state.skills.values(), key=lambda skill: skill_id_order(skill.id))
    return encode_skillbook(skills, state.last_numbers, state.similarity_decisions)
