"""`load_task_file`: a JSONL file of benchmark items, one object per line, read line by line.

Each line is a JSON object with `id`, `split` (`train` or `test`), `question` and `expected`
(strings), and optionally `rule` (a string naming the hidden rule the answer follows), `control`
(true for an item no rule touches) and `grading` (`normalised`, the default, or `exact`; see
`ace_eval.bench.items`). Blank lines are skipped. A line that is not such an object - bad JSON, a
missing or unknown field, a wrong type, an id seen before - fails alone: it is reported with its
line number and the run goes on with the other lines.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ace.errors import AceError
from ace.untrusted import UntrustedInputError, parse_json, quote
from ace_eval.bench.items import BenchItem

__all__ = ["MAX_FIELD_CHARS", "TaskFile", "TaskFileError", "load_task_file"]

MAX_FIELD_CHARS = 20_000
"""Longest question or expected answer accepted; a longer one fails its line (prompts stay bounded)."""

_REQUIRED = ("id", "split", "question", "expected")
_OPTIONAL = ("rule", "control", "grading")


class TaskFileError(AceError, ValueError):
    """The task file cannot be read at all (missing, a folder, not UTF-8 text)."""


@dataclasses.dataclass(frozen=True)
class TaskFile:
    """What a task file holds: the usable items and one line per line that failed."""

    path: Path
    """The file read."""
    items: tuple[BenchItem, ...]
    """The items of the lines that parsed, in file order."""
    problems: tuple[str, ...]
    """`<file> line <n>: <what is wrong>; <what a line must be>`, one per failed line."""


def load_task_file(path: Path) -> TaskFile:
    """Read `path` line by line (see the module docstring). Raises `TaskFileError` when the file
    cannot be read as UTF-8 text; a bad line is a `problems` entry, never an exception."""
    if not path.exists():
        raise TaskFileError(f"{path}: no such task file")
    if path.is_dir():
        raise TaskFileError(f"{path}: is a folder; give a .jsonl file with one task per line")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"{path}: cannot be read as UTF-8 text ({exc})") from exc
    items: list[BenchItem] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = _item(line)
            if item.id in seen:
                raise ValueError(f"id {quote(item.id)} was used by an earlier line; give every item its own id")
        except ValueError as exc:
            problems.append(f"{path} line {number}: {exc}")
            continue
        seen.add(item.id)
        items.append(item)
    return TaskFile(path=path, items=tuple(items), problems=tuple(problems))


def _item(line: str) -> BenchItem:
    try:
        data = parse_json(line, "the line")
    except UntrustedInputError as exc:
        raise ValueError(f"{exc}; {_SHAPE}") from None
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an object; {_SHAPE}")
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}; {_SHAPE}")
    unknown = sorted(set(data) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(quote(name) for name in unknown)}; {_SHAPE}")
    for name in (*_REQUIRED, "rule", "grading"):
        value = data.get(name)
        if name in data and value is not None and not isinstance(value, str):
            raise ValueError(f"{name} must be a string, got {_json_type(value)}; {_SHAPE}")
        if isinstance(value, str) and len(value) > MAX_FIELD_CHARS:
            raise ValueError(f"{name} is {len(value)} characters long; at most {MAX_FIELD_CHARS} are accepted")
    if "control" in data and not isinstance(data["control"], bool):
        raise ValueError(f"control must be true or false, got {_json_type(data['control'])}; {_SHAPE}")
    fields: dict[str, Any] = {name: data[name] for name in _REQUIRED}
    fields.update({name: data[name] for name in _OPTIONAL if data.get(name) is not None})
    if isinstance(fields.get("rule"), str) and not fields["rule"].strip():
        raise ValueError("rule must be a non-empty string when given (or left out)")
    return BenchItem(**fields)


def _json_type(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__
    )


_SHAPE = (
    'each line is {"id": str, "split": "train"|"test", "question": str, "expected": str} with optional '
    '"rule": str, "control": bool, "grading": "normalised"|"exact"'
)
