"""`--runs DIR`: which folders are runs, how a damaged summary.json shows, and that nothing outside
DIR is served (in-process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ace.server import create_app
from ace.server.ui import UiOptions
from ace.server.ui._runs import list_runs, read_report_file, run_folder
from ace.untrusted import UntrustedInputError

from .ui_skillbook import write_ui_skillbook

SUMMARY = {
    "plumbing_only": False,
    "exit_status": 0,
    "skills": 3,
    "difference": 0.25,
    "difference_ci95": [0.05, 0.45],
    "baseline": {"pass_hat_k": {"1": 0.25}},
    "with_skills": {"pass_hat_k": {"1": 0.5}},
}


def _run(runs: Path, name: str, summary: object = SUMMARY, html: str | None = "<h1>report</h1>") -> Path:
    folder = runs / name
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(summary if isinstance(summary, str) else json.dumps(summary))
    if html is not None:
        (folder / "report.html").write_text(html)
    return folder


def test_runs_are_the_sub_folders_holding_a_summary_with_their_figures(tmp_path):
    _run(tmp_path, "run_a")
    (tmp_path / "not_a_run").mkdir()
    (tmp_path / "loose.json").write_text("{}")

    [row] = list_runs(tmp_path)

    assert (row.name, row.exit_status, row.with_skills, row.baseline, row.difference) == ("run_a", 0, 0.5, 0.25, 0.25)
    assert row.difference_ci95 == (0.05, 0.45) and row.has_html and row.problem is None


@pytest.mark.parametrize(
    ("command", "kind"),
    [(None, "e2e"), ("ace-eval e2e", "e2e"), ("ace-eval bench", "bench"), ("rm -rf", None), (7, None)],
    ids=["unnamed", "e2e", "bench", "unknown", "not-text"],
)
def test_a_run_is_of_the_kind_its_summary_names(tmp_path, command, kind):
    _run(tmp_path, "run_k", summary=SUMMARY if command is None else {**SUMMARY, "command": command})

    [row] = list_runs(tmp_path)

    assert row.kind == kind and row.with_skills == 0.5 and row.problem is None


@pytest.mark.parametrize(
    ("summary", "problem"),
    [
        ("{", "not valid JSON"),
        ("[1]", "not a JSON object"),
        ('{"a": 1, "a": 2}', "duplicate"),
        ("x" * (1024 * 1024 + 1), "over 1,048,576 bytes"),
    ],
    ids=["truncated", "array", "duplicate-key", "huge"],
)
def test_a_damaged_summary_is_the_rows_problem_not_a_failed_page(tmp_path, summary, problem):
    _run(tmp_path, "run_bad", summary=summary)

    [row] = list_runs(tmp_path)

    assert row.problem is not None and problem in row.problem
    assert row.difference is None


def test_figures_of_the_wrong_type_are_left_out(tmp_path):
    _run(
        tmp_path,
        "run_odd",
        summary={
            "exit_status": True,
            "difference": "0.5",
            "skills": 2.5,
            "difference_ci95": [0, "x"],
            "baseline": {"pass_hat_k": []},
        },
    )

    [row] = list_runs(tmp_path)

    assert (row.exit_status, row.difference, row.skills, row.difference_ci95, row.baseline) == (None,) * 5


def test_a_run_folder_linking_out_of_the_runs_folder_is_not_a_run(tmp_path):
    outside = _run(tmp_path / "elsewhere", "secret_run")
    runs = tmp_path / "runs"
    runs.mkdir()
    os.symlink(outside, runs / "linked")

    assert list_runs(runs) == []
    assert run_folder(runs, "linked") is None
    assert run_folder(runs, "../elsewhere/secret_run") is None


def test_a_report_linking_out_of_its_folder_is_not_served(tmp_path):
    folder = _run(tmp_path, "run_a", html=None)
    (tmp_path / "secret.html").write_text("secret")
    os.symlink(tmp_path / "secret.html", folder / "report.html")

    assert read_report_file(folder, "report.html") is None


def test_a_report_that_is_not_utf8_is_refused(tmp_path):
    folder = _run(tmp_path, "run_a", html=None)
    (folder / "report.html").write_bytes(b"\xff\xfe<h1>")

    with pytest.raises(UntrustedInputError, match="not UTF-8"):
        read_report_file(folder, "report.html")


def test_a_run_without_report_html_shows_its_report_md_escaped(tmp_path):
    runs = tmp_path / "runs"
    folder = _run(runs, "run_old", html=None)
    (folder / "report.md").write_text("# run\n<script>alert(1)</script>")
    client = TestClient(
        create_app(write_ui_skillbook(tmp_path), ui=UiOptions(runs_dir=runs)), base_url="http://localhost"
    )

    response = client.get("/ui/runs/run_old")

    assert response.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text and "<script>" not in response.text
    assert client.get("/ui/runs").status_code == 200


def test_serve_with_runs_that_is_not_a_folder_exits_2_with_one_line(tmp_path, capsys):
    from ace.cli import main

    assert main(["serve", str(write_ui_skillbook(tmp_path)), "--runs", str(tmp_path / "missing")]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert "--runs" in line and "is not a folder" in line
