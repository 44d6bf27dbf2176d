"""What became of each sample of a run: learned from, nothing to learn, or failed - and why.

A trace counts as **learned** only when its SkillManager session finished (`finalize`) having
changed the skillbook; a finished session with no operation is **nothing learned** (not a
failure); a step that raised, a failed reflection or a session that stopped short is **failed**,
and so is a `--traces` file or simulation that cannot be used (`unusable_outcome`, epoch 1).
`TrainLog` appends one JSON line per sample to `train_log.jsonl` the moment it is done.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from ace.pipeline import SampleResult, StepEvent
from ace.skillbook import UpdateOperation
from ace.steps import ACEStepContext, Sample, infer_trace_identity
from ace.traces import trace_reward
from ace_eval.e2e.preflight import UnusableTrace

__all__ = [
    "SIMULATION_STEPS",
    "LearningStatus",
    "SampleOutcome",
    "TrainLog",
    "learning_summary",
    "outcome_of",
    "outcome_of_event",
    "unusable_outcome",
]

LearningStatus = Literal["learned", "nothing learned", "failed"]
"""What a sample taught the skillbook."""

SIMULATION_STEPS = frozenset({"AgentStep", "EvaluateStep", "LoadTracesStep"})
"""Steps whose failure means the trace itself was not produced (a simulation failure)."""

_LAST_LEARNING_STEP = "UpdateStep"


@dataclasses.dataclass(frozen=True)
class SampleOutcome:
    """One sample of a learning run, as the train log and the report show it."""

    epoch: int
    """1-based epoch."""
    status: LearningStatus
    """learned / nothing learned / failed."""
    trace_uid: str | None
    """Identity of the trace learned from (None when no trace was produced)."""
    task_id: str | None
    """The tau2 task, when known."""
    trial: int | None
    """The trial of the task, when known."""
    reward: float | None
    """The run's reward, when graded."""
    injected_skill_ids: tuple[str, ...]
    """Skills the agent was given for this run."""
    operations: tuple[str, ...]
    """The SkillManager's operations, e.g. `ADD context-00001`, `TAG context-00002 +1`."""
    detail: str
    """The error (`<step>: <type>: <message>`) of a failure, else the SkillManager's reasoning."""
    simulation_failed: bool = False
    """True when the failure happened before a trace existed (the simulation raised)."""
    unbacked_claims: tuple[str, ...] = ()
    """Operation kinds the SkillManager's finalize claims but no tool call made (its account is wrong)."""
    source_file: str | None = None
    """The `--traces` file a recorded trace came from (None for online simulations)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return dataclasses.asdict(self)


def outcome_of(result: SampleResult) -> SampleOutcome:
    """Classify a finished `SampleResult` of `ACE.run` / `TraceAnalyser.run`."""
    ctx = result.output if result.output is not None else result.sample
    assert isinstance(ctx, ACEStepContext)
    return _classify(ctx, error=result.error, failed_at=result.failed_at)


def unusable_outcome(unusable: UnusableTrace) -> SampleOutcome:
    """A `--traces` input that cannot be learned from, as a failed sample of epoch 1 (no trace existed)."""
    return SampleOutcome(
        epoch=1,
        status="failed",
        trace_uid=None,
        task_id=unusable.task_id,
        trial=unusable.trial,
        reward=None,
        injected_skill_ids=(),
        operations=(),
        detail=unusable.reason,
        simulation_failed=True,
        source_file=unusable.source_file,
    )


def outcome_of_event(event: StepEvent) -> SampleOutcome | None:
    """The outcome of a sample whose last learning step just ran (or any step failed), else None."""
    if event.error is not None:
        ctx = event.context
        assert isinstance(ctx, ACEStepContext)
        return _classify(ctx, error=event.error, failed_at=event.step)
    if event.step == _LAST_LEARNING_STEP and isinstance(event.output, ACEStepContext):
        return _classify(event.output, error=None, failed_at=None)
    return None


class TrainLog:
    """`train_log.jsonl`: one line per sample as soon as it is done (a killed run keeps them)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        """The JSONL file (created empty, or emptied)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("", encoding="utf-8")
        self._lock = threading.Lock()

    def hook(self, event: StepEvent) -> None:
        """An `after_step` hook: append the sample's line when it is done."""
        outcome = outcome_of_event(event)
        if outcome is not None:
            self.write(outcome)

    def write(self, outcome: SampleOutcome) -> None:
        """Append `outcome`'s line (for samples that never reach the pipeline, e.g. unusable traces)."""
        line = json.dumps(outcome.to_dict(), ensure_ascii=False)
        with self._lock, self.path.open("a", encoding="utf-8") as file:
            file.write(line + "\n")


