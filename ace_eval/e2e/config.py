"""What an `ace-eval e2e` run does: its models, data, and limits."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from ace_eval.e2e.scripted import SCRIPTED

__all__ = ["E2EConfig"]


@dataclasses.dataclass(frozen=True)
class E2EConfig:
    """Settings of one end-to-end run: collect (or read) traces, learn a skillbook, benchmark it."""

    output_dir: Path
    """The run's folder (collection/, checkpoints/, skillbook.json, benchmark/, summary.json)."""
    traces: tuple[Path, ...] = ()
    """tau2 Results files (or folders of them) to learn from; empty: collect them on the train split."""
    agent_model: str = SCRIPTED
    """The airline agent's model string ("scripted": the offline rule-based agent)."""
    user_model: str = SCRIPTED
    """The simulated user's model string."""
    reflector_model: str = SCRIPTED
    """The Reflector's model string."""
    skill_manager_model: str = SCRIPTED
    """The SkillManager's model string."""
    reflector_type: Literal["simple", "rr"] = "rr"
    """"rr": the RecursiveReflector (code over the trace in a sandbox); "simple": one-pass Reflector."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server, for every model that is not scripted."""
    api_key: str | None = None
    """API key for `api_base`."""
    train_split: str = "train"
    """Split whose tasks are simulated to collect traces (when `traces` is empty)."""
    test_split: str = "test"
    """Split the benchmark runs on."""
    task_limit: int | None = None
    """Use only the first N tasks of each split (quick runs)."""
    num_trials: int = 1
    """Trials per task, for collection and benchmark (pass^k needs k <= trials)."""
    max_steps: int = 200
    """Step limit of one simulation (upstream default 200)."""
    max_workers: int = 4
    """Simulations (and reflections) running at once."""
    epochs: int = 1
    """Passes over the traces while learning."""
    benchmark: bool = True
    """Run the benchmark (baseline vs learned skillbook) after learning."""
    temperature: float = 0.0
    """Sampling temperature of agent and user."""
