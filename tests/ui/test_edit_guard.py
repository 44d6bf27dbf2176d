"""`EditGuard`: which Host names an edit may be addressed to, in-process (the browser tests cover a
real server)."""

from __future__ import annotations

import pytest

from ace.cli import make_parser
from ace.server.ui import LOOPBACK_NAMES
from ace.server.ui._edits import EditGuard, EditRefused


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:9000", "[::1]:8765", "LOCALHOST", "127.0.0.1"])
def test_loopback_hosts_with_any_port_are_accepted(host):
    guard = EditGuard()

    guard.check(scheme="http", host=host, origin=f"http://{host}", fetch_site="same-origin", token=guard.token)


@pytest.mark.parametrize("host", ["evil.example:8765", "127.0.0.1.evil.example", "10.0.0.5:8765", None, ""])
def test_other_hosts_are_refused(host):
    guard = EditGuard()

    with pytest.raises(EditRefused, match="edits are accepted only through"):
        guard.check(scheme="http", host=host, origin=None, fetch_site=None, token=guard.token)


def test_the_bound_address_is_accepted_too():
    guard = EditGuard(hostnames=LOOPBACK_NAMES | {"10.0.0.5"})

    guard.check(scheme="http", host="10.0.0.5:8765", origin="http://10.0.0.5:8765", fetch_site=None, token=guard.token)


def test_each_guard_has_its_own_token():
    assert EditGuard().token != EditGuard().token and len(EditGuard().token) >= 32


def test_serve_is_read_only_unless_asked():
    assert make_parser().parse_args(["serve", "skillbook.json"]).allow_edits is False
    assert make_parser().parse_args(["serve", "skillbook.json", "--allow-edits"]).allow_edits is True


def test_a_read_only_server_refuses_edit_posts_and_writes_nothing(tmp_path):
    from fastapi.testclient import TestClient

    from ace.server import create_app

    from .ui_skillbook import write_ui_skillbook

    path = write_ui_skillbook(tmp_path)
    before = path.read_bytes()
    client = TestClient(create_app(path), base_url="http://127.0.0.1")

    response = client.post(
        "/ui/skills/context-00001/remove", data={"token": "x", "reason": "r"}, headers={"Origin": "http://127.0.0.1"}
    )

    assert response.status_code == 403 and "edits are off" in response.text
    assert path.read_bytes() == before
    assert 'method="post"' not in client.get("/ui/skills/context-00001").text