def _classify(ctx: ACEStepContext, *, error: Exception | None, failed_at: str | None) -> SampleOutcome:
    task_id, trial, reward = _run_facts(ctx)
    failed = SampleOutcome(
        epoch=ctx.epoch,
        status="failed",
        trace_uid=_trace_uid(ctx),
        task_id=task_id,
        trial=trial,
        reward=reward,
        injected_skill_ids=tuple(ctx.injected_skill_ids),
        operations=(),
        detail="",
        source_file=_source_file(ctx),
    )
    if error is not None:
        detail = f"{failed_at}: {type(error).__name__}: {error}"
        return dataclasses.replace(failed, detail=detail, simulation_failed=failed_at in SIMULATION_STEPS)
    if ctx.learning_skipped is not None:
        return dataclasses.replace(failed, status="nothing learned", detail=f"not learned from: {ctx.learning_skipped}")
    if ctx.reflection_failure is not None:
        return dataclasses.replace(failed, detail=f"ReflectStep: the reflection failed: {ctx.reflection_failure}")
    output = ctx.skill_manager_output
    if output is None or not output.finished:
        detail = "UpdateStep: the SkillManager session did not finish" + (f" ({output.reasoning})" if output else "")
        return dataclasses.replace(failed, detail=detail)
    if output.undone_because is not None:
        undone = ", ".join(_operation_line(op) for op in output.undone)
        detail = f"undone ({undone}): {output.undone_because}"
        return dataclasses.replace(failed, status="nothing learned", detail=detail)
    operations = tuple(_operation_line(op) for op in output.operations)
    status: LearningStatus = "learned" if operations else "nothing learned"
    return dataclasses.replace(
        failed, status=status, operations=operations, detail=output.reasoning, unbacked_claims=output.unbacked_claims
    )


def _operation_line(op: UpdateOperation) -> str:
    return f"{op.type} {op.skill_id}" + (f" {op.delta:+d}" if op.type == "TAG" and op.delta is not None else "")


def _trace_uid(ctx: ACEStepContext) -> str | None:
    if ctx.trace is None:
        return None
    sample_id = ctx.sample.id if isinstance(ctx.sample, Sample) else None
    try:
        return infer_trace_identity(ctx.trace, metadata=ctx.metadata, sample_id=sample_id).trace_uid
    except ValueError:
        return None


def _source_file(ctx: ACEStepContext) -> str | None:
    source = ctx.trace.get("source_file") if isinstance(ctx.trace, Mapping) else None
    return source if isinstance(source, str) else None


def _run_facts(ctx: ACEStepContext) -> tuple[str | None, int | None, float | None]:
    """Task id, trial and reward of a sample or trace (None where unknown): a tau2 task and trial
    from the sample, the tau2 simulation's own, else the sample's id and its `trial` metadata; the
    tau2 reward, else the environment's `reward` or `correct` metric (e.g. `ace-eval bench`)."""
    task_id: str | None = None
    trial: int | None = None
    sample = ctx.sample if isinstance(ctx.sample, Sample) else None
    if sample is not None and "task" in sample.metadata:
        task_id = str(sample.metadata["task"].id)
        trial = int(sample.metadata.get("trial", 0))
    elif sample is not None:
        task_id = sample.id
        trial = sample.metadata.get("trial")
    trace = ctx.trace if isinstance(ctx.trace, Mapping) else {}
    simulation = trace.get("simulation")
    if isinstance(simulation, Mapping):
        task_id = str(simulation.get("task_id", task_id))
        trial = simulation.get("trial", trial)
    return task_id, trial, trace_reward(trace)


def learning_summary(
    active_skills: int, learning: tuple[SampleOutcome, ...], unusable: tuple[SampleOutcome, ...]
) -> str:
    """The line `ace-eval e2e` prints when learning is done: active skills, and the traces learned
    from, that taught nothing, and that failed (`unusable`: inputs of `--traces` that could not be used)."""
    learned = sum(o.status == "learned" for o in learning)
    failed = sum(o.status == "failed" for o in learning)
    unusable_inputs = f" (of which {len(unusable)} unusable --traces inputs)" if unusable else ""
    return (
        f"learning done: {active_skills} active skills; {learned} of {len(learning)} traces learned "
        f"from, {len(learning) - learned - failed} taught nothing, {failed} failed{unusable_inputs}"
    )
