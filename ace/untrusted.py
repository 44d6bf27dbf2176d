"""Checks for input that comes from outside the process: files, HTTP requests, model output.

One implementation of what every load path needs: files opened only when they are regular files
(a FIFO, a device or a socket is refused before it can block a reader), JSON parsed with limits
(nesting, numbers, and the memory its parsed form may take) and turned into one
`UntrustedInputError` on any defect, text checked to be valid Unicode, and bad values quoted short
enough to fit in a one-line error message.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import reprlib
import stat
from typing import IO, Any

from ace.errors import AceError

__all__ = [
    "JSON_MEMORY_FLOOR",
    "MAX_JSON_DEPTH",
    "MAX_JSON_EXPANSION",
    "MAX_QUOTE_CHARS",
    "NotRegularFileError",
    "UntrustedInputError",
    "check_json_memory",
    "check_text",
    "json_memory_estimate",
    "open_regular_file",
    "parse_json",
    "quote",
    "read_limited",
    "short_line",
    "valid_unicode",
]

MAX_QUOTE_CHARS = 200
"""Characters of a bad value an error message shows before cutting it."""

MAX_JSON_DEPTH = 64
"""Nesting depth of arrays and objects accepted by `parse_json` (no format of ours needs more than ~8)."""

MAX_JSON_EXPANSION = 32
"""Most memory the parsed form of a JSON document may take, as a multiple of its size in bytes (see
`json_memory_estimate`). Traces, skillbooks and tau2 Results files estimate at 5x to 15x; a
document of tiny values (`[{},{},...]`, 27x in fact) estimates above it and is refused."""

JSON_MEMORY_FLOOR = 256 * 1024
"""Size in bytes up to which a document is parsed whatever it holds (its parsed form takes at most
about 25 MiB), so that a small one gets the precise error (e.g. nesting) rather than this bound."""

_CONTAINER_BYTES = {"{": 200, "[": 100}
"""Upper bounds of an object (a dict with its first keys: 184 bytes, plus its slot in its parent) and
an array (a list: 56 bytes, over-allocation and slot)."""
_MEMBER_BYTES = {",": 100, ":": 150}
"""Upper bounds of what one more value costs: an array item or object member (its slot, the value
object: a float 24, a short string 50+, an int 28 bytes), and an object key (its dict entry, the key
string when it is new, the parser's (key, value) pair)."""

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxstring = _SHORT_REPR.maxother = MAX_QUOTE_CHARS
_SHORT_REPR.maxlevel = 3


class UntrustedInputError(AceError, ValueError):
    """Input from outside the process is malformed. The message says what and where, one line."""


class NotRegularFileError(AceError, OSError):
    """A path given as an input file is a FIFO, a socket, a device or a folder: reading it could block
    forever or never end, so it is refused before it is read. An `OSError` (`errno.EINVAL`) whose
    `filename` is the path and whose `strerror` says what it is; give a regular file instead."""

    def __init__(self, path: str | os.PathLike[str], mode: int) -> None:
        super().__init__(errno.EINVAL, f"{_file_kind(mode)}, not a regular file", os.fspath(path))


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


def short_line(message: str, limit: int = MAX_QUOTE_CHARS) -> str:
    """The start of `message` (where an error names the file, skill and field) as one ASCII line of
    about `limit` characters: the bad value it quotes may be 100 KB of newlines."""
    cut = message[:limit] + ("..." if len(message) > limit else "")
    return cut.encode("unicode_escape").decode("ascii")


def check_text(text: str, what: str) -> str:
    """Return `text` when it is valid Unicode (encodable as UTF-8, so no lone surrogate).

    Raises `UntrustedInputError` naming `what` and the position of the first bad character.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UntrustedInputError(
            f"{what} is not valid Unicode: lone surrogate {text[exc.start]!a} at character {exc.start}; send UTF-8 text"
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


def open_regular_file(path: str | os.PathLike[str]) -> IO[bytes]:
    """`path` opened for reading in binary mode, when it is a regular file (a symlink to one is
    followed). Raises `NotRegularFileError` for a FIFO, socket, device or folder - checked before
    opening, and again on the opened descriptor (the path may have been swapped in between; the open
    itself never blocks, a FIFO is opened non-blocking) - and `OSError` when it cannot be opened."""
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFileError(path, mode)
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, mode)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_limited(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file `path` (see `open_regular_file`), or its first `limit + 1`
    bytes when it is longer (the caller refuses those). Memory follows the file's actual size,
    never `limit`."""
    with open_regular_file(path) as handle:
        parts = [handle.read(min(os.fstat(handle.fileno()).st_size, limit) + 1)]
        total = len(parts[0])
        # The file may have grown since fstat: read on, in chunks, up to the limit.
        while total <= limit and (chunk := handle.read(min(1 << 20, limit + 1 - total))):
            parts.append(chunk)
            total += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def json_memory_estimate(text: str | bytes) -> int:
    """An upper bound, in bytes, of the memory `json.loads(text)` builds: each `{` and `[` costs a
    container, each `,` and `:` one more value, and every character may end up in a string (1, 2 or
    4 bytes each, by the widest character; 4 for UTF-8 bytes that are not all ASCII). Counted in C
    (`count`), so a 100 MiB text takes about 0.1 s. Separators inside strings are counted too: the
    bound errs on the safe side."""
    if not text:
        return 0
    widest = 1
    if not text.isascii():
        top = max(text) if isinstance(text, str) else "\U0010ffff"
        widest = 4 if top > "\uffff" else 2 if top > "\xff" else 1
    costs = {**_CONTAINER_BYTES, **_MEMBER_BYTES}
    if isinstance(text, bytes):
        return widest * len(text) + sum(text.count(token.encode()) * cost for token, cost in costs.items())
    return widest * len(text) + sum(text.count(token) * cost for token, cost in costs.items())


def check_json_memory(
    text: str | bytes, what: str, *, size: int | None = None, extra: int = 0, max_expansion: float = MAX_JSON_EXPANSION
) -> None:
    """Raise `UntrustedInputError` naming `what` when parsing `text`, of `size` bytes (default: its
    length) over `JSON_MEMORY_FLOOR`, could take more than `max_expansion` times that in memory.
    `extra` adds bytes the caller builds beside the parsed values (e.g. one record per line)."""
    size = len(text) if size is None else size
    if size <= JSON_MEMORY_FLOOR:
        return
    estimate = json_memory_estimate(text) + extra
    if estimate > max_expansion * size:
        raise UntrustedInputError(
            f"{what} holds too many small values: parsed, its {size:,} bytes could take about "
            f"{estimate / max(size, 1):.0f}x that in memory (limit {max_expansion:g}x); send fewer, larger values "
            "or split it"
        )


def parse_json(
    data: str | bytes, what: str, *, max_depth: int = MAX_JSON_DEPTH, max_expansion: float | None = MAX_JSON_EXPANSION
) -> Any:
    """Parse JSON that came from outside: a file, a request, a model.

    Refuses, with `UntrustedInputError` naming `what`: invalid UTF-8 or JSON, duplicate object keys,
    `NaN` / `Infinity` (also as a number too large for a float, `1e999`), integers longer than Python
    converts (4,300 digits), nesting deeper than `max_depth`, strings holding lone surrogates
    (`"\\ud800"`), and - unless `max_expansion` is None, for a caller that checked the whole
    document with `check_json_memory` already - a document whose parsed form could take more than
    `max_expansion` times its size in memory (see `check_json_memory`).
    """
    size = len(data)
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UntrustedInputError(f"{what} is not UTF-8: bad byte at offset {exc.start}") from None
    if max_expansion is not None:
        check_json_memory(data, what, size=size, max_expansion=max_expansion)
    try:
        value = json.loads(
            data, object_pairs_hook=_refuse_duplicate_keys, parse_constant=_refuse_constant, parse_float=_finite_float
        )
    except json.JSONDecodeError as exc:
        raise UntrustedInputError(
            f"{what} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise UntrustedInputError(f"{what} is nested too deeply to parse (limit {max_depth} levels)") from None
    except UntrustedInputError as exc:
        raise UntrustedInputError(f"{what}: {exc}") from None
    except ValueError as exc:  # integer string conversion limit
        raise UntrustedInputError(f"{what} holds a number that cannot be read: {quote(str(exc), 120)}") from None
    _check_depth(value, what, max_depth)
    if _SURROGATE_ESCAPE.search(data) is not None and not _all_valid_unicode(value):
        # Valid UTF-8 text without a \uD800-\uDFFF escape cannot decode to a lone surrogate.
        raise UntrustedInputError(
            f"{what} holds a string with a lone surrogate escape (e.g. \\ud800); send valid Unicode"
        )
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


def _all_valid_unicode(value: Any) -> bool:
    """Whether every string (and key) in `value` encodes as UTF-8; one string at a time, so no copy
    of the whole document is made. `value` is at most `MAX_JSON_DEPTH` deep (checked before)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return True


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def _check_depth(value: Any, what: str, max_depth: int) -> None:
    level = [value]
    for _ in range(max_depth + 1):
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return
    raise UntrustedInputError(f"{what} is nested deeper than {max_depth} levels")
