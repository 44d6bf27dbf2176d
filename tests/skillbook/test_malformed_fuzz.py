"""Property-based: over 1,000 generated malformed skillbook files and sidecars, loaded through
`Skillbook.load_from_file` and `ace skillbook show`, raise nothing but `SkillbookFormatError` (one
line, exit 2 on the command line) and never hang."""

from __future__ import annotations

import copy
import faulthandler
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .malformed import (
    RAW_MARK,
    dumps_with_raw,
    load_outcome,
    npy_bytes,
    patch_declared_sizes,
    set_compression,
    set_flag_bits,
    valid_document,
    valid_sidecar_members,
    valid_skillbook,
    zip_bomb,
    zip_bytes,
)

HANG_SECONDS = 120
"""A whole property test taking longer than this is a hang: the run is aborted with a traceback."""

FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)

_DOCUMENT = valid_document()
_SIDECAR = valid_sidecar_members()


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*prefix, index))


PATHS = [path for path in _paths(_DOCUMENT) if path]


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


@pytest.fixture(autouse=True)
def no_hangs() -> Iterator[None]:
    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


RAW_VALUES = st.one_of(
    st.sampled_from(
        [
            "NaN",
            "Infinity",
            "-Infinity",
            "9" * 4301,
            "-" + "9" * 5000,
            "1e400",
            '"\\ud800"',
            '"a\\udfffb"',
            '{"a": 1, "a": 2}',
            '"\\u0000\\u001b[31m"',
            '"2024-13-45T99:99:99"',
            '"context-\\u0661\\u0662\\u0663\\u0664\\u0665"',
            '"context-' + "1" * 5000 + '"',
            "[1.0, NaN]",
            '""',
            "{}",
            "[]",
        ]
    ),
    st.integers(min_value=2, max_value=3000).map(_deep),
    st.integers(min_value=60, max_value=70).map(lambda depth: '{"a": ' * depth + "1" + "}" * depth),
)

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["context", "harness", "ADD", "TAG", "context-00001", "2026-01-01T00:00:00+00:00", "x" * 300]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=8,
)


def _set(document: Any, path: tuple[Any, ...], value: Any) -> None:
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value


@st.composite
def mutated_documents(draw: st.DrawFn) -> bytes:
    """The valid document with one to three fields replaced, deleted or joined by unknown ones."""
    document = copy.deepcopy(_DOCUMENT)
    raw: dict[int, str] = {}
    for number in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = document
        try:
            for key in path[:-1]:
                parent = parent[key]
            parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed this path
        if not isinstance(parent, (dict, list)):
            continue  # an earlier mutation replaced a container on this path with a string
        action = draw(st.sampled_from(["value", "raw", "delete", "unknown"]))
        if action == "value":
            parent[path[-1]] = draw(JSON_VALUES)
        elif action == "raw":
            parent[path[-1]] = RAW_MARK.format(number)
            raw[number] = draw(RAW_VALUES)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=10))] = draw(JSON_VALUES)
    return dumps_with_raw(document, raw)


@settings(FUZZ, max_examples=450)
@given(data=mutated_documents())
def test_mutated_json_fields_load_or_raise_the_documented_error(folder: Path, data: bytes) -> None:
    path = folder / "fields.json"
    path.write_bytes(data)
    load_outcome(path)


@st.composite
def mutated_bytes(draw: st.DrawFn) -> bytes:
    """The valid file's bytes with a few bytes flipped, inserted or cut."""
    data = bytearray(dumps_with_raw(_DOCUMENT, {}))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "insert", "cut", "truncate"]))
        if action == "flip":
            data[at] = draw(st.integers(0, 255))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "cut":
            del data[at : at + draw(st.integers(1, 16))]
        else:
            del data[at:]
        if not data:
            break
    return bytes(data)


@settings(FUZZ, max_examples=200)
@given(data=mutated_bytes())
def test_mutated_json_bytes_load_or_raise_the_documented_error(folder: Path, data: bytes) -> None:
    path = folder / "bytes.json"
    path.write_bytes(data)
    load_outcome(path)


DTYPES = st.sampled_from(["<f4", ">f4", "<f8", "<f2", "<i4", "|b1", "<c8", "<U3", "|S2", "|V4", "<M8[s]"])
SHAPES = st.sampled_from([(8,), (9,), (0,), (), (2, 4), (1, 8), (16385,)])
MEMBER_NAMES = st.sampled_from(
    [
        "context-00001.npy",
        "harness-00001.npy",
        "__embedding_model__.npy",
        "__embedding_text_digests__.npy",
        "context-00099.npy",
        "not-an-array.txt",
        "context-00001",
    ]
)


@st.composite
def bad_arrays(draw: st.DrawFn) -> bytes:
    dtype, shape = np.dtype(draw(DTYPES)), draw(SHAPES)
    array = np.zeros(shape, dtype=dtype)
    if dtype.kind == "f" and array.size:
        with np.errstate(over="ignore"):
            array.flat[draw(st.integers(0, array.size - 1))] = draw(st.sampled_from([np.nan, np.inf, 1e39, 0.5]))
    return npy_bytes(array)


@st.composite
def garbage_npy(draw: st.DrawFn) -> bytes:
    good = npy_bytes(np.ones(8, dtype=np.float32))
    data = bytearray(good)
    for _ in range(draw(st.integers(1, 3))):
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    return bytes(data[: draw(st.integers(0, len(data)))]) if draw(st.booleans()) else bytes(data)


@st.composite
def mutated_sidecars(draw: st.DrawFn) -> bytes:
    """A sidecar with bad members (dtypes, shapes, NaN, garbage headers), lying or flagged zip
    headers, compressed members, small zip bombs, or flipped bytes."""
    members = dict(_SIDECAR)
    for _ in range(draw(st.integers(0, 2))):
        members[draw(MEMBER_NAMES)] = draw(bad_arrays() | garbage_npy() | st.binary(max_size=64))
    compression = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    data = zip_bytes(members, compression)
    action = draw(st.sampled_from(["none", "sizes", "flags", "method", "flip", "truncate", "bomb"]))
    if action == "sizes":
        data = patch_declared_sizes(data, draw(st.sampled_from([0, 3, 100, 2**31, 2**32 - 1])))
    elif action == "flags":
        data = set_flag_bits(data, draw(st.sampled_from([0x1, 0x8, 0x40, 0x800])))
    elif action == "method":
        data = set_compression(data, draw(st.sampled_from([1, 9, 12, 14, 99])))
    elif action == "flip":
        flipped = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            flipped[draw(st.integers(0, len(flipped) - 1))] = draw(st.integers(0, 255))
        data = bytes(flipped)
    elif action == "truncate":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif action == "bomb":
        data = zip_bomb(draw(st.sampled_from([4, 16])) << 20)
    return data


@pytest.fixture(scope="module")
def sidecar_json(folder: Path) -> Path:
    path = folder / "sidecar.json"
    valid_skillbook().save_to_file(path)
    return path


@FUZZ
@pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning")  # numpy parsing garbage headers
@given(data=mutated_sidecars())
def test_mutated_sidecars_load_or_raise_the_documented_error(sidecar_json: Path, data: bytes) -> None:
    sidecar_json.with_name("sidecar.embeddings.npz").write_bytes(data)
    load_outcome(sidecar_json)
