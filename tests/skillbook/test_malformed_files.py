"""Each malformed skillbook file a fuzzer found on main (a traceback, or a silent load) is refused
with `SkillbookFormatError`, and `ace skillbook show` turns it into one line on stderr, exit 2."""

from __future__ import annotations

import contextlib
import io
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ace.cli import main
from ace.skillbook import Skillbook, SkillbookError, SkillbookFormatError

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

SKILL = "context-00001"


def _write_json(tmp_path: Path, edit: Callable[[dict[str, Any]], Any], raw: dict[int, str] | None = None) -> Path:
    document = valid_document()
    edit(document)
    path = tmp_path / "sb.json"
    path.write_bytes(dumps_with_raw(document, raw or {}))
    return path


def _skill(document: dict[str, Any]) -> dict[str, Any]:
    return document["skills"][SKILL]


def _refused(path: Path, match: str) -> None:
    with pytest.raises(SkillbookFormatError, match=match):
        Skillbook.load_from_file(path)
    assert load_outcome(path) == "refused"


JSON_CASES: dict[str, tuple[Callable[[dict[str, Any]], Any], dict[int, str], str]] = {
    "deep nesting (RecursionError)": (
        lambda d: _skill(d).update(issue=RAW_MARK.format(0)),
        {0: "[" * 100_000 + "]" * 100_000},
        "nested too deeply",
    ),
    "integer over 4,300 digits": (
        lambda d: _skill(d).update(used_count=RAW_MARK.format(0)),
        {0: "9" * 5000},
        "number that cannot be read",
    ),
    "unhashable section": (lambda d: _skill(d).update(section=["context"]), {}, "section must be one of"),
    "unhashable operation_type": (
        lambda d: _skill(d)["occurrences"][0].update(operation_type={"a": 1}),
        {},
        "operation_type must be one of",
    ),
    "trace_refs: 1": (lambda d: _skill(d)["occurrences"][0].update(trace_refs=1), {}, "trace_refs must be a list"),
    "span_ids: null": (
        lambda d: _skill(d)["occurrences"][0]["trace_refs"][0].update(span_ids=None),
        {},
        "span_ids must be a list",
    ),
    "5,000-digit id": (
        lambda d: d["skills"].update({"context-" + "1" * 5000: {**_skill(d), "id": "context-" + "1" * 5000}}),
        {},
        "id must look like",
    ),
    "5,000-digit next_id": (lambda d: d.update(next_id=int("9" * 4000)), {}, "next_id must be an integer from 0"),
    "lone surrogate": (lambda d: _skill(d).update(issue=RAW_MARK.format(0)), {0: '"\\ud800 issue"'}, "surrogate"),
    "NaN in JSON": (lambda d: _skill(d).update(used_count=RAW_MARK.format(0)), {0: "NaN"}, "NaN is not a JSON number"),
    "duplicate keys": (
        lambda d: _skill(d).update(issue=RAW_MARK.format(0)),
        {0: '"a", "issue": "b"'},
        "duplicate key 'issue'",
    ),
    "Unicode digits in an id": (
        lambda d: d["skills"].update(
            {"context-\u0661\u0662\u0663\u0664\u0665": {**_skill(d), "id": "context-\u0661\u0662\u0663\u0664\u0665"}}
        ),
        {},
        "id must look like",
    ),
    "any string as a timestamp": (lambda d: _skill(d).update(created_at="yesterday"), {}, "ISO-8601 timestamp"),
    "counter beyond 64 bits": (lambda d: _skill(d).update(used_count=2**64), {}, "used_count must be an integer"),
    "inline vector with NaN": (
        lambda d: _skill(d).update(embedding=RAW_MARK.format(0)),
        {0: "[1.0, NaN]"},
        "NaN is not a JSON number",
    ),
    "inline vector of strings": (lambda d: _skill(d).update(embedding=["1.0", "2.0"]), {}, "must hold numbers"),
}


@pytest.mark.parametrize("case", list(JSON_CASES))
def test_malformed_json_is_refused_with_the_documented_error(tmp_path: Path, case: str) -> None:
    edit, raw, match = JSON_CASES[case]
    _refused(_write_json(tmp_path, edit, raw), match)


