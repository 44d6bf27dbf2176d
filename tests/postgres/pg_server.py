"""A throwaway PostgreSQL server in a temporary folder, for the tests and benchmarks/shared_store.py.

`initdb` and `postgres` refuse to run as root: as root they run as the `postgres` OS user (or
`nobody`) through `runuser`. The server listens on 127.0.0.1 at a free port, trust authentication,
fsync off (a test database needs no durability), and is stopped by `stop()`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["TempPostgres", "missing_binaries"]

_SEARCH = ("/usr/local/bin", "/usr/local/pgsql/bin", *sorted(str(p) for p in Path("/usr/lib/postgresql").glob("*/bin")))


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in _SEARCH:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def missing_binaries() -> str | None:
    """Why a server cannot be started here (a binary or a non-root user is missing), or None."""
    for name in ("initdb", "pg_ctl"):
        if _binary(name) is None:
            return f"PostgreSQL's {name} is not installed (apt-get install postgresql)"
    if os.geteuid() == 0 and _run_as_user() is None:
        return "running as root and neither a 'postgres' nor a 'nobody' user exists to run the server"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root and runuser is missing"
    return None


def _run_as_user() -> str | None:
    for user in ("postgres", "nobody"):
        try:
            pwd.getpwnam(user)
        except KeyError:
            continue
        return user
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class TempPostgres:
    """One server: `start()`, `url(name)`, `stop()` (restartable on the same port and data)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="ace-pg-"))
        self.port = _free_port()
        self.user = _run_as_user() if os.geteuid() == 0 else None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chmod(self.folder, 0o755)
            os.chown(self.folder, entry.pw_uid, entry.pw_gid)
        self.data = self.folder / "data"
        self._run(
            _binary("initdb") or "initdb",
            "-D",
            str(self.data),
            "-A",
            "trust",
            "-U",
            "ace",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale",
            "C",
        )

    def _run(self, *command: str) -> None:
        prefix = ["runuser", "-u", self.user, "--"] if self.user is not None else []
        subprocess.run(
            [*prefix, *command], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.folder
        )

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -F -c max_connections=200"
        self._run(
            _binary("pg_ctl") or "pg_ctl",
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.folder / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop(self) -> None:
        self._run(_binary("pg_ctl") or "pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def url(self, skillbook: str = "default", database: str = "postgres") -> str:
        return f"postgresql://ace@127.0.0.1:{self.port}/{database}?skillbook={skillbook}"

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
