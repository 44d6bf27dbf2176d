"""Browser tests of the UI and of report.html: Debian's Chromium driven by Playwright (never a
browser Playwright downloads), one browser for the tests of this package, real `ace serve` processes on
127.0.0.1. Tests that need the browser skip, saying why, only when Chromium is not installed
(`.ci/run` installs it). Screenshots go to `results/ui_screenshots/` (git-ignored)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("ACE_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless Chromium for the tests of this package. Not for the session: Playwright's sync
    API keeps an event loop running on this thread while it is open, so an `asyncio.run` of any
    test collected after these would fail with "This event loop is already running"."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh desktop-sized page (1100 x 800) that fails the test on any console error."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    new_page = context.new_page()
    errors: list[str] = []
    new_page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    new_page.on("pageerror", lambda error: errors.append(str(error)))
    yield new_page
    context.close()
    assert errors == [], f"the page logged errors: {errors}"


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`results/e2e` of a fresh work folder, holding one finished `ace-eval e2e` run folder
    (`run_scripted`): offline scripted roles, 4 tasks, every skill injected, so the benchmark has
    injected skills to attribute."""
    runs = tmp_path_factory.mktemp("work") / "results" / "e2e"
    # A process of its own: the session's browser keeps an event loop on this thread, and e2e runs one too.
    command = "import sys; from ace_eval.cli import main; sys.exit(main())"
    subprocess.run(
        [
            sys.executable,
            "-c",
            command,
            "e2e",
            "--task-limit",
            "4",
            "--skill-injection",
            "all",
            "--output-dir",
            str(runs / "run_scripted"),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return runs


@pytest.fixture(scope="session")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished `ace-eval bench conventions` run folder: offline scripted roles, every arm."""
    out = tmp_path_factory.mktemp("bench") / "run_bench"
    command = "import sys; from ace_eval.cli import main; sys.exit(main())"
    subprocess.run(
        [sys.executable, "-c", command, "bench", "conventions", "--train-limit", "6", "--test-limit", "12"]
        + ["--output-dir", str(out)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return out