def test_an_error_quotes_a_huge_bad_value_short(tmp_path: Path) -> None:
    path = _write_json(tmp_path, lambda d: _skill(d).update(section="x" * 10_000_000))
    with pytest.raises(SkillbookFormatError) as caught:
        Skillbook.load_from_file(path)
    assert len(str(caught.value)) < 500 + len(str(path))


def _sidecar_case(tmp_path: Path, sidecar: bytes) -> Path:
    path = tmp_path / "sb.json"
    valid_skillbook().save_to_file(path)
    (tmp_path / "sb.embeddings.npz").write_bytes(sidecar)
    return path


def _members_with(name: str, data: bytes) -> dict[str, bytes]:
    return {**valid_sidecar_members(), name: data}


SIDECAR_CASES: dict[str, tuple[Callable[[], bytes], str]] = {
    "digest array of the wrong shape": (
        lambda: zip_bytes(_members_with("__embedding_text_digests__.npy", npy_bytes(np.array(["a", "b", "c"])))),
        "string pairs",
    ),
    "garbage npy header": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", b"\x93NUMPY\x01\x00\x20\x00{'descr': <f4, 'sha" + b"\0" * 40)),
        "unreadable embeddings sidecar",
    ),
    "npy of an unknown version": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", b"\x93NUMPY\x09\x00" + bytes(100))),
        "format version",
    ),
    "encrypted member": (lambda: set_flag_bits(zip_bytes(valid_sidecar_members()), 0x1), "encrypted"),
    "unsupported compression": (
        lambda: set_compression(zip_bytes(valid_sidecar_members()), zipfile.ZIP_BZIP2),
        "compression method",
    ),
    "NaN vector": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.full(8, np.nan, dtype=np.float32)))),
        "NaN",
    ),
    "infinite vector": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.full(8, np.inf, dtype=np.float32)))),
        "infinite",
    ),
    "vector of another dimension": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.ones(9, dtype=np.float32)))),
        "several dimensions",
    ),
    "integer vector": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.ones(8, dtype=np.int32)))),
        "not float",
    ),
    "complex vector": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.ones(8, dtype=np.complex64)))),
        "not float",
    ),
    "pickled object array": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.array([1.0, None], dtype=object)))),
        "objects",
    ),
    "model name that is a number": (
        lambda: zip_bytes(_members_with("__embedding_model__.npy", npy_bytes(np.array(3.0)))),
        "one string",
    ),
    "data shorter than its header says": (
        lambda: zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.ones(8, dtype=np.float32))[:-4])),
        "bytes, not",
    ),
    "lying zip header (declares less)": (
        lambda: patch_declared_sizes(zip_bytes(valid_sidecar_members(), zipfile.ZIP_DEFLATED), 3),
        "unreadable",
    ),
    "not a zip": (lambda: b"PK\x03\x04 garbage", "unreadable embeddings sidecar"),
    "NaN match vector": (
        lambda: zip_bytes(_members_with(f"__match__.{SKILL}.npy", npy_bytes(np.full(8, np.nan, dtype=np.float32)))),
        "NaN",
    ),
    "integer match vector": (
        lambda: zip_bytes(_members_with(f"__match__.{SKILL}.npy", npy_bytes(np.ones(8, dtype=np.int32)))),
        "not float",
    ),
    "2-d match vector": (
        lambda: zip_bytes(_members_with(f"__match__.{SKILL}.npy", npy_bytes(np.ones((2, 4), dtype=np.float32)))),
        "1-d vector",
    ),
    "match vector over the dimension limit": (
        lambda: zip_bytes(_members_with(f"__match__.{SKILL}.npy", npy_bytes(np.ones(16_385, dtype=np.float32)))),
        "1-d vector",
    ),
    "match vectors of several dimensions": (
        lambda: zip_bytes(
            {
                **_members_with(f"__match__.{SKILL}.npy", npy_bytes(np.ones(4, dtype=np.float32))),
                "__match__.harness-00001.npy": npy_bytes(np.ones(5, dtype=np.float32)),
            }
        ),
        "match vectors of several dimensions",
    ),
    "match model name that is a number": (
        lambda: zip_bytes(_members_with("__match_embedding_model__.npy", npy_bytes(np.array(3.0)))),
        "one string",
    ),
    "match digests of the wrong shape": (
        lambda: zip_bytes(_members_with("__match_embedding_text_digests__.npy", npy_bytes(np.array(["a"])))),
        "string pairs",
    ),
}


