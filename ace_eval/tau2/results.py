"""The tau2 `Results` JSON schema (timestamp, info, tasks, simulations), read and written.

Models mirror upstream tau2's data model closely enough that recorded runs and ours are
interchangeable: `load_results` reads both, `write_results` writes ours atomically. Unknown fields
are kept (`extra="allow"`), so a recorded file read and written back loses nothing.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ace.atomic_write import write_text_atomic
from ace.untrusted import NotRegularFileError, UntrustedInputError, open_regular_file, parse_json, quote
from ace_eval.tau2.errors import ResultsFormatError, validation_summary
from ace_eval.tau2.tasks import Action, Task

__all__ = [
    "ActionCheck",
    "MAX_RESULTS_FILE_BYTES",
    "AssistantMessage",
    "CommunicateCheck",
    "DBCheck",
    "Message",
    "Results",
    "RewardInfo",
    "SimulationRun",
    "TerminationReason",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "load_results",
    "now_iso",
    "write_results",
]

MAX_RESULTS_FILE_BYTES = 100 * 2**20
"""Largest Results file `load_results` reads (100 MiB; a recorded 50-simulation run is about 3 MiB)."""

TerminationReason = Literal["user_stop", "agent_stop", "max_steps", "too_many_errors", "agent_error", "user_error"]
"""Upstream termination reasons; only `user_stop` and `agent_stop` can earn a reward."""


def now_iso() -> str:
    """The current local time in upstream's timestamp format (ISO 8601, microseconds)."""
    return datetime.now().isoformat()


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ToolCall(_Open):
    """One tool call made by the agent (or, in other domains, the user)."""

    id: str
    """Call id, echoed by the tool message that answers it."""
    name: str
    """Tool name."""
    arguments: dict[str, Any]
    """Arguments as JSON values."""
    requestor: Literal["assistant", "user"] = "assistant"
    """Who made the call."""


class _Turn(_Open):
    content: str | None = None
    """Text of the message (None for a pure tool call)."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls, if any."""
    turn_idx: int | None = None
    """Position in the trajectory."""
    timestamp: str | None = None
    """When the message was produced (ISO 8601)."""
    cost: float | None = None
    """Dollar cost of producing it, when known."""
    usage: dict[str, Any] | None = None
    """Token usage (`prompt_tokens`, `completion_tokens`)."""
    raw_data: dict[str, Any] | None = None
    """Provider response, when recorded."""

    def has_text(self) -> bool:
        """True when the message carries non-empty text (upstream `has_text_content`)."""
        return self.content is not None and self.content.strip() != ""


class AssistantMessage(_Turn):
    """A message of the agent: text for the user, or tool calls."""

    role: Literal["assistant"] = "assistant"
    """Discriminator."""


class UserMessage(_Turn):
    """A message of the simulated user."""

    role: Literal["user"] = "user"
    """Discriminator."""


class ToolMessage(_Open):
    """The environment's answer to one tool call."""

    id: str
    """Id of the tool call it answers."""
    role: Literal["tool"] = "tool"
    """Discriminator."""
    content: str | None = None
    """The tool's output (JSON text) or `Error: ...`."""
    requestor: Literal["assistant", "user"] = "assistant"
    """Who made the call."""
    error: bool = False
    """True when the tool raised (counts toward max_errors)."""
    turn_idx: int | None = None
    """Position in the trajectory."""
    timestamp: str | None = None
    """When the tool answered (ISO 8601)."""


Message = Annotated[AssistantMessage | UserMessage | ToolMessage, Field(discriminator="role")]
"""A trajectory message, told apart by `role`."""


class DBCheck(_Open):
    """Whether the end-state database equals the gold one."""

    db_match: bool
    """sha256 of the replayed trajectory DB == sha256 of the gold-replay DB."""
    db_reward: float
    """1.0 on match, else 0.0."""


class CommunicateCheck(_Open):
    """Whether one `communicate_info` string was said by the agent."""

    info: str
    """The required string."""
    met: bool
    """Found in some agent text (case-insensitive, commas removed from the text)."""
    justification: str
    """Upstream-style explanation."""


class ActionCheck(_Open):
    """Whether one gold action appears among the trajectory's tool calls (diagnostic only)."""

    action: Action
    """The gold action."""
    action_match: bool
    """Some call has the same name and compared arguments."""
    action_reward: float
    """1.0 on match, else 0.0."""


