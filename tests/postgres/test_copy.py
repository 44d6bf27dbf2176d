"""`ace skillbook copy` between files and PostgreSQL: a file -> database -> file round trip is
byte-identical for the JSON, and the vectors come back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ace.cli import main
from ace.skillbook import InsightSource, Skillbook, embedding_sidecar_path


def _file(tmp_path: Path) -> Path:
    skillbook = Skillbook()
    source = InsightSource(source_system="tau2", trace_id="7", epoch=1, learning_text="all legs")
    skillbook.add_skill(
        "context", "Cabin class applies to all legs — ünïcode.", ["airline"], "Say so.", insight_source=source
    )
    skillbook.tag_skill("context-00001", 1, insight_source=source)
    skillbook.add_skill("harness", "The runner retries 429s.", ["tau2"])
    skillbook.add_skill("context", "A removed one.", ["old"], "Gone.")
    skillbook.remove_skill("context-00002", "superseded", insight_source=source)
    skillbook.add_skill("context", "Purged.", ["x"], "x")
    skillbook.purge("context-00003")
    skillbook.record_keep_decision("context-00001", "harness-00001", reasoning="distinct", similarity=0.31)
    skillbook.set_embeddings({"context-00001": [1.0, 0.0], "harness-00001": [0.0, 1.0]}, model="fake")
    path = tmp_path / "original.json"
    skillbook.save_to_file(path)
    return path


def test_file_to_database_to_file_is_byte_identical(tmp_path: Path, pg_url: str) -> None:
    original = _file(tmp_path)
    back = tmp_path / "back.json"
    assert main(["skillbook", "copy", str(original), pg_url]) == 0
    assert main(["skillbook", "copy", pg_url, str(back)]) == 0
    assert back.read_bytes() == original.read_bytes()
    loaded = Skillbook.load_from_file(back)
    np.testing.assert_array_equal(loaded.get_skill("harness-00001").embedding, [0.0, 1.0])
    assert loaded.embedding_model == "fake"
    assert embedding_sidecar_path(back).exists()
    with Skillbook.locked(pg_url) as skillbook:  # the counters came along: no id is reused
        assert skillbook.add_skill("context", "New.", ["n"], "n").id == "context-00004"


def test_copy_refuses_to_overwrite_without_replace(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    original = _file(tmp_path)
    assert main(["skillbook", "copy", str(original), pg_url]) == 0
    assert main(["skillbook", "copy", str(original), pg_url]) == 2
    assert "add --replace" in capsys.readouterr().err
    assert main(["skillbook", "copy", str(original), pg_url, "--replace"]) == 0


def test_cli_reads_the_database(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["skillbook", "copy", str(_file(tmp_path)), pg_url]) == 0
    capsys.readouterr()
    assert main(["skillbook", "show", pg_url]) == 0
    assert "[context-00001]" in capsys.readouterr().out


def test_unreachable_database_is_exit_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    url = "postgresql://ace:secret@127.0.0.1:1/postgres?connect_timeout=2"
    assert main(["skillbook", "show", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "secret" not in err and "127.0.0.1" in err
