"""Checks for input that comes from outside the process: files, HTTP requests, model output.

One implementation of what every load path needs: JSON parsed with limits and turned into one
`UntrustedInputError` on any defect, text checked to be valid Unicode, and bad values quoted short
enough to fit in a one-line error message.
"""

from __future__ import annotations

import json
import math
import re
import reprlib
from typing import Any

from ace.errors import AceError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_QUOTE_CHARS",
    "UntrustedInputError",
    "check_text",
    "parse_json",
    "quote",
    "valid_unicode",
]

MAX_QUOTE_CHARS = 200
"""Characters of a bad value an error message shows before cutting it."""

MAX_JSON_DEPTH = 64
"""Nesting depth of arrays and objects accepted by `parse_json` (no format of ours needs more than ~8)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = MAX_QUOTE_CHARS
_SHORT_REPR.maxlevel = 3


class UntrustedInputError(AceError, ValueError):
    """Input from outside the process is malformed. The message says what and where, one line."""


def quote(value: object, limit: int = MAX_QUOTE_CHARS) -> str:
    """A short `repr` of `value` for a one-line message: at most about `limit` characters, computed
    without copying a huge value; control characters and lone surrogates appear as escapes."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        text = f"<an integer of about {value.bit_length() * 0.30103:.0f} digits>"
    else:
        text = _SHORT_REPR.repr(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def check_text(text: str, what: str) -> str:
    """Return `text` when it is valid Unicode (encodable as UTF-8, so no lone surrogate).

    Raises `UntrustedInputError` naming `what` and the position of the first bad character.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UntrustedInputError(
            f"{what} is not valid Unicode: lone surrogate {text[exc.start]!a} at character {exc.start}; "
            "send UTF-8 text"
        ) from None
    return text


def valid_unicode(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it encodes as UTF-8.

    For text that must go on whatever it holds (model output on its way to a prompt or a file);
    a high and low surrogate written as two code points become the one character they encode.
    """
    if text.isascii():
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def parse_json(data: str | bytes, what: str, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON that came from outside: a file, a request, a model.

    Refuses, with `UntrustedInputError` naming `what`: invalid UTF-8 or JSON, duplicate object keys,
    `NaN` / `Infinity` (also as a number too large for a float, `1e999`), integers longer than Python converts (4,300 digits), nesting deeper than
    `max_depth`, and strings holding lone surrogates (`"\\ud800"`).
    """
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedInputError(f"{what} is not UTF-8: bad byte at offset {exc.start}") from None
    try:
        value = json.loads(
            data, object_pairs_hook=_refuse_duplicate_keys, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise UntrustedInputError(f"{what} is nested too deeply to parse (limit {max_depth} levels)") from None
    except UntrustedInputError as exc:
        raise UntrustedInputError(f"{what}: {exc}") from None
    except ValueError as exc:  # integer string conversion limit
        raise UntrustedInputError(f"{what} holds a number that cannot be read: {quote(str(exc), 120)}") from None
    _check_depth(value, what, max_depth)
    if _SURROGATE_ESCAPE.search(data) is None:
        return value  # valid UTF-8 text without a \uD800-\uDFFF escape cannot decode to a lone surrogate
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise UntrustedInputError(f"{what} holds a string with a lone surrogate escape (e.g. \\ud800); "
                                  "send valid Unicode") from None
    return value


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise UntrustedInputError(f"duplicate key {quote(duplicate)} in one object")
    return result


def _refuse_constant(name: str) -> Any:
    raise UntrustedInputError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise UntrustedInputError(f"{quote(text, 40)} is too large for a float (it would read as Infinity)")
    return value


def _check_depth(value: Any, what: str, max_depth: int) -> None:
    level = [value]
    for _ in range(max_depth + 1):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)
                 if isinstance(child, (dict, list))]
        if not level:
            return
    raise UntrustedInputError(f"{what} is nested deeper than {max_depth} levels")
