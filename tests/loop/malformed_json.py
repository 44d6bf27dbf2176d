"""Hypothesis strategies that damage a valid JSON document the ways untrusted files are damaged.

`damaged(document)` draws the bytes of `document` after one or two defects: a value replaced by one
of the wrong type at any level, a key deleted, a raw token no JSON of ours may hold (a huge integer,
NaN, 1e999, a lone surrogate escape, a duplicate key, nesting deeper than 64), a truncation, a bad
UTF-8 byte. `damaged_jsonl(lines)` does the same to one line of a JSONL file, and may end lines with
`\\r\\n` and put U+2028 / U+2029 / U+0085 inside strings (which must not split a line).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

_RAW = "\x00RAW\x00"
"""Placeholder string replaced, after serialising, by a raw token."""

RAW_TOKENS = (
    "9" * 5000,  # over Python's 4,300-digit int limit
    "1" * 300,  # a huge integer that does parse
    "NaN",
    "-Infinity",
    "1e999",
    '"\\ud800"',
    '"a\\udfffb"',
    '{"role": "user", "role": "assistant"}',
    '{"id": 1, "id": 1}',
    "[" * 65 + "]" * 65,
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 70 + "1" + "}" * 70,
)
"""Tokens that are not JSON, or JSON that `ace.untrusted.parse_json` refuses."""

WRONG_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            [],
            {},
            [1],
            [None],
            ["x"],
            {"role": 5},
            {"role": None},
            [{"role": "user", "content": 3}],
            {"messages": 1},
            {"tool_calls": 7},
            [[]],
            {"": {}},
        ]
    ),
    st.just(_RAW),
)
"""Values of the wrong type for any field of a trace or Results file."""

TEXT_CHARS = "\u2028\u2029\u0085\r\t\x00é😀"
"""Characters that line splitters other than `\\n` would cut at, and other awkward ones."""


def paths(value: Any, prefix: tuple[Any, ...] = (), *, items: int = 3) -> Iterator[tuple[Any, ...]]:
    """Every path into `value` (the first `items` items of each list), the root first."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key), items=items)
    elif isinstance(value, list):
        for index, child in enumerate(value[:items]):
            yield from paths(child, (*prefix, index), items=items)


def _replace(document: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    copy = json.loads(json.dumps(document))
    parent = copy
    for part in path[:-1]:
        parent = parent[part]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copy


@st.composite
def mutated_value(draw: st.DrawFn, document: Any, path_list: list[tuple[Any, ...]]) -> Any:
    """`document` with one value replaced by one of the wrong type, or one key or item deleted."""
    path = draw(st.sampled_from(path_list))
    if path and draw(st.booleans()) and draw(st.booleans()):
        return _replace(document, path, None, delete=True)
    return _replace(document, path, draw(WRONG_VALUES))


@st.composite
def damaged(draw: st.DrawFn, document: Any, path_list: list[tuple[Any, ...]] | None = None) -> bytes:
    """The bytes of `document` with one or two defects (see the module docstring)."""
    path_list = path_list if path_list is not None else list(paths(document))
    value = draw(mutated_value(document, path_list))
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if _RAW in text or draw(st.integers(0, 3)) == 0:
        token = json.dumps(_RAW)
        if token not in text:  # put a raw token in place of some value
            text = json.dumps(_replace(document, draw(st.sampled_from(path_list)), _RAW))
        text = text.replace(token, draw(st.sampled_from(RAW_TOKENS)), 1).replace(token, "0")
    data = text.encode("utf-8")
    cut = draw(st.sampled_from(["none", "none", "truncate", "bad byte"]))
    if cut == "truncate":
        data = data[: draw(st.integers(0, max(0, len(data) - 1)))]
    elif cut == "bad byte":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])) + data[at:]
    return data


@st.composite
def damaged_jsonl(draw: st.DrawFn, lines: list[Any]) -> bytes:
    """A JSONL file of `lines` with one damaged line, awkward characters inside strings, any line ends."""
    encoded = [json.dumps(line, ensure_ascii=False).encode("utf-8") for line in lines]
    at = draw(st.integers(0, len(lines) - 1))
    encoded[at] = draw(damaged(lines[at])).replace(b"\n", b" ")
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    return ending.join(encoded) + draw(st.sampled_from([b"", ending, ending * 3]))


def with_awkward_characters(value: Any, chars: str) -> Any:
    """`value` with `chars` appended to every string in it (keys left alone)."""
    if isinstance(value, str):
        return value + chars
    if isinstance(value, list):
        return [with_awkward_characters(item, chars) for item in value]
    if isinstance(value, dict):
        return {key: with_awkward_characters(item, chars) for key, item in value.items()}
    return value
