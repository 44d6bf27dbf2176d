"""`ace serve` in a real process of its own (with `--workers`, a pool of them), for the tests that
need real processes: started on a free port, waited for, stopped, its output kept."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

__all__ = ["ServeProcess", "command_line_of", "environment_of", "eventually"]

START_TIMEOUT_S = 120.0


def eventually(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    """Wait until `condition()` holds, polling; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


class ServeProcess:
    """`ace serve LOCATION --port P *flags`, its stdout and stderr in one temporary file."""

    def __init__(self, location: str | Path, *flags: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self._output = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from ace.cli import main; sys.exit(main())",
                "serve",
                str(location),
                "--port",
                str(self.port),
                *flags,
            ],
            stdout=self._output,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"ace serve did not come up: {self.stop()}")
            time.sleep(0.1)

    def _answers(self) -> bool:
        try:
            return httpx.get(f"{self.url}/memory/skills", timeout=5).status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def match_ids(self, task: str) -> list[str]:
        """The ids matched for `task`, asked on a connection of its own (so any worker may answer)."""
        response = httpx.get(f"{self.url}/memory/skills", params={"task": task}, timeout=60)
        assert response.status_code == 200, response.text
        return [match["id"] for match in response.json()]

    def workers(self) -> list[int]:
        """The process ids of the pool's workers (the children running uvicorn's servers)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return [int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]

    def stop(self) -> str:
        """Stop the server (and its workers) and return everything it printed."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._output.seek(0)
        output = self._output.read()
        self._output.close()
        return output


def environment_of(pid: int) -> dict[str, str]:
    """The environment process `pid` was started with."""
    pairs = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(pair.decode("utf-8", "replace").split("=", 1) for pair in pairs if b"=" in pair)


def command_line_of(pid: int) -> str:
    """The command line of process `pid`, arguments joined by spaces."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
