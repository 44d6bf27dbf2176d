"""`ace serve --allow-edits`: remove and activate from a skill's page in a real browser, recorded with
origin `ui`; and the checks that refuse forged edits (token, Origin, Host, Sec-Fetch-Site)."""

from __future__ import annotations

import getpass
import html
from collections.abc import Iterator

import httpx
import pytest

from ace.skillbook import Skillbook

from .serving import Server, screenshot, start_server, stop_server
from .ui_skillbook import HISTORY_SKILL, write_ui_skillbook

INACTIVE_SKILL = "context-00007"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(write_ui_skillbook(tmp_path_factory.mktemp("edits")), "--allow-edits")
    yield running
    stop_server(running)


def _token(server: Server, skill_id: str) -> str:
    page = httpx.get(f"{server.url}/ui/skills/{skill_id}").text
    marker = 'name="token" value="'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


def test_remove_from_the_skill_page_records_ui_provenance_and_activate_undoes_it(page, server):
    page.goto(f"{server.url}/ui/skills/{HISTORY_SKILL}")
    page.get_by_label("Why remove it").fill("superseded by the refund policy skill")
    page.get_by_role("button", name="Remove (soft: history kept)").click()
    page.wait_for_url(f"{server.url}/ui/skills/{HISTORY_SKILL}?done=removed")
    screenshot(page, "skill_removed")

    assert "inactive" in page.locator("h1").inner_text()
    last = page.locator("ol.timeline > li.occurrence").last
    assert last.get_attribute("data-operation") == "REMOVE"
    assert f"ui:{getpass.getuser()}" in last.inner_text()
    assert "superseded by the refund policy skill" in last.inner_text()
    stored = Skillbook.load_from_file(server.skillbook).get_skill(HISTORY_SKILL)
    assert stored is not None and not stored.active
    assert (stored.occurrences[-1].source_system, stored.occurrences[-1].learning_text) == (
        "ui",
        "superseded by the refund policy skill",
    )

    page.get_by_label("Why activate it").fill("the policy skill was wrong")
    page.get_by_role("button", name="Activate").click()
    page.wait_for_url(f"{server.url}/ui/skills/{HISTORY_SKILL}?done=activated")

    stored = Skillbook.load_from_file(server.skillbook).get_skill(HISTORY_SKILL)
    assert stored is not None and stored.active
    assert (stored.occurrences[-1].source_system, stored.occurrences[-1].operation_type) == ("ui", "UPDATE")
    assert stored.occurrences[-1].learning_text == "re-activated: the policy skill was wrong"
    assert page.locator("ol.timeline > li.occurrence").last.get_attribute("data-operation") == "UPDATE"


def test_removing_needs_a_reason(server):
    before = server.skillbook.read_bytes()
    response = httpx.post(
        f"{server.url}/ui/skills/context-00002/remove",
        data={"token": _token(server, "context-00002"), "reason": "  "},
        headers={"Origin": server.url},
    )

    assert response.status_code == 400 and "say why the skill is removed" in html.unescape(response.text)
    assert server.skillbook.read_bytes() == before


@pytest.mark.parametrize(
    ("headers", "token", "status", "expected"),
    [
        ({}, "forged", 403, "token is not this server's"),
        ({"Origin": "http://evil.example"}, None, 403, "sent from 'http://evil.example'"),
        ({"Origin": "null"}, None, 403, "sent from 'null'"),
        ({"Host": "evil.example"}, None, 400, "Invalid host header"),  # ace serve's Host allow-list, before the UI
        ({"Sec-Fetch-Site": "cross-site"}, None, 403, "another site"),
    ],
    ids=["wrong-token", "other-origin", "opaque-origin", "rebinding-host", "cross-site"],
)
def test_forged_edits_are_refused_and_change_nothing(server, headers, token, status, expected):
    before = server.skillbook.read_bytes()
    data = {"token": token or _token(server, "context-00002"), "reason": "forged"}

    response = httpx.post(f"{server.url}/ui/skills/context-00002/remove", data=data, headers=headers)

    assert response.status_code == status and expected in html.unescape(response.text)
    assert server.skillbook.read_bytes() == before


def test_edits_are_never_a_get(server):
    response = httpx.get(f"{server.url}/ui/skills/{INACTIVE_SKILL}/activate")

    assert response.status_code in (404, 405)
    stored = Skillbook.load_from_file(server.skillbook).get_skill(INACTIVE_SKILL)
    assert stored is not None and not stored.active


def test_activating_an_active_skill_is_a_conflict(server):
    response = httpx.post(
        f"{server.url}/ui/skills/context-00003/activate",
        data={"token": _token(server, "context-00003"), "reason": ""},
        headers={"Origin": server.url},
    )

    assert response.status_code == 409 and "already active" in html.unescape(response.text)
