"""The on-disk format: `skillbook.json` (schema v2, no vectors) plus a `.embeddings.npz` sidecar.

Both files are written atomically (temp file in the same folder, fsync, rename), so a crash leaves
either the old or the new complete file. The sidecar records, per skill, a digest of the text that
was embedded; a vector whose digest does not match the skill's current text (the JSON was edited,
or a crash/concurrent save paired files from different saves) is dropped on load, never misused.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ace.skillbook._errors import SkillbookError, SkillbookFormatError
from ace.skillbook._skill import VALID_SECTIONS, Skill, as_embedding

__all__ = [
    "SCHEMA_VERSION",
    "StoredEmbeddings",
    "StoredSkillbook",
    "attach_embeddings",
    "decode_skillbook",
    "embedding_sidecar_path",
    "encode_skillbook",
    "read_embeddings",
    "text_digest",
    "write_embeddings",
]

SCHEMA_VERSION = "2"
FORMAT_V2_REQUIRED = "Skillbook format v2 required — regenerate"
EMBEDDING_MODEL_KEY = "__embedding_model__"
TEXT_DIGESTS_KEY = "__embedding_text_digests__"
_TOP_LEVEL_KEYS = frozenset({"schema_version", "skills", "sections", "next_id", "next_ids", "similarity_decisions"})
_ID_NUMBER = re.compile(r"-(\d+)$")


def embedding_sidecar_path(path: Path) -> Path:
    """`dir/name.json` -> `dir/name.embeddings.npz` (the name ace-framework 0.13 uses)."""
    return path.with_name(f"{path.stem}.embeddings.npz")


def text_digest(text: str) -> str:
    """A short digest of an embedding input, stored beside the vector to detect staleness."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=10).hexdigest()


def id_number(skill_id: str) -> int:
    """The numeric part of `context-00042` (42)."""
    match = _ID_NUMBER.search(skill_id)
    if match is None:
        raise SkillbookError(f"skill id {skill_id!r} does not end in a number")
    return int(match.group(1))


@dataclass(frozen=True, slots=True)
class StoredSkillbook:
    """The content of a `skillbook.json`."""

    skills: list[Skill]
    """Skills in file order, without embeddings unless the file carried them inline."""
    last_numbers: dict[str, int]
    """Per section, the highest id number ever handed out."""
    similarity_decisions: dict[str, Any]
    """Deduplication decisions, kept verbatim."""


@dataclass(frozen=True, slots=True)
class StoredEmbeddings:
    """The content of a `.embeddings.npz` sidecar."""

    vectors: dict[str, np.ndarray]
    """Skill id -> read-only float32 vector."""
    model: str | None
    """The embedder that made the vectors, when recorded."""
    digests: dict[str, str] | None
    """Skill id -> digest of the embedded text; None for files without digests (ace-framework 0.13)."""


def encode_skillbook(
    skills: Sequence[Skill], last_numbers: Mapping[str, int], similarity_decisions: Mapping[str, Any]
) -> bytes:
    """The JSON bytes of a skillbook. `next_id` is the highest number in use across sections, so
    ace-framework 0.13 (one global counter) never hands out an id that exists here."""
    payload = {
        "schema_version": SCHEMA_VERSION,
        "skills": {skill.id: skill.to_dict() for skill in skills},
        "sections": {section: [s.id for s in skills if s.section == section] for section in sorted(VALID_SECTIONS)},
        "next_id": max(last_numbers.values(), default=0),
        "next_ids": dict(last_numbers),
        "similarity_decisions": dict(similarity_decisions),
    }
    return json.dumps(payload, ensure_ascii=False, indent=2).encode("utf-8")


def _format_error(source: str, message: str) -> SkillbookFormatError:
    return SkillbookFormatError(f"{source}: {message}")


