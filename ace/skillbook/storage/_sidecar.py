"""The `.embeddings.npz` sidecar: each skill's vectors, beside `skillbook.json`.

A skill has up to two vectors (`Skill.embedding`, the search vector of `embedding_text()`, and
`Skill.match_embedding`, the task matcher's vector of `match_text()`), each kind made by one
embedder. The sidecar is a cache. It records, per skill and kind, a digest of the text that was
embedded; a vector whose digest does not match the skill's current text (the JSON was edited, or a
crash or concurrent save paired files from different saves) is dropped on load, never misused. A
sidecar that is damaged in any way (not a zip, an encrypted or unsupported member, a garbage `.npy`
header, a vector that is not finite float data, vectors of one kind with several dimensions, more
bytes than the JSON's skills can need) is refused as a whole with `SkillbookFormatError`: delete
it, it is recomputed.

Layout: search vectors are members named by skill id (what ace-framework 0.13 reads); match
vectors are members named `__match__.<skill id>`, which readers that do not know them skip like
any vector of an unknown skill. Reserved members hold each kind's model name and text digests.
"""

from __future__ import annotations

import hashlib
import io
import math
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from ace.skillbook._errors import SkillbookError, SkillbookFormatError
from ace.skillbook._skill import EMBEDDING_FIELDS, MAX_EMBEDDING_DIMENSION, EmbeddingKind, Skill, as_embedding
from ace.untrusted import UntrustedInputError, check_text, quote, read_limited

__all__ = [
    "StoredEmbeddings",
    "attach_vectors",
    "read_embeddings",
    "sidecar_size_limit",
    "text_digest",
    "write_embeddings",
]

EMBEDDING_MODEL_KEY = "__embedding_model__"
TEXT_DIGESTS_KEY = "__embedding_text_digests__"
MATCH_MODEL_KEY = "__match_embedding_model__"
MATCH_DIGESTS_KEY = "__match_embedding_text_digests__"
MATCH_PREFIX = "__match__."
"""Member-name prefix of match vectors: `__match__.context-00001`."""
_MODEL_KEYS: dict[EmbeddingKind, str] = {"search": EMBEDDING_MODEL_KEY, "match": MATCH_MODEL_KEY}
_DIGEST_KEYS: dict[EmbeddingKind, str] = {"search": TEXT_DIGESTS_KEY, "match": MATCH_DIGESTS_KEY}
_MEMBER_PREFIXES: dict[EmbeddingKind, str] = {"search": "", "match": MATCH_PREFIX}

_BYTES_PER_SKILL = 2 * (MAX_EMBEDDING_DIMENSION * 4 + 1024)
"""Most sidecar bytes one skill can need: its two largest vectors (search and match) plus their npy
and zip headers and digest rows."""
_FIXED_BYTES = 1 << 20
"""Sidecar bytes allowed beyond the per-skill ones: the model name, the archive's directory."""
_CHUNK = 1 << 16
_NPY_MAGIC = b"\x93NUMPY"
_READ_ERRORS = (
    OSError,
    EOFError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    OverflowError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    zlib.error,
    zipfile.BadZipFile,
)
"""What the zip and npy readers raise on damaged bytes (SkillbookError is a ValueError)."""

_Headers = dict[bytes, tuple[tuple[int, ...], bool, np.dtype]]


def sidecar_size_limit(skills: int) -> int:
    """Most bytes a sidecar beside a JSON of `skills` skills may hold, on disk or decompressed."""
    return _FIXED_BYTES + max(skills, 0) * _BYTES_PER_SKILL