class RewardInfo(_Open):
    """The grade of one simulation, in upstream's shape."""

    reward: float
    """Product of the components named by `reward_basis`; 0 unless a user or agent stop."""
    db_check: DBCheck | None = None
    """DB comparison; None when the run ended prematurely."""
    env_assertions: list[Any] | None = None
    """Upstream environment assertions (empty for airline)."""
    action_checks: list[ActionCheck] | None = None
    """Gold-action diagnostics."""
    nl_assertions: list[Any] | None = None
    """Natural-language assertion results (not computed here; kept when read)."""
    communicate_checks: list[CommunicateCheck] | None = None
    """COMMUNICATE diagnostics."""
    reward_basis: list[str] | None = None
    """Components that made up the reward."""
    reward_breakdown: dict[str, float] | None = None
    """Reward of each component."""
    info: dict[str, Any] | None = None
    """Notes (e.g. why the run got no grade)."""


class SimulationRun(_Open):
    """One simulated conversation and its grade."""

    id: str
    """Unique id (uuid4)."""
    task_id: str
    """The task simulated."""
    timestamp: str | None = None
    """When the record was written."""
    start_time: str | None = None
    """Start of the run (ISO 8601)."""
    end_time: str | None = None
    """End of the run (ISO 8601)."""
    duration: float | None = None
    """Wall-clock seconds."""
    termination_reason: TerminationReason
    """Why the run ended."""
    agent_cost: float | None = None
    """Dollar cost of the agent's model calls, when known."""
    user_cost: float | None = None
    """Dollar cost of the user simulator's model calls, when known."""
    reward_info: RewardInfo | None = None
    """The grade; None until evaluated."""
    messages: list[Message]
    """The trajectory, greeting first."""
    trial: int | None = None
    """Trial index of this task (0-based); None in some recorded files."""
    seed: int | None = None
    """Seed given to the models."""
    # The two ACE fields are left out of the JSON when unset, so upstream files round-trip unchanged.
    skill_injection: str | None = Field(default=None, exclude_if=lambda value: value is None)
    """ACE: how learned skills reached the agent (`matched`, `all`, `tool`); None when ACE did not
    run the agent (upstream files, `ace-eval tau2 run`)."""
    injected_skill_ids: list[str] | None = Field(default=None, exclude_if=lambda value: value is None)
    """ACE: ids of the learned skills injected into the agent's prompt or read through its
    `read_skill` tool, in first-use order; None when ACE did not run the agent."""


class Results(_Open):
    """A tau2 results file: run configuration, the tasks used, every simulation."""

    timestamp: str | None = None
    """When the run started."""
    info: dict[str, Any] = Field(default_factory=dict)
    """Run configuration: num_trials, max_steps, max_errors, agent_info, user_info, environment_info, seed."""
    tasks: list[Task]
    """The tasks the simulations were run (and are graded) with."""
    simulations: list[SimulationRun]
    """Every simulation, in completion order."""


def load_results(path: str | Path) -> Results:
    """Read a tau2 Results file (recorded upstream or written by us).

    The file is untrusted input: any defect raises `ResultsFormatError` naming the file - missing,
    not a regular file, over `MAX_RESULTS_FILE_BYTES`, not UTF-8 JSON within `ace.untrusted`'s
    limits (nesting depth 64, integers of at most 4,300 digits, no duplicate keys, NaN, Infinity
    or lone surrogates), or not the schema (e.g. `"simulations": [1]`).
    """
    path = Path(path)
    try:
        with open_regular_file(path) as file:
            size = os.fstat(file.fileno()).st_size
            if size > MAX_RESULTS_FILE_BYTES:
                raise ResultsFormatError(
                    f"{path}: {size:,} bytes, over the {MAX_RESULTS_FILE_BYTES:,}-byte limit of a Results file"
                )
            data = file.read(MAX_RESULTS_FILE_BYTES + 1)
    except NotRegularFileError:
        raise ResultsFormatError(f"{path}: not a regular file; give a tau2 Results JSON file") from None
    except (OSError, ValueError) as exc:  # ValueError: e.g. a NUL byte in the path
        raise ResultsFormatError(
            f"{quote(str(path))}: cannot read results file ({exc.__class__.__name__}: {exc})"
        ) from exc
    if len(data) > MAX_RESULTS_FILE_BYTES:
        raise ResultsFormatError(f"{path}: over the {MAX_RESULTS_FILE_BYTES:,}-byte limit of a Results file")
    try:
        document = parse_json(data, str(path))
    except UntrustedInputError as exc:
        raise ResultsFormatError(str(exc)) from None
    if not isinstance(document, dict):
        raise ResultsFormatError(f"{path}: not a tau2 Results file (a JSON object is expected, got {quote(document)})")
    try:
        return Results.model_validate(document)
    except ValidationError as exc:
        raise ResultsFormatError(f"{path}: not a tau2 Results file ({validation_summary(exc)})") from None


def write_results(results: Results, path: str | Path) -> None:
    """Write `results` as JSON to `path` atomically (a reader sees the old or the new file)."""
    payload = json.dumps(results.model_dump(mode="json"), indent=2, ensure_ascii=False)
    write_text_atomic(path, payload)