@pytest.mark.parametrize("case", list(SIDECAR_CASES))
def test_malformed_sidecar_is_refused_with_the_documented_error(tmp_path: Path, case: str) -> None:
    build, match = SIDECAR_CASES[case]
    _refused(_sidecar_case(tmp_path, build()), match)


def test_a_compressed_sidecar_from_numpy_still_loads(tmp_path: Path) -> None:
    members = valid_sidecar_members()
    path = _sidecar_case(tmp_path, zip_bytes(members, zipfile.ZIP_DEFLATED))
    assert Skillbook.load_from_file(path).get_skill(SKILL).embedding is not None


def test_a_float64_sidecar_vector_loads_as_float32(tmp_path: Path) -> None:
    path = _sidecar_case(tmp_path, zip_bytes(_members_with(f"{SKILL}.npy", npy_bytes(np.arange(1.0, 9.0)))))
    assert Skillbook.load_from_file(path).get_skill(SKILL).embedding.dtype == np.float32


@pytest.mark.parametrize("lying", [False, True])
def test_a_zip_bomb_sidecar_is_refused_without_expanding_it(tmp_path: Path, lying: bool) -> None:
    bomb = zip_bomb(1 << 30)  # 1 GiB of zeros in about 1 MB
    if lying:  # headers claim a small member; the reader must still stop, not trust them
        bomb = patch_declared_sizes(bomb, 64)
    path = _sidecar_case(tmp_path, bomb)
    tracemalloc.start()
    try:
        with pytest.raises(SkillbookFormatError, match="unreadable embeddings sidecar"):
            Skillbook.load_from_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20, f"peak {peak / 2**20:.1f} MiB"


def test_cli_escapes_control_characters_in_stored_text(tmp_path: Path) -> None:
    book = Skillbook()
    book.add_skill("context", "Issue \x1b]0;pwned\x07 with\x00NUL and \x9b C1", ["k\x1b[31m"], "Line one\nline\ttwo")
    path = tmp_path / "sb.json"
    book.save_to_file(path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["skillbook", "show", str(path)]) == 0
    assert "\x1b" not in out.getvalue() and "\x00" not in out.getvalue() and "\x9b" not in out.getvalue()
    assert "Issue \\x1b]0;pwned\\x07 with\\x00NUL and \\x9b C1" in out.getvalue()
    assert "Line one\nline\ttwo" in out.getvalue()
    for command in (["stats", str(path)], ["sources", str(path), "context-00001"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["skillbook", *command]) == 0
        assert not any(char in out.getvalue() for char in "\x1b\x00\x9b\x07")


def test_add_skill_with_a_lone_surrogate_raises_and_the_skillbook_still_saves(tmp_path: Path) -> None:
    book = valid_skillbook()
    for call in (
        lambda: book.add_skill("context", "bad \ud800 issue", ["k"], "insight"),
        lambda: book.add_skill("context", "issue", ["k\udfff"], "insight"),
        lambda: book.update_skill(SKILL, insight="bad \ud800"),
        lambda: book.remove_skill(SKILL, "reason \ud800"),
    ):
        with pytest.raises(SkillbookError, match="surrogate"):
            call()
    book.save_to_file(tmp_path / "sb.json")
    assert len(Skillbook.load_from_file(tmp_path / "sb.json")) == 2


def test_an_unreadable_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "sb.json"
    valid_skillbook().save_to_file(path)
    path.chmod(0)
    try:
        path.read_bytes()
        pytest.skip("running as a user who can read any file")
    except PermissionError:
        pass
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["skillbook", "show", str(path)]) == 2
    assert err.getvalue().count("\n") == 1


def test_ace_match_on_a_malformed_file_is_one_line_exit_2(tmp_path: Path) -> None:
    path = _write_json(tmp_path, JSON_CASES["unhashable section"][0])
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["match", str(path), "fix the CI"]) == 2
    assert err.getvalue().count("\n") == 1 and "section must be one of" in err.getvalue()