def _number(value: Any, source: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _format_error(source, f"{field} must be a non-negative integer, got {value!r}")
    return value


def decode_skillbook(data: bytes, source: str) -> StoredSkillbook:
    """Parse and validate JSON bytes read from `source` (a path, for messages).

    Raises `SkillbookFormatError`: "Skillbook format v2 required — regenerate" for a missing or other
    schema_version; otherwise a message naming the file, and the skill id and field at fault.
    """
    try:
        payload = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _format_error(source, f"not valid JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise _format_error(source, f"expected a JSON object at the top level, got {type(payload).__name__}")
    if payload.get("schema_version") != SCHEMA_VERSION:
        error = SkillbookFormatError(FORMAT_V2_REQUIRED)
        error.add_note(f"{source} has schema_version={payload.get('schema_version')!r}")
        raise error
    unknown = sorted(set(payload) - _TOP_LEVEL_KEYS)
    if unknown:
        raise _format_error(source, f"unknown top-level key(s) {unknown}")
    raw_skills = payload.get("skills", {})
    if not isinstance(raw_skills, dict):
        raise _format_error(source, f"'skills' must be an object keyed by skill id, got {type(raw_skills).__name__}")
    skills = []
    for key, raw in raw_skills.items():
        try:
            skill = Skill.from_dict(raw)
        except SkillbookError as exc:
            raise _format_error(source, f"skill {key!r}: {exc}") from None
        if skill.id != key:
            raise _format_error(source, f"skill {key!r}: field id is {skill.id!r}, expected the key {key!r}")
        skills.append(skill)
    global_last = _number(payload.get("next_id", 0), source, "next_id")
    raw_last = payload.get("next_ids")
    if raw_last is not None and not isinstance(raw_last, dict):
        raise _format_error(source, f"next_ids must be an object, got {raw_last!r}")
    last_numbers = {}
    for section in sorted(VALID_SECTIONS):
        recorded = global_last if raw_last is None else _number(raw_last.get(section, 0), source, f"next_ids.{section}")
        in_use = [id_number(s.id) for s in skills if s.section == section]
        last_numbers[section] = max([recorded, *in_use])
    decisions = payload.get("similarity_decisions", {})
    if not isinstance(decisions, dict):
        raise _format_error(source, f"similarity_decisions must be an object, got {decisions!r}")
    return StoredSkillbook(skills, last_numbers, decisions)


def write_embeddings(handle: IO[bytes], skills: Sequence[Skill], model: str | None) -> None:
    """Write the sidecar, an `.npz` archive: one float32 array per skill that has an embedding (keyed
    by id), the digest of each embedded text, and the embedder name. Uncompressed: float vectors
    barely compress. Written member by member because `numpy.savez` re-encodes an identical header
    for each of thousands of small arrays."""
    embedded = [s for s in skills if s.embedding is not None]
    arrays: dict[str, np.ndarray] = {s.id: s.embedding for s in embedded}  # type: ignore[misc]
    digests = [[s.id, text_digest(s.embedding_text())] for s in embedded]
    arrays[TEXT_DIGESTS_KEY] = np.array(digests, dtype=np.str_).reshape(len(digests), 2)
    if model is not None:
        arrays[EMBEDDING_MODEL_KEY] = np.array(model, dtype=np.str_)
    headers: dict[tuple[str, tuple[int, ...]], bytes] = {}
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in arrays.items():
            header = headers.get((array.dtype.str, array.shape))
            if header is None:
                buffer = io.BytesIO()
                np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(array))
                header = headers[(array.dtype.str, array.shape)] = buffer.getvalue()
            archive.writestr(f"{key}.npy", header + np.ascontiguousarray(array).tobytes())


_NPY_MAGIC = b"\x93NUMPY"


def _parse_npy(data: bytes, headers: dict[bytes, tuple[tuple[int, ...], bool, np.dtype]]) -> np.ndarray:
    """A read-only array over the `.npy` bytes `data`; parsed headers are cached in `headers`
    (thousands of same-shaped vectors share one header, and parsing it is the slow part)."""
    if data[:6] != _NPY_MAGIC:
        raise ValueError("member is not a .npy array")
    start = 10 if data[6] == 1 else 12
    length = int.from_bytes(data[8:start], "little")
    header = data[:start + length]
    parsed = headers.get(header)
    if parsed is None:
        buffer = io.BytesIO(header)
        version = np.lib.format.read_magic(buffer)
        if version == (1, 0):
            parsed = np.lib.format.read_array_header_1_0(buffer)
        elif version == (2, 0):
            parsed = np.lib.format.read_array_header_2_0(buffer)
        else:
            return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        headers[header] = parsed
    shape, fortran_order, dtype = parsed
    if dtype.hasobject:
        raise ValueError("member holds Python objects (pickles are not loaded)")
    count = int(np.prod(shape, dtype=np.int64))
    array = np.frombuffer(data, dtype=dtype, count=count, offset=len(header))
    return array.reshape(shape, order="F" if fortran_order else "C")


def _zip_members(path: Path) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of each member of the zip archive at `path`. Uncompressed members are sliced
    straight out of the file (CRC-checked), which is several times faster than `ZipFile.read` for
    thousands of small members; compressed ones (numpy.savez_compressed, ace-framework 0.13) go
    through `ZipFile.read`."""
    data = path.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                yield info.filename, archive.read(info)
                continue
            offset = info.header_offset
            if data[offset:offset + 4] != b"PK\x03\x04":
                raise zipfile.BadZipFile(f"bad local header for member {info.filename!r}")
            name_length = int.from_bytes(data[offset + 26:offset + 28], "little")
            extra_length = int.from_bytes(data[offset + 28:offset + 30], "little")
            start = offset + 30 + name_length + extra_length
            member = data[start:start + info.compress_size]
            if zlib.crc32(member) != info.CRC:
                raise zipfile.BadZipFile(f"CRC mismatch in member {info.filename!r}")
            yield info.filename, member


def read_embeddings(path: Path) -> StoredEmbeddings:
    """Read a sidecar written by `write_embeddings`, `numpy.savez(_compressed)` or ace-framework 0.13.

    Raises `SkillbookFormatError` naming the file when it is damaged (delete it: it is a cache).
    """
    headers: dict[bytes, tuple[tuple[int, ...], bool, np.dtype]] = {}
    try:
        contents = {name.removesuffix(".npy"): _parse_npy(data, headers) for name, data in _zip_members(path)}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise SkillbookFormatError(
            f"{path}: unreadable embeddings sidecar ({exc}); delete it, embeddings are recomputed"
        ) from None
    model_array = contents.pop(EMBEDDING_MODEL_KEY, None)
    digest_array = contents.pop(TEXT_DIGESTS_KEY, None)
    try:
        vectors = {key: as_embedding(value, repr(key)) for key, value in contents.items()}
    except SkillbookError as exc:
        raise SkillbookFormatError(f"{path}: {exc}") from None
    return StoredEmbeddings(
        vectors=vectors,
        model=None if model_array is None else str(model_array[()]),
        digests=None if digest_array is None else {str(k): str(v) for k, v in digest_array},
    )


def attach_embeddings(skills: Mapping[str, Skill], embeddings: StoredEmbeddings) -> str | None:
    """Give freshly decoded `skills` (not yet shared with anyone) their vectors from `embeddings`,
    in place. A vector is skipped when its skill is gone or its recorded text digest differs from
    the skill's current `embedding_text()` (stale). Returns the embedding model, or None when no
    vector was attached."""
    attached = False
    for skill_id, vector in embeddings.vectors.items():
        skill = skills.get(skill_id)
        if skill is None:
            continue
        if embeddings.digests is not None and embeddings.digests.get(skill_id) != text_digest(skill.embedding_text()):
            continue
        object.__setattr__(skill, "embedding", vector)
        attached = True
    return embeddings.model if attached else None
