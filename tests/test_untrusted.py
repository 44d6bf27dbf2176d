"""ace.untrusted: JSON parsed with limits, Unicode checks, short quotes of bad values."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ace.untrusted import MAX_JSON_DEPTH, UntrustedInputError, check_text, parse_json, quote, valid_unicode


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[NaN]", "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[" * (MAX_JSON_DEPTH + 2) + "]" * (MAX_JSON_DEPTH + 2), f"nested deeper than {MAX_JSON_DEPTH}"),
        ("1" * 5000, "number that cannot be read"),
        ('"\\ud800"', "lone surrogate"),
        ('{"a": ', "not valid JSON"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_malformed_json_raises_one_documented_error(data: str | bytes, reason: str) -> None:
    with pytest.raises(UntrustedInputError, match="^data.json") as caught:
        parse_json(data, "data.json")
    assert reason in str(caught.value)
    assert "\n" not in str(caught.value)


def test_valid_json_including_surrogate_pairs_parses() -> None:
    assert parse_json('{"a": ["\\ud83d\\ude00", 1.5, null]}', "x") == {"a": ["\U0001f600", 1.5, None]}


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
        lambda children: st.lists(children) | st.dictionaries(st.text(), children),
        max_leaves=20,
    )
)
def test_any_json_value_of_ours_round_trips(value: object) -> None:
    assert parse_json(json.dumps(value), "x") == value


@given(st.binary(max_size=200) | st.text(max_size=200))
def test_arbitrary_input_parses_or_raises_untrusted_input_error(data: bytes | str) -> None:
    try:
        parse_json(data, "x")
    except UntrustedInputError:
        pass


def test_check_text_names_the_lone_surrogate_and_its_position() -> None:
    assert check_text("fine \U0001f600", "issue") == "fine \U0001f600"
    with pytest.raises(
        UntrustedInputError, match=r"issue is not valid Unicode: lone surrogate '\\udc80' at character 2"
    ):
        check_text("ab\udc80", "issue")


@pytest.mark.parametrize("value", ["x" * 10_000_000, list(range(1_000_000)), int("9" * 4000), "\x1b[2J\x00\ud800" * 3])
def test_quote_is_short_printable_and_encodable(value: object) -> None:
    text = quote(value)
    assert len(text) <= 203
    assert "\x1b" not in text and "\x00" not in text
    text.encode("utf-8")


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        ("plain", "plain"),
        ("caf\u00e9 \U0001f600", "caf\u00e9 \U0001f600"),
        ("a\ud800b", "a\ufffdb"),
        ("\udc00", "\ufffd"),
        ("\udc00\ud800", "\ufffd\ufffd"),  # a low then a high surrogate is no pair
        ("\ud83d\ude00", "\U0001f600"),  # a pair written as two code points is the character it encodes
    ],
)
def test_valid_unicode_replaces_lone_surrogates_only(text: str, valid: str) -> None:
    assert valid_unicode(text) == valid
    valid_unicode(text).encode("utf-8")


@given(st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010)))
def test_valid_unicode_always_encodes_and_keeps_valid_text(text: str) -> None:
    result = valid_unicode(text)
    result.encode("utf-8")
    assert len(result) <= len(text)
    if all(not 0xD800 <= ord(char) <= 0xDFFF for char in text):
        assert result == text
