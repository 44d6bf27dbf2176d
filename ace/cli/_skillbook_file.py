"""Opening the skillbook file a command names, with one-line `CommandError`s for the user."""

from __future__ import annotations

from pathlib import Path

from ace.cli._app import CommandError
from ace.skillbook import Skillbook, SkillbookFormatError

__all__ = ["format_error_line", "load_skillbook", "require_file"]


def require_file(path: Path) -> None:
    """Raise `CommandError` when `path` is not an existing file."""
    if not path.is_file():
        raise CommandError(f"{path}: no such skillbook file")


def format_error_line(error: SkillbookFormatError) -> str:
    """The error's message and its notes (e.g. the file and schema version found) on one line."""
    return "; ".join([str(error), *getattr(error, "__notes__", [])])


def load_skillbook(path: Path) -> Skillbook:
    """Load `path`; raises `CommandError` with a one-line reason when it is missing or invalid."""
    require_file(path)
    try:
        return Skillbook.load_from_file(path)
    except SkillbookFormatError as exc:
        raise CommandError(format_error_line(exc)) from None
