"""`learning_tail`: the steps that learn from a trace, in the order the loop needs them."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from typing_extensions import Unpack

from ace.deduplication import DeduplicationManager
from ace.pipeline import Step
from ace.roles import ReflectorLike, SkillManagerLike
from ace.skillbook import Skillbook
from ace.steps.checkpoint import CheckpointStep
from ace.steps.context import ACEStepContext
from ace.steps.deduplicate import DeduplicateStep
from ace.steps.learn_from import LearnFrom
from ace.steps.recheck import Recheck
from ace.steps.reflect import DEFAULT_REFLECT_WORKERS, ReflectStep
from ace.steps.update import UpdateStep

__all__ = ["TailOptions", "learning_tail"]


class TailOptions(TypedDict, total=False):
    """The optional background steps of the learning tail (also accepted by the runners)."""

    reflect_workers: int
    """Reflections running at once (default `DEFAULT_REFLECT_WORKERS`, 4)."""
    learn_from: LearnFrom
    """Which samples are reflected on: `all` (default) or `failures` (`ace.steps.learn_from.LearnFrom`)."""
    dedup_manager: DeduplicationManager | None
    """Consolidate duplicate skills every `dedup_interval` samples (default: no deduplication)."""
    dedup_interval: int
    """Samples between deduplication runs (default 10)."""
    checkpoint_dir: str | Path | None
    """Write `checkpoint_<n>.json` and `latest.json` here (default: no checkpoints)."""
    checkpoint_interval: int
    """Samples between checkpoints (default 10)."""


def learning_tail(
    reflector: ReflectorLike,
    skill_manager: SkillManagerLike,
    skillbook: Skillbook,
    *,
    recheck: Recheck | None = None,
    **options: Unpack[TailOptions],
) -> list[Step[ACEStepContext]]:
    """ReflectStep -> UpdateStep [-> DeduplicateStep] [-> CheckpointStep].

    Put it after whatever produces `ctx.trace` (AgentStep + EvaluateStep, or LoadTracesStep).
    ReflectStep is the async boundary, so these steps run in the background. `recheck` (an agent
    and an environment, so only after AgentStep + EvaluateStep) makes UpdateStep keep a new or
    changed skill only if it fixes the sample it came from.
    """
    reflect = ReflectStep(
        reflector,
        max_workers=options.get("reflect_workers", DEFAULT_REFLECT_WORKERS),
        learn_from=options.get("learn_from", "all"),
    )
    steps: list[Step[ACEStepContext]] = [reflect, UpdateStep(skill_manager, skillbook, recheck=recheck)]
    dedup_manager = options.get("dedup_manager")
    if dedup_manager is not None:
        steps.append(DeduplicateStep(dedup_manager, skillbook, interval=options.get("dedup_interval", 10)))
    checkpoint_dir = options.get("checkpoint_dir")
    if checkpoint_dir is not None:
        steps.append(CheckpointStep(skillbook, checkpoint_dir, interval=options.get("checkpoint_interval", 10)))
    return steps
