"""The UI over a `postgresql://` skillbook: lists it, and `--allow-edits` writes through the
database's row lock with origin `ui`; the served pages follow the change (LISTEN/NOTIFY)."""

from __future__ import annotations

import re
import time

from fastapi.testclient import TestClient

from ace.server import create_app
from ace.server.ui import UiOptions
from ace.skillbook import Skillbook


def test_ui_lists_a_database_skillbook_and_an_edit_is_written_there_with_ui_provenance(pg_url: str) -> None:
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "Refunds of basic economy need insurance.", ["airline"], "Check it.")
    app = create_app(pg_url, ui=UiOptions(allow_edits=True, edit_hostnames=frozenset({"localhost"})))
    try:
        client = TestClient(app, base_url="http://localhost")
        page = client.get("/ui").text
        assert 'data-skill-id="context-00001"' in page
        [token] = re.findall(r'name="token" value="([^"]+)"', client.get("/ui/skills/context-00001").text)

        response = client.post(
            "/ui/skills/context-00001/remove",
            data={"token": token, "reason": "wrong policy"},
            headers={"Origin": "http://localhost"},
            follow_redirects=False,
        )

        assert response.status_code == 303
        stored = Skillbook.load_from_file(pg_url).get_skill("context-00001")
        assert stored is not None and not stored.active
        assert (stored.occurrences[-1].source_system, stored.occurrences[-1].learning_text) == ("ui", "wrong policy")
        deadline = time.monotonic() + 15
        while "badge inactive" not in client.get("/ui/skills/context-00001").text:
            assert time.monotonic() < deadline, "the served state did not follow the edit"
            time.sleep(0.02)
    finally:
        app.state.followed.close()


def test_ui_pages_never_show_the_password_of_the_database_url(pg_url: str) -> None:
    password = "Sw33pSecr3t"
    with Skillbook.locked(pg_url) as skillbook:
        skillbook.add_skill("context", "Refunds need the booking id.", ["refund"], "Ask for it first.")
    app = create_app(pg_url.replace("postgresql://ace@", f"postgresql://ace:{password}@", 1))
    try:
        client = TestClient(app, base_url="http://localhost")
        for path in ("/ui", "/ui/skills/context-00001", "/ui/match?task=refund+booking", "/ui/runs", "/ui/nope"):
            page = client.get(path).text
            assert password not in page and "Sw33p" not in page, path
            assert "postgresql://ace:***@" in page, path  # the location is shown, its password masked
    finally:
        app.state.followed.close()
