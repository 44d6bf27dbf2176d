"""EvaluateStep: the environment judges the agent's answer; answer and feedback become the trace."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from ace.errors import UsageError
from ace.roles import AgentOutput
from ace.steps.context import ACEStepContext, Sample

__all__ = ["EnvironmentResult", "EvaluateStep", "TaskEnvironment"]


@dataclasses.dataclass(frozen=True)
class EnvironmentResult:
    """The environment's verdict on one answer."""

    feedback: str
    """What the environment says about the answer (shown to the Reflector)."""
    ground_truth: str | None = None
    """The expected answer, when the environment knows it."""
    metrics: Mapping[str, float] = dataclasses.field(default_factory=dict)
    """Scores such as {"correct": 1.0}."""


@runtime_checkable
class TaskEnvironment(Protocol):
    """Judges an agent's answer to a sample."""

    def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
        """Return feedback on `agent_output` for `sample`."""
        ...


class EvaluateStep:
    """Turn the agent's answer plus the environment's verdict into `ctx.trace` (a dict).

    The trace holds question, context, answer, reasoning, feedback, ground_truth, metrics and the
    injected skill ids — everything the Reflector needs to analyse the sample — plus the agent's
    own `trace_fields` (e.g. a multi-turn run's conversation). A trace field named like one of the
    standard fields fails the sample with ValueError (it would hide the environment's verdict).
    """

    requires = frozenset({"sample", "agent_output", "injected_skill_ids"})
    provides = frozenset({"trace"})

    def __init__(self, environment: TaskEnvironment | None = None) -> None:
        """`environment` judges each answer; None records the answer with no feedback."""
        self._environment = environment

    def __call__(self, ctx: ACEStepContext) -> ACEStepContext:
        sample, output = ctx.sample, ctx.agent_output
        if not isinstance(sample, Sample) or output is None:
            raise TypeError("EvaluateStep needs a Sample and an agent_output on the context")
        result = (
            self._environment.evaluate(sample, output)
            if self._environment is not None
            else EnvironmentResult(feedback="")
        )
        trace: dict[str, Any] = {
            "question": sample.question,
            "context": sample.context,
            "answer": output.answer,
            "reasoning": output.reasoning,
            "feedback": result.feedback,
            "ground_truth": result.ground_truth if result.ground_truth is not None else sample.ground_truth,
            "metrics": dict(result.metrics),
            "injected_skill_ids": list(ctx.injected_skill_ids),
        }
        if sample.id is not None:
            trace["id"] = sample.id
        clashes = sorted(set(output.trace_fields) & set(trace))
        if clashes:
            raise UsageError(f"the agent's trace_fields {clashes} clash with the trace's own fields; rename them")
        trace.update(output.trace_fields)
        return ctx.replace(trace=trace)
