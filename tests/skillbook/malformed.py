"""Builders of malformed skillbook files for the malformed-input tests: a valid file to mutate,
`.npy`/`.npz` bytes of any shape, zip headers that lie, and one loader that says what happened."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ace.cli import make_parser, run_cli
from ace.skillbook import InsightSource, Skillbook, SkillbookFormatError, TraceRef

DIMENSION = 8
RAW_MARK = "\u2063RAW{}\u2063"
"""A placeholder string replaced, after `json.dumps`, by raw JSON text (so a test can write what
`json.dumps` refuses to: NaN, 5,000-digit numbers, duplicate keys, lone surrogate escapes)."""

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_ACE = make_parser()
"""The parser `ace.cli.main` builds, built once: a thousand examples need not rebuild it."""


def valid_skillbook() -> Skillbook:
    """Two skills with provenance (trace refs included) and 8-d vectors."""
    book = Skillbook()
    source = InsightSource(
        source_system="tau2",
        trace_id="t-1",
        epoch=1,
        step=2,
        learning_text="lesson",
        trace_refs=(TraceRef(text_excerpt="x", step_indices=(1,), message_indices=(2,), span_ids=("s1",)),),
    )
    book.add_skill("context", "An issue.", ["k", "api"], "An insight.", insight_source=source)
    book.add_skill("harness", "A harness issue.", ["tau2"], insight_source=source)
    book.set_embeddings({s.id: np.arange(1, DIMENSION + 1, dtype=np.float32) for s in book.skills()}, model="m")
    return book


def valid_document() -> dict[str, Any]:
    """The JSON document of `valid_skillbook()`."""
    return valid_skillbook().to_dict()


def dumps_with_raw(document: Any, raw: dict[int, str]) -> bytes:
    """`json.dumps(document)` where each string RAW_MARK.format(n) becomes the raw JSON text raw[n]."""
    text = json.dumps(document, ensure_ascii=False)
    for number, replacement in raw.items():
        text = text.replace(json.dumps(RAW_MARK.format(number), ensure_ascii=False), replacement)
    return text.encode("utf-8", "surrogatepass")


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def valid_sidecar_members() -> dict[str, bytes]:
    """The members of the sidecar `valid_skillbook()` saves, by name."""
    folder = Path(__import__("tempfile").mkdtemp())
    valid_skillbook().save_to_file(folder / "sb.json")
    with zipfile.ZipFile(folder / "sb.embeddings.npz") as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def patch_declared_sizes(data: bytes, size: int) -> bytes:
    """`data` (a zip) with every local and central header declaring `size` uncompressed bytes."""
    patched = bytearray(data)
    for match in re.finditer(rb"PK\x03\x04", data):
        patched[match.start() + 22 : match.start() + 26] = struct.pack("<I", size)
    for match in re.finditer(rb"PK\x01\x02", data):
        patched[match.start() + 24 : match.start() + 28] = struct.pack("<I", size)
    return bytes(patched)


def set_flag_bits(data: bytes, bits: int) -> bytes:
    """`data` (a zip) with `bits` set in every member's general-purpose flags (0x1 = encrypted)."""
    patched = bytearray(data)
    for signature, offset in ((rb"PK\x03\x04", 6), (rb"PK\x01\x02", 8)):
        for match in re.finditer(signature, data):
            flags = struct.unpack_from("<H", data, match.start() + offset)[0]
            struct.pack_into("<H", patched, match.start() + offset, flags | bits)
    return bytes(patched)


def set_compression(data: bytes, method: int) -> bytes:
    """`data` (a zip) with every member claiming compression `method`."""
    patched = bytearray(data)
    for signature, offset in ((rb"PK\x03\x04", 8), (rb"PK\x01\x02", 10)):
        for match in re.finditer(signature, data):
            struct.pack_into("<H", patched, match.start() + offset, method)
    return bytes(patched)


@functools.lru_cache(maxsize=4)
def zip_bomb(expanded: int) -> bytes:
    """A deflated member of `expanded` zero bytes (about 1,000 times smaller compressed), built in
    pieces so the test itself never holds the expanded bytes."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytes(1 << 20)
    # A full flush resets the compressor, so every block compresses to the same bytes: compress once.
    piece = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(expanded // len(block)):
        crc = zlib.crc32(block, crc)
    body = piece * (expanded // len(block)) + compressor.flush()
    name = b"context-00001.npy"
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(body), expanded, len(name), 0)
    central = struct.pack(
        "<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(body), expanded, len(name), 0, 0, 0, 0, 0, 0
    )
    directory = central + name
    offset = len(local) + len(name) + len(body)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(directory), offset, 0)
    return local + name + body + directory + end


def _loads(path: Path, *, vectors: bool) -> bool:
    try:
        Skillbook.load_from_file(path, vectors=vectors)
    except SkillbookFormatError as error:
        assert len(str(error)) < 2_000 + len(str(path)), len(str(error))
        return False
    return True


def load_outcome(path: Path) -> str:
    """Load `path` through `Skillbook.load_from_file` and through `ace skillbook show` in-process
    (which reads the skills' text only: it agrees with `load_from_file(path, vectors=False)`).

    Returns "ok" or "refused" for the full load; raises AssertionError for anything else: an
    exception other than `SkillbookFormatError`, an exit code other than 0/2, an error that is not
    one short line, or raw control characters in what the CLI printed.
    """
    loaded, text_loaded = _loads(path, vectors=True), _loads(path, vectors=False)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_cli(_ACE, ["skillbook", "show", "--all", str(path)])
    assert code == (0 if text_loaded else 2), (code, err.getvalue())
    assert not _CONTROL.search(out.getvalue()), out.getvalue()
    if not text_loaded:
        assert err.getvalue().count("\n") == 1 and not _CONTROL.search(err.getvalue()), err.getvalue()
        assert len(err.getvalue()) < 3_000 + len(str(path))
    return "ok" if loaded else "refused"
