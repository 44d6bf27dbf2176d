"""What an `ace-eval e2e` run does: its models, data, injection policy and limits.

Light to import (the roles and tau2 load only when `request_settings` is called), so the command
line checks flags and credentials before anything heavy loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ace.errors import UsageError
from ace.roles import SkillInjection
from ace.steps.learn_from import LearnFrom
from ace_eval.role_models import OFFLINE_MODELS, SCRIPTED, check_role_models, layered_settings

if TYPE_CHECKING:
    from ace.models import RequestSettings, StructuredOutput

__all__ = ["OFFLINE_MODELS", "ROLES", "SCRIPTED", "E2EConfig", "E2EInputError", "Role"]


class E2EInputError(UsageError):
    """A setting or an input file of `ace-eval e2e` is wrong; found before any model is called.
    The message names the problem and the fix."""


Role = Literal["agent", "user", "reflector", "skill_manager"]
"""The four roles of a run, each with its own model."""
ROLES: tuple[Role, ...] = ("agent", "user", "reflector", "skill_manager")
"""The roles in the order they are reported."""


@dataclasses.dataclass(frozen=True)
class E2EConfig:
    """Settings of one end-to-end run: learn a skillbook (online on the train split, or from recorded
    traces), then benchmark it against the same agent without skills."""

    output_dir: Path
    """The run's folder (train/, checkpoints/, skillbook.json, benchmark/, train_log.jsonl,
    summary.json, report.json, report.md)."""
    traces: tuple[Path, ...] = ()
    """tau2 Results files (or folders of them) to learn from offline; empty: learn online by
    running the train split."""
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
    cache_prompts: bool = False
    """Mark each request's static prefix for providers that cache only marked prefixes (Anthropic,
    Bedrock); see `ace.models.resolve_model`."""
    cache_ttl: str | None = None
    """Lifetime of those cache entries (e.g. "5m", "1h"); None: the provider's default."""
    skill_injection: SkillInjection = "matched"
    """How learned skills reach the agent: `matched` (the SkillMatcher's skills for the user's first
    message), `all` (every active skill) or `tool` (ids and issues listed, insights read with a
    `read_skill` tool)."""
    skills_limit: int = 3
    """Most skills `matched` injects per simulation."""
    train_split: str = "train"
    """Split whose tasks are run to learn online (when `traces` is empty)."""
    test_split: str = "test"
    """Split the benchmark runs on."""
    task_limit: int | None = None
    """Use only the first N tasks of each split (quick runs)."""
    num_trials: int = 1
    """Trials per task, for training and benchmark (pass^k needs k <= trials)."""
    max_steps: int = 200
    """Step limit of one simulation (upstream default 200)."""
    max_workers: int = 4
    """Simulations (and reflections) running at once."""
    train_epochs: int | None = None
    """Passes over the train split (or the traces), each with the skills learned so far; None: 2
    when learning online, 1 from recorded traces."""
    learn_from: LearnFrom = "all"
    """Which simulations are learned from: `all`, or `failures` (not a full-reward simulation into
    which no skill was injected; see `ace.steps.learn_from.LearnFrom`)."""
    recheck: bool = False
    """Keep a new or changed skill only if the simulation it came from, run again with it, gets
    full reward (online learning only: `ACE.from_roles(recheck=True)`)."""
    benchmark: bool = True
    """Run the paired benchmark (baseline vs learned skills) after learning."""
    allow_test_overlap: bool = False
    """Learn from `traces` that hold test-split tasks even though the benchmark runs on them."""
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
    """The reflector's and SkillManager's context window in tokens, for compaction (None: litellm's
    model information, else 8192; set it for a local server's model)."""
    role_settings: Mapping[str, RequestSettings] = dataclasses.field(default_factory=dict)
    """Per-role values (by role name) that beat the run-wide ones above (unset fields of a role's
    entry do not)."""

    @property
    def epochs(self) -> int:
        """The number of training epochs this run makes (`train_epochs` or its default)."""
        if self.train_epochs is not None:
            return self.train_epochs
        return 1 if self.traces else 2

    def model_of(self, role: Role) -> str:
        """The model string of `role`."""
        return str(getattr(self, f"{role}_model"))

    def request_settings(self, role: Role) -> RequestSettings:
        """What every request of `role` carries: the role's default, then the run-wide values,
        then the role's own `role_settings`, each only where set."""
        from ace.roles import RecursiveReflector, Reflector, SkillManager
        from ace_eval.tau2 import LLMAgent, UserSimulator

        default = {
            "agent": LLMAgent.DEFAULT_SETTINGS,
            "user": UserSimulator.DEFAULT_SETTINGS,
            "reflector": RecursiveReflector.DEFAULT_SETTINGS
            if self.reflector_type == "rr"
            else Reflector.DEFAULT_SETTINGS,
            "skill_manager": SkillManager.DEFAULT_SETTINGS,
        }[role]
        from ace.models import RequestSettings

        everyone = RequestSettings(
            max_output_tokens=self.max_output_tokens,
            temperature=self.temperature,
            timeout_seconds=self.request_timeout,
            structured_output=self.structured_output,
            extra_body=self.extra_body,
        )
        return layered_settings(default, everyone=everyone, own=self.role_settings.get(role))

    def running_roles(self) -> tuple[Role, ...]:
        """The roles that run in this invocation: agent and user only when they simulate
        (online learning or a benchmark); reflector and SkillManager always."""
        simulating = not self.traces or self.benchmark
        return tuple(role for role in ROLES if simulating or role in ("reflector", "skill_manager"))

    def check_roles(self) -> None:
        """Raise `E2EInputError` when the running roles mix offline and real models, or a real
        model lacks its provider credential (not checked with `api_base` or `api_key`: a local
        server, or a key given). Cheap: it loads no role and no model client."""
        try:
            check_role_models(
                {role: self.model_of(role) for role in self.running_roles()},
                api_base=self.api_base,
                api_key=self.api_key,
            )
        except UsageError as exc:
            raise E2EInputError(str(exc)) from None
