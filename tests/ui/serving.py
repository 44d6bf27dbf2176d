"""Helpers of the browser tests: a real `ace serve` on a free port of 127.0.0.1, and screenshots."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO_ROOT / "results" / "ui_screenshots"
ACE = "import sys; from ace.cli import main; sys.exit(main())"
"""The `ace` command, run by this interpreter (the console script may not be on PATH)."""
START_TIMEOUT = 90.0
"""Seconds `ace serve` may take to listen (it embeds the skillbook's skills first)."""
PHONE = {"width": 390, "height": 844}
"""A phone's viewport in CSS pixels."""


def screenshot(page: Any, name: str, height: int | None = None) -> Path:
    """Save a screenshot of the viewport (or of the page's top `height` pixels) as
    `results/ui_screenshots/<name>.png` and return its path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    if height is None:
        page.screenshot(path=str(path))
    else:
        page.screenshot(
            path=str(path),
            full_page=True,
            clip={"x": 0, "y": 0, "width": page.viewport_size["width"], "height": height},
        )
    return path


@dataclass
class Server:
    """A running `ace serve`."""

    url: str
    """Its base URL, e.g. http://127.0.0.1:41234."""
    skillbook: Path
    """The skillbook file it serves."""
    process: subprocess.Popen[bytes]


def start_server(skillbook: Path, *flags: str, cwd: Path | None = None) -> Server:
    """Start `ace serve skillbook *flags` on a free port of 127.0.0.1 and wait until it answers.

    The server runs in `cwd` (default: the skillbook's folder) and is given paths relative to it,
    as a person would type them (pages show them)."""
    cwd = cwd if cwd is not None else skillbook.parent
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-c", ACE, "serve", str(skillbook.relative_to(cwd)), "--port", str(port), *flags],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=cwd,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"ace serve exited {process.returncode}: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
        try:
            httpx.get(f"{url}/memory/skills", timeout=1.0).raise_for_status()
            return Server(url=url, skillbook=skillbook, process=process)
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"ace serve did not answer on {url} within {START_TIMEOUT} s")


def stop_server(server: Server) -> None:
    """Stop the server and wait for it."""
    server.process.terminate()
    try:
        server.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()
    assert server.process.stderr is not None
    server.process.stderr.close()
