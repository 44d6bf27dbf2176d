"""`ace serve`'s access log cuts long request lines: a 100 KB query string is not a 100 KB log line."""

from __future__ import annotations

import asyncio
import logging
import socket

import pytest
import uvicorn

from ace.server._access_log import MAX_LOGGED_TARGET_CHARS, access_log_config


@pytest.fixture
def restore_uvicorn_logging():
    """uvicorn's `log_config` reconfigures its loggers process-wide; put them back afterwards. Filters
    other libraries left on them are set aside meanwhile (importing litellm, as earlier tests do, adds
    its own access-log redaction filter, which would cut the line its own way before ours runs)."""
    loggers = [logging.getLogger(name) for name in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    saved = [(lg, lg.handlers[:], lg.filters[:], lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.filters.clear()
    yield
    for lg, handlers, filters, level, propagate in saved:
        lg.handlers[:], lg.filters[:], lg.level, lg.propagate = handlers, filters, level, propagate


async def serve_one_request(app, target: str) -> int:
    """Start uvicorn as `ace serve` configures it, send `GET target` (raw: httpx refuses URLs over
    64 KB, curl does not), return the status code."""
    # The socket listens before the server starts, so the request waits in the backlog: no sleep.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    server = uvicorn.Server(uvicorn.Config(app, log_level="info", log_config=access_log_config()))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        reader, writer = await asyncio.open_connection(*sock.getsockname())
        writer.write(f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        status_line = await reader.readline()
        await reader.read()
        writer.close()
        return int(status_line.split()[1])
    finally:
        server.should_exit = True
        await serving
        sock.close()


def test_access_log_line_of_a_100kb_query_is_cut_to_200_characters_with_its_length(
    client, capsys, restore_uvicorn_logging
):
    target = "/memory/skills?task=" + "a" * 100_000

    assert asyncio.run(serve_one_request(client.app, target)) == 200

    [line] = [line for line in capsys.readouterr().out.splitlines() if '"GET /memory/skills' in line]
    assert f'"GET {target[:MAX_LOGGED_TARGET_CHARS]}... ({len(target):,} characters) HTTP/1.1" 200' in line
    assert len(line) < MAX_LOGGED_TARGET_CHARS + 100


def test_short_request_lines_are_logged_whole(client, capsys, restore_uvicorn_logging):
    assert asyncio.run(serve_one_request(client.app, "/memory/skills?task=pods")) == 200

    assert '"GET /memory/skills?task=pods HTTP/1.1" 200' in capsys.readouterr().out
