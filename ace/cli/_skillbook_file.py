"""Opening the skillbook a command names (a file, or a `postgresql://` URL), with one-line
`CommandError`s for the user, and making stored text safe to print on a terminal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ace.cli._app import CommandError
from ace.redaction import redact
from ace.skillbook.storage import FileStore, open_store

if TYPE_CHECKING:
    from ace.skillbook import Skillbook, SkillbookFormatError

__all__ = [
    "format_error_line",
    "json_terminal_text",
    "load_skillbook",
    "require_file",
    "shown",
    "skillbook_location",
    "terminal_text",
]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def terminal_text(text: str, *, one_line: bool = False) -> str:
    """`text` with control characters (C0, DEL, C1) written as `\\x1b`-style escapes, so a skillbook
    cannot move the cursor, recolour or retitle the user's terminal. Newline and tab are kept unless
    `one_line`."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def json_terminal_text(text: str) -> str:
    """JSON text with the control characters `json.dumps(ensure_ascii=False)` leaves raw (DEL, C1)
    written as `\\u` escapes, so it stays valid JSON and safe to print."""
    return _CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def skillbook_location(value: str) -> Path | str:
    """argparse `type` of a skillbook argument: a `postgresql://` URL kept as given (a Path would
    fold its `//`), anything else a Path."""
    return open_store(value).location


def shown(location: Path | str) -> str:
    """The location for messages: a URL's secrets hidden (see `ace.redaction`)."""
    return redact(str(location))


def require_file(path: Path | str) -> None:
    """Raise `CommandError` when `path` is not an existing regular file (a database URL is checked
    when it is opened)."""
    if not isinstance(open_store(path), FileStore):
        return
    if not Path(path).is_file():
        problem = "not a regular file; give a skillbook JSON file" if Path(path).exists() else "no such skillbook file"
        raise CommandError(f"{path}: {problem}")


def format_error_line(error: SkillbookFormatError) -> str:
    """The error's message and its notes (e.g. the file and schema version found), joined by "; "."""
    return "; ".join([str(error), *getattr(error, "__notes__", [])])


def load_skillbook(path: Path | str, *, missing_ok: bool = False, vectors: bool = True) -> Skillbook:
    """Load `path`; raises `CommandError` with a one-line reason when it is missing (unless
    `missing_ok`: then an empty skillbook) or invalid, or its database cannot be reached.
    `vectors=False` skips a file's embeddings sidecar (commands that only read the text)."""
    from ace.skillbook import Skillbook, SkillbookFormatError, SkillbookStorageError  # only once a command runs

    is_file = isinstance(open_store(path), FileStore)
    if missing_ok and is_file and not Path(path).exists():
        return Skillbook()
    require_file(path)
    try:
        return Skillbook.load_from_file(path, vectors=vectors)
    except SkillbookFormatError as exc:
        raise CommandError(format_error_line(exc)) from None
    except SkillbookStorageError as exc:
        raise CommandError(str(exc)) from None
    except FileNotFoundError as exc:
        if missing_ok:
            return Skillbook()
        if not is_file:
            raise CommandError(f"{shown(path)}: {exc.strerror}") from None
        raise CommandError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror or exc})") from None
