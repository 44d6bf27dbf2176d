"""The commands that read or write a skillbook take a postgresql:// URL too: export-md,
export-skills / import-skills, and ace mcp (which then needs a traces folder)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ace.cli import main
from ace.mcp import create_server
from ace.skillbook import Skillbook


def _database_skillbook(url: str) -> None:
    with Skillbook.locked(url) as skillbook:
        skillbook.add_skill("context", "Refunds need the booking id", ["refund", "booking"], "Ask for it first.")


def test_export_md_and_export_skills_read_the_database(tmp_path: Path, pg_url: str) -> None:
    _database_skillbook(pg_url)
    assert main(["skillbook", "export-md", pg_url, "-o", str(tmp_path / "book.md")]) == 0
    assert "Refunds need the booking id" in (tmp_path / "book.md").read_text()
    assert main(["skillbook", "export-skills", pg_url, str(tmp_path / "skills")]) == 0
    assert [path.parent.name.startswith("context-00001") for path in (tmp_path / "skills").glob("*/SKILL.md")] == [True]


def test_import_skills_writes_a_new_database_skillbook(tmp_path: Path, pg_url: str) -> None:
    _database_skillbook(pg_url)
    assert main(["skillbook", "export-skills", pg_url, str(tmp_path / "skills")]) == 0
    target = pg_url.replace("?skillbook=", "?skillbook=imported_")
    assert main(["skillbook", "import-skills", str(tmp_path / "skills"), target]) == 0
    assert [skill.issue for skill in Skillbook.load_from_file(target).skills()] == ["Refunds need the booking id"]


def test_mcp_serves_a_database_skillbook_and_needs_a_traces_folder(tmp_path: Path, pg_url: str) -> None:
    _database_skillbook(pg_url)
    with pytest.raises(ValueError, match="traces"):
        create_server(pg_url)
    server = create_server(pg_url, traces=tmp_path / "queue")

    async def read_within_the_server_s_life() -> object:
        async with server.settings.lifespan(server):  # its end closes the database follower
            return await server.call_tool("read_skill", {"id": "context-00001"})

    content = asyncio.run(read_within_the_server_s_life())
    blocks = content[0] if isinstance(content, tuple) else content
    assert json.loads(blocks[0].text)["issue"] == "Refunds need the booking id"
    assert main(["mcp", pg_url]) == 2
