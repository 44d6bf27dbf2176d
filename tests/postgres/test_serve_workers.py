"""`ace serve postgresql://... --workers N`: every worker of the pool follows the database through
its own LISTEN connection, and the URL's password shows nowhere (output, command lines)."""

from __future__ import annotations

import subprocess
import sys

from server.serve_process import ServeProcess, command_line_of, eventually

from ace.skillbook import Skillbook

PASSWORD = "P00lSecr3t"
"""The trust-authenticated test server ignores it; the pool must still keep it hidden."""
REQUESTS = 24
TASK = "Baggage allowance depends on the cabin class and membership tier."


def _add_in_another_process(url: str, issue: str) -> None:
    code = (
        "import sys; from ace.skillbook import Skillbook\n"
        "with Skillbook.locked(sys.argv[1]) as sb: sb.add_skill('context', sys.argv[2], ['baggage'], 'Check it.')"
    )
    subprocess.run([sys.executable, "-c", code, url, issue], check=True, timeout=60)


def test_every_worker_of_the_pool_follows_a_write_of_another_process(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "Refunds need the booking id.", ["refund"], "Ask for it first.")
    url = pg_url.replace("postgresql://ace@", f"postgresql://ace:{PASSWORD}@", 1)
    server = ServeProcess(url, "--workers", "2")
    try:
        workers = server.workers()
        assert len(workers) == 2
        assert all(PASSWORD not in command_line_of(pid) for pid in workers)  # the options file carries it

        _add_in_another_process(pg_url, TASK)

        eventually(lambda: all(server.match_ids(TASK) == ["context-00002"] for _ in range(REQUESTS)))
    finally:
        output = server.stop()
    assert output.startswith("serving postgresql://ace:***@"), output
    assert PASSWORD not in output
