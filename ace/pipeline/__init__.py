"""The generic step engine: composable steps passing one immutable context, run over many samples.

A step is any object with `requires`, `provides` and `__call__(ctx) -> ctx` (sync or async); see
`Step`. `Pipeline(steps)` validates the wiring when built and runs samples concurrently on one
asyncio event loop, with sync steps in worker threads. The engine knows nothing about skills.
"""

from ace.pipeline._branch import Branch, MergeFunction, MergeStrategy
from ace.pipeline._context import CancellationToken, StepContext
from ace.pipeline._engine import SYNC_STEP_THREADS, run_blocking
from ace.pipeline._errors import (
    BranchConflictError,
    BranchError,
    PipelineCancelled,
    PipelineConfigError,
    PipelineError,
    PipelineOrderError,
)
from ace.pipeline._hooks import StepEvent, StepHook
from ace.pipeline._pipeline import Pipeline
from ace.pipeline._result import SampleResult
from ace.pipeline._step import Step

__all__ = [
    "SYNC_STEP_THREADS",
    "Branch",
    "BranchConflictError",
    "BranchError",
    "CancellationToken",
    "MergeFunction",
    "MergeStrategy",
    "Pipeline",
    "PipelineCancelled",
    "PipelineConfigError",
    "PipelineError",
    "PipelineOrderError",
    "SampleResult",
    "Step",
    "StepContext",
    "StepEvent",
    "StepHook",
    "run_blocking",
]
