"""The steps of the ACE loop and the context they pass (`ACEStepContext`).

Foreground: `AgentStep` (answer with injected skills) -> `EvaluateStep` (feedback -> trace), or
`LoadTracesStep` for recorded traces. Background (`learning_tail`): `ReflectStep` -> `UpdateStep`
[-> `DeduplicateStep`] [-> `CheckpointStep`]. `ExportMarkdownStep` keeps a readable copy.
"""

from ace.steps.agent import AgentStep
from ace.steps.checkpoint import CheckpointStep
from ace.steps.context import ACEStepContext, Sample
from ace.steps.deduplicate import DeduplicateStep
from ace.steps.evaluate import EnvironmentResult, EvaluateStep, TaskEnvironment
from ace.steps.export_markdown import ExportMarkdownStep
from ace.steps.load_traces import LoadTracesStep
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
    "DeduplicateStep",
    "EnvironmentResult",
    "EvaluateStep",
    "ExportMarkdownStep",
    "LoadTracesStep",
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
    "trace_locations",
]
