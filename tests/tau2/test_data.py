"""The pinned airline data: the wheel's files carry upstream's digests, splits and tool schemas."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ace_eval.tau2 import DataChecksumError, UnknownTaskError, load_split, load_tasks, tool_definitions
from ace_eval.tau2.data import PINNED_SHA256, airline_data_dir, verified_bytes
from ace_eval.tau2.environment import WRITE_TOOLS, agent_tool_names


@pytest.mark.parametrize("name", sorted(PINNED_SHA256))
def test_wheel_data_carries_the_upstream_digest(name: str) -> None:
    data = verified_bytes(airline_data_dir() / name, PINNED_SHA256[name])
    assert hashlib.sha256(data).hexdigest() == PINNED_SHA256[name]


def test_db_sha256_is_the_one_the_readme_abbreviates() -> None:
    digest = PINNED_SHA256["db.json"]
    assert digest.startswith("1af9fea6") and digest.endswith("531b")


def test_a_file_with_the_wrong_checksum_is_rejected_with_its_path(tmp_path: Path) -> None:
    tampered = tmp_path / "db.json"
    tampered.write_text("{}")
    with pytest.raises(DataChecksumError, match=str(tampered)):
        verified_bytes(tampered, PINNED_SHA256["db.json"])


def test_splits_have_upstream_sizes_and_cover_the_task_set() -> None:
    assert (len(load_split("train")), len(load_split("test")), len(load_split("base"))) == (30, 20, 50)
    assert set(load_split("train")) | set(load_split("test")) == {task.id for task in load_tasks()}
    assert [task.id for task in load_tasks("test")] == list(load_split("test"))


def test_unknown_split_is_an_error_naming_it() -> None:
    with pytest.raises(UnknownTaskError, match="'dev'"):
        load_split("dev")  # type: ignore[arg-type]


def test_tool_definitions_are_the_fourteen_toolkit_tools() -> None:
    names = {tool.name for tool in tool_definitions()}
    assert len(names) == 14
    assert names == agent_tool_names()
    assert WRITE_TOOLS == {
        "book_reservation",
        "cancel_reservation",
        "send_certificate",
        "update_reservation_baggages",
        "update_reservation_flights",
        "update_reservation_passengers",
    }
