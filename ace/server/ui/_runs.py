"""`ace serve --runs DIR`: the `ace-eval e2e` and `ace-eval bench` run folders directly under DIR
and their reports.

A run folder is a sub-folder holding `summary.json` (written by every finished run). A bench run's
summary names its `none` arm `baseline` and its `learned` arm `with_skills`. Its files are
untrusted input: `summary.json` is read with a size limit and each figure is type-checked; a
defect shows as the row's `problem`, never as a failed page. Only names listed by the folder itself
are served (no path from a request is ever joined blindly), and a run folder or report that is a
symbolic link leading out of DIR is not served.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ace.errors import UsageError
from ace.untrusted import UntrustedInputError, open_regular_file, parse_json, quote

__all__ = ["MAX_REPORT_BYTES", "RunRow", "list_runs", "read_report_file", "run_folder"]

MAX_SUMMARY_BYTES = 1024 * 1024
"""Largest summary.json read (a real one is a few KB)."""
MAX_REPORT_BYTES = 32 * 1024 * 1024
"""Largest report.html or report.md served (a 5,000-skill report is about 10 MB)."""
REPORT_FILES = ("report.html", "report.md")
COMMANDS = {"ace-eval e2e": "e2e", "ace-eval bench": "bench"}
"""The `command` a summary names, and the kind of run it wrote (a summary without one is from e2e)."""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One run folder as the runs page lists it."""

    name: str
    """The folder's name (its id in URLs)."""
    modified: datetime
    """When summary.json was last written (UTC)."""
    has_html: bool
    """Whether the folder holds report.html."""
    kind: str | None = None
    """"e2e" or "bench"; None when the summary names a command this page does not know."""
    exit_status: int | None = None
    """0 when the run had no failure, 1 otherwise; None when unknown."""
    plumbing_only: bool | None = None
    """True when a role ran on an offline scripted model (the figures show plumbing, not learning)."""
    baseline: float | None = None
    """pass^1 without skills."""
    with_skills: float | None = None
    """pass^1 with skills."""
    difference: float | None = None
    """pass^1 with skills minus without."""
    difference_ci95: tuple[float, float] | None = None
    """Paired bootstrap interval of `difference`."""
    skills: int | None = None
    """Active skills learned."""
    problem: str | None = None
    """Why the summary could not be read (the other figures are then None)."""


def list_runs(runs_dir: Path) -> list[RunRow]:
    """The run folders directly under `runs_dir`, most recently written first (ties by name).
    Raises `OSError` when `runs_dir` cannot be listed."""
    rows = []
    for entry in os.scandir(runs_dir):
        folder = run_folder(runs_dir, entry.name)
        if folder is not None:
            rows.append(_row(folder))
    return sorted(rows, key=lambda row: (-row.modified.timestamp(), row.name))


def run_folder(runs_dir: Path, name: str) -> Path | None:
    """The run folder `name` of `runs_dir`, or None when `runs_dir` lists no such run folder (the
    name is looked up, not joined, and the folder must resolve inside `runs_dir`)."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\x00" in name:
        return None
    try:
        if name not in os.listdir(runs_dir):
            return None
    except OSError:
        return None
    folder = runs_dir / name
    if not _inside(folder, runs_dir) or not folder.is_dir() or not (folder / "summary.json").is_file():
        return None
    return folder


def read_report_file(folder: Path, filename: str) -> str | None:
    """The text of `filename` (report.html or report.md) in a run folder, or None when the folder
    has no such regular file inside it. Raises `UntrustedInputError` when it is too large or not
    UTF-8, `OSError` when it cannot be read."""
    if filename not in REPORT_FILES:
        raise UsageError(f"only {REPORT_FILES} are served, got {quote(filename)}")
    path = folder / filename
    if not path.is_file() or not _inside(path, folder):
        return None
    with open_regular_file(path) as handle:  # a FIFO swapped in after is_file() cannot block
        data = handle.read(MAX_REPORT_BYTES + 1)
    if len(data) > MAX_REPORT_BYTES:
        raise UntrustedInputError(f"{filename} is over {MAX_REPORT_BYTES:,} bytes; open it from disk")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UntrustedInputError(f"{filename} is not UTF-8 (byte {error.start})") from None


def _inside(path: Path, folder: Path) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep)


def _row(folder: Path) -> RunRow:
    summary_path = folder / "summary.json"
    modified = datetime.fromtimestamp(summary_path.stat().st_mtime, tz=UTC)
    row = RunRow(name=folder.name, modified=modified, has_html=(folder / "report.html").is_file())
    try:
        with open_regular_file(summary_path) as handle:
            data = handle.read(MAX_SUMMARY_BYTES + 1)
        if len(data) > MAX_SUMMARY_BYTES:
            raise UntrustedInputError(f"it is over {MAX_SUMMARY_BYTES:,} bytes")
        summary = parse_json(data, "summary.json")
        if not isinstance(summary, dict):
            raise UntrustedInputError("it is not a JSON object")
        return _with_figures(row, summary)
    except (OSError, UntrustedInputError) as error:
        return replace(row, problem=f"summary.json could not be read: {error}")


def _with_figures(row: RunRow, summary: dict[str, Any]) -> RunRow:
    interval = summary.get("difference_ci95")
    ci = None
    if isinstance(interval, list) and len(interval) == 2 and all(_number(v) is not None for v in interval):
        ci = (float(interval[0]), float(interval[1]))
    status = summary.get("exit_status")
    plumbing = summary.get("plumbing_only")
    skills = summary.get("skills")
    command = summary.get("command", "ace-eval e2e")
    return replace(
        row,
        kind=COMMANDS.get(command) if isinstance(command, str) else None,
        exit_status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        plumbing_only=plumbing if isinstance(plumbing, bool) else None,
        baseline=_pass1(summary.get("baseline")),
        with_skills=_pass1(summary.get("with_skills")),
        difference=_number(summary.get("difference")),
        difference_ci95=ci,
        skills=skills if isinstance(skills, int) and not isinstance(skills, bool) else None,
    )


def _pass1(metrics: Any) -> float | None:
    if not isinstance(metrics, dict) or not isinstance(metrics.get("pass_hat_k"), dict):
        return None
    return _number(metrics["pass_hat_k"].get("1"))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)
