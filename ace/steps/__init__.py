"""The steps of the ACE loop and the context they pass (`ACEStepContext`).

Foreground: `AgentStep` (answer with injected skills) -> `EvaluateStep` (feedback -> trace)
[-> `CounterexampleStep`] [-> `ConfirmationStep`], or `LoadTracesStep` for recorded traces.
Background (`learning_tail`):
`ReflectStep` -> `UpdateStep` [-> `DeduplicateStep`] [-> `CheckpointStep`]. `ExportMarkdownStep` keeps a readable copy.
`learn_from` (`LearnFrom`) says which samples the tail learns from. The names below are imported
on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace.steps.agent import AgentStep
    from ace.steps.checkpoint import CheckpointStep
    from ace.steps.confirmation import ConfirmationStep, retire_unconfirmed
    from ace.steps.context import ACEStepContext, Sample
    from ace.steps.counterexample import CounterexampleStep
    from ace.steps.deduplicate import DeduplicateStep
    from ace.steps.evaluate import EnvironmentResult, EvaluateStep, TaskEnvironment
    from ace.steps.export_markdown import ExportMarkdownStep
    from ace.steps.learn_from import LEARN_FROM, LearnFrom
    from ace.steps.load_traces import LoadTracesStep
    from ace.steps.recheck import Recheck
    from ace.steps.reflect import ReflectStep
    from ace.steps.tail import TailOptions, learning_tail
    from ace.steps.update import UpdateStep, insight_source_for
    from ace.traces import (
        TraceFileError,
        TraceIdentity,
        TraceLocation,
        infer_trace_identity,
        load_trace_file,
        trace_locations,
    )

__all__ = [
    "ACEStepContext",
    "AgentStep",
    "CheckpointStep",
    "ConfirmationStep",
    "CounterexampleStep",
    "DeduplicateStep",
    "EnvironmentResult",
    "EvaluateStep",
    "ExportMarkdownStep",
    "LEARN_FROM",
    "LearnFrom",
    "LoadTracesStep",
    "Recheck",
    "ReflectStep",
    "Sample",
    "TailOptions",
    "TaskEnvironment",
    "TraceFileError",
    "TraceIdentity",
    "TraceLocation",
    "UpdateStep",
    "infer_trace_identity",
    "insight_source_for",
    "learning_tail",
    "load_trace_file",
    "retire_unconfirmed",
    "trace_locations",
]

_EXPORTS: dict[str, str] = {
    "ACEStepContext": "ace.steps.context",
    "AgentStep": "ace.steps.agent",
    "CheckpointStep": "ace.steps.checkpoint",
    "ConfirmationStep": "ace.steps.confirmation",
    "CounterexampleStep": "ace.steps.counterexample",
    "DeduplicateStep": "ace.steps.deduplicate",
    "EnvironmentResult": "ace.steps.evaluate",
    "EvaluateStep": "ace.steps.evaluate",
    "ExportMarkdownStep": "ace.steps.export_markdown",
    "LEARN_FROM": "ace.steps.learn_from",
    "LearnFrom": "ace.steps.learn_from",
    "LoadTracesStep": "ace.steps.load_traces",
    "Recheck": "ace.steps.recheck",
    "ReflectStep": "ace.steps.reflect",
    "Sample": "ace.steps.context",
    "TailOptions": "ace.steps.tail",
    "TaskEnvironment": "ace.steps.evaluate",
    "TraceFileError": "ace.traces",
    "TraceIdentity": "ace.traces",
    "TraceLocation": "ace.traces",
    "UpdateStep": "ace.steps.update",
    "infer_trace_identity": "ace.traces",
    "insight_source_for": "ace.steps.update",
    "learning_tail": "ace.steps.tail",
    "load_trace_file": "ace.traces",
    "retire_unconfirmed": "ace.steps.confirmation",
    "trace_locations": "ace.traces",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
