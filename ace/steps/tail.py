"""`learning_tail`: the steps that learn from a trace, in the order the loop needs them."""

from __future__ import annotations

from pathlib import Path

from ace.deduplication import DeduplicationManager
from ace.roles import ReflectorLike, SkillManagerLike
from ace.skillbook import Skillbook
from ace.steps.checkpoint import CheckpointStep
from ace.steps.deduplicate import DeduplicateStep
from ace.steps.reflect import ReflectStep
from ace.steps.update import UpdateStep

__all__ = ["learning_tail"]


def learning_tail(
    reflector: ReflectorLike,
    skill_manager: SkillManagerLike,
    skillbook: Skillbook,
    *,
    dedup_manager: DeduplicationManager | None = None,
    dedup_interval: int = 10,
    checkpoint_dir: str | Path | None = None,
    checkpoint_interval: int = 10,
) -> list[object]:
    """ReflectStep -> UpdateStep [-> DeduplicateStep] [-> CheckpointStep].

    Put it after whatever produces `ctx.trace` (AgentStep + EvaluateStep, or LoadTracesStep).
    ReflectStep is the async boundary, so these steps run in the background.
    """
    steps: list[object] = [ReflectStep(reflector), UpdateStep(skill_manager, skillbook)]
    if dedup_manager is not None:
        steps.append(DeduplicateStep(dedup_manager, skillbook, interval=dedup_interval))
    if checkpoint_dir is not None:
        steps.append(CheckpointStep(skillbook, checkpoint_dir, interval=checkpoint_interval))
    return steps