def text_digest(text: str) -> str:
    """A short digest of an embedding input, stored beside the vector to detect staleness."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=10).hexdigest()


@dataclass(frozen=True, slots=True)
class StoredEmbeddings:
    """The content of a `.embeddings.npz` sidecar."""

    vectors: dict[str, np.ndarray]
    """Skill id -> read-only float32 vector; all of one dimension."""
    model: str | None
    """The embedder that made the vectors, when recorded."""
    digests: dict[str, str] | None
    """Skill id -> digest of the embedded text; None for files without digests (ace-framework 0.13)."""
    match_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    """Skill id -> read-only float32 match vector (of `match_text()`); all of one dimension. Empty
    for files written before skills carried match vectors."""
    match_model: str | None = None
    """The embedder that made the match vectors, when recorded."""
    match_digests: dict[str, str] = field(default_factory=dict)
    """Skill id -> digest of the text each match vector was made from (a vector without one is never
    attached)."""


def write_embeddings(
    handle: IO[bytes], skills: Sequence[Skill], model: str | None, match_model: str | None = None
) -> None:
    """Write the sidecar, an `.npz` archive: one float32 array per skill that has a search embedding
    (keyed by id) and one per skill that has a match embedding (keyed `__match__.<id>`), the digest
    of each embedded text, and each kind's embedder name (`model`, `match_model`). Members of a
    kind no skill has are left out, so a skillbook without match vectors writes the same file as
    before they existed. Uncompressed: float vectors barely compress. Written member by member
    because `numpy.savez` re-encodes an identical header for each of thousands of small arrays."""
    arrays: dict[str, np.ndarray] = {}
    kinds: tuple[tuple[EmbeddingKind, str | None], ...] = (("search", model), ("match", match_model))
    for kind, kind_model in kinds:
        attribute = EMBEDDING_FIELDS[kind]
        embedded = [s for s in skills if getattr(s, attribute) is not None]
        if kind == "match" and not embedded:
            continue
        prefix = _MEMBER_PREFIXES[kind]
        arrays.update((f"{prefix}{s.id}", getattr(s, attribute)) for s in embedded)
        digests = [[s.id, text_digest(s.embedding_input(kind))] for s in embedded]
        arrays[_DIGEST_KEYS[kind]] = np.array(digests, dtype=np.str_).reshape(len(digests), 2)
        if kind_model is not None:
            arrays[_MODEL_KEYS[kind]] = np.array(kind_model, dtype=np.str_)
    headers: dict[tuple[str, tuple[int, ...]], bytes] = {}
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in arrays.items():
            header = headers.get((array.dtype.str, array.shape))
            if header is None:
                buffer = io.BytesIO()
                np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(array))
                header = headers[(array.dtype.str, array.shape)] = buffer.getvalue()
            archive.writestr(f"{key}.npy", header + np.ascontiguousarray(array).tobytes())


def read_embeddings(path: Path, skills: int) -> StoredEmbeddings | None:
    """Read a sidecar written by `write_embeddings`, `numpy.savez(_compressed)` or ace-framework 0.13,
    beside a JSON of `skills` skills (which bounds its size); None when there is no sidecar.

    Raises `SkillbookFormatError` naming the file when it is damaged (delete it: it is a cache).
    """
    limit = sidecar_size_limit(skills)
    try:
        data = read_limited(path, limit)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _damaged(path, exc) from None
    try:
        if len(data) > limit:
            raise ValueError(f"the file is over {limit} bytes, the most {skills} skills can need")
        contents = _read_arrays(data, limit)
        model = _model_name(contents.pop(EMBEDDING_MODEL_KEY, None), EMBEDDING_MODEL_KEY)
        digests = _digests(contents.pop(TEXT_DIGESTS_KEY, None), TEXT_DIGESTS_KEY)
        match_model = _model_name(contents.pop(MATCH_MODEL_KEY, None), MATCH_MODEL_KEY)
        match_digests = _digests(contents.pop(MATCH_DIGESTS_KEY, None), MATCH_DIGESTS_KEY) or {}
        vectors: dict[str, np.ndarray] = {}
        match_vectors: dict[str, np.ndarray] = {}
        for key, array in contents.items():
            if key.startswith(MATCH_PREFIX):
                match_vectors[key[len(MATCH_PREFIX) :]] = _vector(array, key)
            else:
                vectors[key] = _vector(array, key)
    except _READ_ERRORS as exc:
        raise _damaged(path, exc) from None
    for kind, kind_vectors in (("search", vectors), ("match", match_vectors)):
        dimensions = sorted({vector.shape[0] for vector in kind_vectors.values()})
        if len(dimensions) > 1:
            raise _damaged(path, f"{kind} vectors of several dimensions {dimensions[:5]}")
    return StoredEmbeddings(
        vectors=vectors,
        model=model,
        digests=digests,
        match_vectors=match_vectors,
        match_model=match_model,
        match_digests=match_digests,
    )


def attach_vectors(
    skills: Mapping[str, Skill], embeddings: StoredEmbeddings | None, source: str
) -> dict[EmbeddingKind, str | None]:
    """Give freshly decoded `skills` (not yet shared with anyone) their search and match vectors from
    `embeddings` (None: no sidecar), in place. A vector is skipped when its skill is gone or its
    recorded text digest differs from the skill's current `embedding_text()` / `match_text()`
    (stale); a match vector without a digest is skipped too. Returns each kind's embedding model,
    None for a kind of which no vector was attached. Raises `SkillbookFormatError` naming `source`
    when the skills end up with search vectors of several dimensions (vectors stored inline in
    older JSON files)."""
    models: dict[EmbeddingKind, str | None] = {"search": None, "match": None}
    if embeddings is None:
        stored: tuple[tuple[EmbeddingKind, dict[str, np.ndarray], Mapping[str, str] | None, str | None], ...] = ()
    else:
        stored = (
            ("search", embeddings.vectors, embeddings.digests, embeddings.model),
            ("match", embeddings.match_vectors, embeddings.match_digests, embeddings.match_model),
        )
    for kind, vectors, digests, model in stored:
        attribute = EMBEDDING_FIELDS[kind]
        attached = False
        for skill_id, vector in vectors.items():
            skill = skills.get(skill_id)
            if skill is None:
                continue
            if digests is not None and digests.get(skill_id) != text_digest(skill.embedding_input(kind)):
                continue
            object.__setattr__(skill, attribute, vector)
            attached = True
        models[kind] = model if attached else None
    dimensions = sorted({s.embedding.shape[0] for s in skills.values() if s.embedding is not None})
    if len(dimensions) > 1:
        raise SkillbookFormatError(f"{source}: embeddings of several dimensions {dimensions[:5]}; delete the sidecar")
    return models


def _damaged(path: Path, reason: object) -> SkillbookFormatError:
    return SkillbookFormatError(
        f"{path}: unreadable embeddings sidecar ({quote(str(reason))}); delete it, embeddings are recomputed"
    )


def _read_arrays(data: bytes, limit: int) -> dict[str, np.ndarray]:
    """The arrays of the zip archive `data`, by member name without `.npy`. The bytes the members
    expand to are bounded by `limit`: checked against the sizes the headers declare, and counted
    while decompressing, because headers can lie."""
    headers: _Headers = {}
    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        declared = sum(info.file_size for info in infos)
        if declared > limit:
            raise ValueError(f"members expand to {declared} bytes, over the limit of {limit}")
        budget = limit
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in arrays:
                raise ValueError(f"unexpected or repeated member {quote(name)}")
            member = _member_bytes(archive, data, info, budget)
            budget -= len(member)
            arrays[name[:-4]] = _parse_npy(member, headers)
    return arrays


def _member_bytes(archive: zipfile.ZipFile, data: bytes, info: zipfile.ZipInfo, budget: int) -> bytes:
    """The bytes of one member. Stored members are sliced straight out of `data` (CRC-checked),
    several times faster than `ZipFile.read` for thousands of small members; deflated ones
    (numpy.savez_compressed, ace-framework 0.13) are decompressed in chunks, at most
    min(declared size, budget) bytes."""
    name = quote(info.filename)
    if info.flag_bits & 0x1:
        raise ValueError(f"member {name} is encrypted")
    if info.compress_type == zipfile.ZIP_STORED:
        offset = info.header_offset
        if info.compress_size != info.file_size or offset < 0 or data[offset : offset + 4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for member {name}")
        name_length = int.from_bytes(data[offset + 26 : offset + 28], "little")
        extra_length = int.from_bytes(data[offset + 28 : offset + 30], "little")
        start = offset + 30 + name_length + extra_length
        member = data[start : start + info.compress_size]
        if len(member) != info.compress_size or zlib.crc32(member) != info.CRC:
            raise zipfile.BadZipFile(f"CRC mismatch in member {name}")
        return member
    if info.compress_type != zipfile.ZIP_DEFLATED:
        raise ValueError(f"member {name} uses compression method {info.compress_type}; only stored or deflated")
    cap = min(info.file_size, budget)
    chunks, total = [], 0
    with archive.open(info) as handle:
        while chunk := handle.read(_CHUNK):
            total += len(chunk)
            if total > cap:
                raise ValueError(f"member {name} expands beyond {cap} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


def _parse_npy(data: bytes, headers: _Headers) -> np.ndarray:
    """A read-only array over the `.npy` bytes `data`, which must hold exactly the array the header
    describes; parsed headers are cached in `headers` (thousands of same-shaped vectors share one
    header, and parsing it is the slow part)."""
    if len(data) < 12 or data[:6] != _NPY_MAGIC or data[6] not in (1, 2, 3) or data[7] != 0:
        raise ValueError("member is not a .npy array of format version 1, 2 or 3")
    start = 10 if data[6] == 1 else 12
    header = data[: start + int.from_bytes(data[8:start], "little")]
    if len(header) < start + 1 or len(header) > 10_000:
        raise ValueError("member has a truncated or oversized .npy header")
    parsed = headers.get(header)
    if parsed is None:
        buffer = io.BytesIO(header)
        version = np.lib.format.read_magic(buffer)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        try:
            parsed = read_header(buffer)
        except Exception as exc:
            raise ValueError(f"member has a garbage .npy header ({type(exc).__name__})") from None
        headers[header] = parsed
    shape, fortran_order, dtype = parsed
    if dtype.hasobject or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise ValueError(f"member holds Python objects or has a bad shape {quote(shape)}")
    if math.prod(shape) * dtype.itemsize != len(data) - len(header):
        raise ValueError(f"member's data is {len(data) - len(header)} bytes, not what shape {quote(shape)} needs")
    array = np.frombuffer(data, dtype=dtype, count=math.prod(shape), offset=len(header))
    return array.reshape(shape, order="F" if fortran_order else "C")


def _vector(array: np.ndarray, key: str) -> np.ndarray:
    if array.dtype.kind != "f":
        raise ValueError(f"vector {quote(key)} has dtype {array.dtype}, not float")
    try:
        return as_embedding(array, key)  # the message is quoted as a whole by _damaged
    except SkillbookError as exc:
        raise ValueError(str(exc)) from None


def _model_name(array: np.ndarray | None, key: str) -> str | None:
    if array is None:
        return None
    if array.ndim != 0 or array.dtype.kind != "U":
        raise ValueError(f"{key} must be one string, got dtype {array.dtype} shape {array.shape}")
    return _text(str(array[()]), key)


def _digests(array: np.ndarray | None, key: str) -> dict[str, str] | None:
    if array is None:
        return None
    if array.ndim != 2 or array.shape[1] != 2 or array.dtype.kind != "U":
        raise ValueError(f"{key} must be (id, digest) string pairs, got dtype {array.dtype} shape {array.shape}")
    return {_text(str(k), key): _text(str(v), key) for k, v in array}


def _text(value: str, what: str) -> str:
    try:
        return check_text(value, what)
    except UntrustedInputError as exc:
        raise ValueError(str(exc)) from None
