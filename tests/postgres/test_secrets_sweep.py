"""A password in a postgresql:// URL never shows: not in stdout, stderr, logs, nor any file a command
writes, on success and on failure, for every command that takes a skillbook."""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from ace.cli import main
from ace.skillbook import Skillbook

PASSWORD = "Sw33pSecr3t"
"""The trust-authenticated test server ignores it; every command still carries it around."""
MALFORMED = "Sw33p%zzSecr3t"
"""A password whose percent-escape is invalid: libpq quotes it back in its error."""
FRAGMENTS = ("Sw33p", "Secr3t")


def _with_password(pg_url: str, password: str) -> str:
    return pg_url.replace("postgresql://ace@", f"postgresql://ace:{password}@", 1)


def _assert_nowhere(text: str) -> None:
    leaked = [fragment for fragment in FRAGMENTS if fragment in text]
    assert leaked == [], text


def _assert_no_file_holds_it(folder: Path) -> None:
    for path in folder.rglob("*"):
        assert not any(fragment in path.name for fragment in FRAGMENTS), path
        if path.is_file():
            _assert_nowhere(path.read_bytes().decode("utf-8", errors="replace"))


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current folder: a command must not write into it."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return tmp_path


@pytest.fixture
def url(pg_url: str) -> str:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "Refunds need the booking id", ["refund", "booking"], "Ask for it first.")
        skillbook.add_skill("harness", "The sandbox has no network.", ["sandbox"])
    return _with_password(pg_url, PASSWORD)


def _commands(url: str, work: Path) -> list[list[str]]:
    (work / "skills").mkdir(exist_ok=True)
    (work / "trace.json").write_text('{"question": "Refund my booking", "feedback": "wrong: no booking id asked"}')
    return [
        ["skillbook", "show", url, "--all"],
        ["skillbook", "stats", url],
        ["skillbook", "sources", url, "context-00001"],
        ["skillbook", "sources", url, "context-00042"],
        ["skillbook", "export-md", url, "-o", str(work / "book.md")],
        ["skillbook", "export-skills", url, str(work / "skills")],
        ["skillbook", "import-skills", str(work / "skills"), url],
        ["skillbook", "remove", url, "context-00001", "--reason", "checking"],
        ["skillbook", "remove", url, "context-00001", "--reason", "again"],
        ["skillbook", "activate", url, "context-00001"],
        ["skillbook", "activate", url, "context-00001"],
        ["skillbook", "purge", url, "harness-00001"],
        ["skillbook", "purge", url, "harness-00001", "--yes"],
        ["skillbook", "copy", url, str(work / "copy.json")],
        ["skillbook", "copy", str(work / "copy.json"), url],
        ["skillbook", "copy", str(work / "copy.json"), url, "--replace"],
        ["match", url, "refund my booking"],
        [
            "learn",
            str(work / "trace.json"),
            "--skillbook",
            url,
            "--reflector-model",
            "test",
            "--skill-manager-model",
            "test",
            "--reflector-type",
            "simple",
            "--checkpoint-dir",
            str(work / "ckpt"),
        ],
        ["mcp", url],
    ]


def _run_all(
    commands: list[list[str]], capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> list[int]:
    codes = []
    with caplog.at_level(logging.DEBUG):
        for argv in commands:
            try:
                codes.append(main(argv))
            except SystemExit as exit_info:  # a usage mistake
                codes.append(int(exit_info.code or 0))
    captured = capsys.readouterr()
    _assert_nowhere(captured.out + captured.err + caplog.text)
    return codes


def test_every_command_on_a_url_with_a_password_keeps_it_hidden(
    url: str, work: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    codes = _run_all(_commands(url, work), capsys, caplog)

    assert 0 in codes and 2 in codes  # success and failure paths both ran
    assert list((work / "cwd").iterdir()) == []
    _assert_no_file_holds_it(work)


def test_a_malformed_password_is_hidden_in_every_command_error(
    pg_url: str, work: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    url = _with_password(pg_url, MALFORMED)

    codes = _run_all(_commands(url, work), capsys, caplog)

    assert set(codes) <= {1, 2} and 2 in codes
    assert list((work / "cwd").iterdir()) == []
    _assert_no_file_holds_it(work)


def test_a_secret_query_parameter_is_hidden_in_errors(
    pg_url: str, work: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    url = f"{pg_url}&sslpassword={PASSWORD}&sslmode=require"  # the test server has no TLS: the connection fails

    codes = _run_all([["skillbook", "show", url], ["match", url, "refund"]], capsys, caplog)

    assert codes == [2, 2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[str], deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"ace serve exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"ace serve did not listen on port {port}")


@pytest.mark.parametrize("log_level", ["warning", "debug"])
def test_ace_serve_on_a_url_with_a_password_keeps_it_out_of_its_output(url: str, work: Path, log_level: str) -> None:
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from ace.cli import main; sys.exit(main())",
            "serve",
            url,
            "--port",
            str(port),
            "--log-level",
            log_level,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=work / "cwd",
    )
    try:
        _wait_for_port(port, server, time.monotonic() + 60)
        response = httpx.get(f"http://127.0.0.1:{port}/memory/skills", params={"task": "refund my booking"}, timeout=30)
        assert response.status_code == 200
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert output.startswith("serving postgresql://ace:***@"), output
    if log_level == "debug":
        assert "GET /memory/skills" in output  # the access log is on: the check above saw real log lines
    _assert_nowhere(output)
    assert list((work / "cwd").iterdir()) == []
