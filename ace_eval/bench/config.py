"""What an `ace-eval bench` run does: its task set, arms, feedback, limits and models."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ace.models import RequestSettings, StructuredOutput
from ace.roles import Agent, RecursiveReflector, Reflector, SkillManager
from ace.steps.learn_from import LearnFrom
from ace_eval.bench.names import ARMS, LEARNING_ARMS, Arm, FeedbackMode
from ace_eval.role_models import OFFLINE_MODELS, SCRIPTED, ModelServer, layered_settings

if TYPE_CHECKING:
    from ace.agentic import AgenticConfig

__all__ = ["BENCH_ROLES", "BenchConfig", "BenchRole"]

BenchRole = Literal["agent", "reflector", "skill_manager"]
"""The roles of a benchmark run, each with its own model."""
BENCH_ROLES: tuple[BenchRole, ...] = ("agent", "reflector", "skill_manager")
"""The roles in the order they are reported."""


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    """Settings of one benchmark run: learn on the train split, then score every arm on the test split."""

    output_dir: Path
    """The run's folder (train_log.jsonl, checkpoints/, skillbook.json, arms/, report.json, report.md)."""
    family: str = "conventions"
    """`conventions` or `tasks`."""
    task_file: Path | None = None
    """The JSONL task file of the `tasks` family."""
    seed: int = 0
    """Seeds the conventions items and every bootstrap."""
    arms: tuple[Arm, ...] = ARMS
    """The arms to score, each on the same test items and trials."""
    skillbook: Path | None = None
    """A saved skillbook file to score instead of learning one (an earlier run's skillbook.json):
    no learning phase; the `learned` and `all` arms answer with copies of it. The `icl` arm cannot
    run with it (it pastes the experience a learning phase gathers)."""
    feedback: FeedbackMode = "labels"
    """What the learner is told about each training answer."""
    train_epochs: int = 1
    """Passes over the training items (epochs are barriers: each sees the skills of the last)."""
    learn_from: LearnFrom = "all"
    """Which training answers are learned from: `all`, or `failures` (not an unaided right answer;
    see `ace.steps.learn_from.LearnFrom`)."""
    recheck: bool = False
    """Keep a new or changed skill only if the agent, answering its training item again with it,
    gets it right (`ACE.from_roles(recheck=True)`)."""
    counterexamples: bool = False
    """Answer a failed training item again without its injected skills; if that is right, tag them
    with it as a counterexample instead of learning from it (`ACE.from_roles(counterexamples=True)`)."""
    confirm: bool = False
    """Answer a right training item again without its injected skills; if that is wrong, tag them
    with it as a confirmation (`ACE.from_roles(confirmations=True)`); after training, retire every
    learned skill fewer than two training items back (`ace.steps.retire_unconfirmed`)."""
    worked_examples: bool = False
    """A skill learned from a labelled answer carries it as its worked example
    (`SkillManager(worked_examples=True)`; nothing to carry with `verdict` feedback)."""
    train_limit: int | None = None
    """Use only the first N training items."""
    test_limit: int | None = None
    """Use only the first N test items."""
    trials: int = 1
    """Times each test item is answered per arm (useful with a temperature above 0)."""
    icl_budget: int = 2048
    """Tokens the `icl` arm's pasted experience may take (see `ace_eval.bench.arms.count_tokens`)."""
    skills_limit: int = 3
    """Most skills the matcher injects per task (training and the `learned` arm)."""
    require_task_match: bool = True
    """The SkillManager refuses a context skill whose issue the matcher would not match to the
    question it is learned from (see `SkillManager(require_task_match=...)`): the `learned` arm
    matches skills to questions, so such a skill would never reach tasks like it."""
    agent_model: str = SCRIPTED
    """The agent's model string ("scripted": the offline rule-based agent)."""
    reflector_model: str = SCRIPTED
    """The Reflector's model string."""
    skill_manager_model: str = SCRIPTED
    """The SkillManager's model string."""
    reflector_type: Literal["simple", "rr"] = "simple"
    """"simple": one-pass Reflector (the trace is one question and answer); "rr": RecursiveReflector."""
    server: ModelServer = ModelServer()
    """Where real models are served (`--api-base`, `--api-key`, prompt caching)."""
    max_workers: int = 1
    """Items answered at once (1 suits a local server with one slot)."""
    max_output_tokens: int | None = None
    """Output-token cap of every role's requests (None: each role's default)."""
    temperature: float | None = None
    """Sampling temperature of every role (None: each role's default, 0.0)."""
    request_timeout: float | None = None
    """Seconds one request of any role may take (None: each role's default, 300)."""
    structured_output: StructuredOutput | None = None
    """How the roles with a structured answer ask for it (see `RequestSettings.structured_output`;
    None: each role's default, an output tool call)."""
    extra_body: Mapping[str, Any] | None = None
    """Server-specific fields added to every role's request bodies (see `RequestSettings.extra_body`)."""
    context_window: int | None = None
    """The reflector's and SkillManager's context window in tokens (None: litellm's information, else 8192)."""
    session_max_requests: int | None = None
    """Most requests of one SkillManager (or RecursiveReflector) session (None: `AgenticConfig`'s default)."""
    role_settings: Mapping[str, RequestSettings] = dataclasses.field(default_factory=dict)
    """Per-role values (by role name) that beat the run-wide ones above."""

    def model_of(self, role: BenchRole) -> str:
        """The model string of `role`."""
        return str(getattr(self, f"{role}_model"))

    @property
    def plumbing_only(self) -> bool:
        """True when a role runs on an offline scripted model: the figures measure plumbing, not learning."""
        return any(self.model_of(role) in OFFLINE_MODELS for role in BENCH_ROLES)

    def request_settings(self, role: BenchRole) -> RequestSettings:
        """What every request of `role` carries: the role's default, then the run-wide values, then
        the role's own `role_settings`, each only where set. Raises ValueError for a value out of range."""
        default = {
            "agent": Agent.DEFAULT_SETTINGS,
            "reflector": RecursiveReflector.DEFAULT_SETTINGS
            if self.reflector_type == "rr"
            else Reflector.DEFAULT_SETTINGS,
            "skill_manager": SkillManager.DEFAULT_SETTINGS,
        }[role]
        everyone = RequestSettings(
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            timeout_seconds=self.request_timeout,
            structured_output=self.structured_output,
            extra_body=self.extra_body,
        )
        return layered_settings(default, everyone=everyone, own=self.role_settings.get(role))

    def agentic_config(self) -> AgenticConfig:
        """The SkillManager's and RecursiveReflector's session settings: context window and request cap."""
        from ace.agentic import AgenticConfig

        if self.session_max_requests is None:
            return AgenticConfig(context_window_tokens=self.context_window)
        return AgenticConfig(context_window_tokens=self.context_window, max_requests=self.session_max_requests)

    @property
    def learns(self) -> bool:
        """Whether the run has a learning phase (some arm needs its skills or its experience, and no
        saved `skillbook` stands in for it)."""
        return self.skillbook is None and any(arm in LEARNING_ARMS for arm in self.arms)
