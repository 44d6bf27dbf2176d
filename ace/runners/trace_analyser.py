"""`TraceAnalyser`: learn a skillbook from recorded traces, without running an agent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from typing_extensions import Unpack

from ace.pipeline import SampleResult, StepHook
from ace.roles import ReflectorLike, SkillManagerLike
from ace.runners._runner import EpochCallback, Runner
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, LoadTracesStep, TailOptions, TraceLocation, trace_locations

__all__ = ["TraceAnalyser"]


class TraceAnalyser(Runner):
    """LoadTracesStep -> ReflectStep -> UpdateStep [-> dedup] [-> checkpoint] [-> extra].

    `run(traces)` takes in-memory traces (dicts, message lists, strings...) and/or files: a `Path`
    (a JSON, JSONL or tau2 Results file, or a folder of them) expands to one sample per trace in it.
    """

    @classmethod
    def from_roles(
        cls,
        *,
        reflector: ReflectorLike,
        skill_manager: SkillManagerLike,
        skillbook: Skillbook | None = None,
        extra_steps: Sequence[Any] | None = None,
        **options: Unpack[TailOptions],
    ) -> TraceAnalyser:
        """Assemble the analyser; `options` are the learning tail's, as for `ACE.from_roles`."""
        skillbook = skillbook if skillbook is not None else Skillbook()
        pipeline = cls.assemble(
            "TraceAnalyser",
            [LoadTracesStep()],
            reflector=reflector,
            skill_manager=skill_manager,
            skillbook=skillbook,
            extra_steps=extra_steps,
            options=options,
        )
        return cls(pipeline, skillbook)

    def run(
        self,
        traces: Iterable[Any],
        *,
        epochs: int = 1,
        workers: int = 1,
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
    ) -> list[SampleResult]:
        """Learn from every trace, `epochs` times (epochs are barriers). A file that cannot be read
        fails its own sample with a `TraceFileError`; the other traces are learned from. Hooks as
        in `ACE.run`. Raises TypeError when `traces` is a single string or `Path` instead of a list
        of them, and `PipelineError` inside a running event loop (await `run_async` there)."""
        return self.run_epochs(
            _inputs(traces),
            epochs=epochs,
            workers=workers,
            make_context=_context_for,
            after_step=after_step,
            on_epoch_end=on_epoch_end,
        )

    async def run_async(
        self,
        traces: Iterable[Any],
        *,
        epochs: int = 1,
        workers: int = 1,
        after_step: StepHook | Sequence[StepHook] = (),
        on_epoch_end: EpochCallback | None = None,
    ) -> list[SampleResult]:
        """`run` for async callers, on their event loop."""
        return await self.run_epochs_async(
            _inputs(traces),
            epochs=epochs,
            workers=workers,
            make_context=_context_for,
            after_step=after_step,
            on_epoch_end=on_epoch_end,
        )


def _inputs(traces: Iterable[Any]) -> list[Any]:
    if isinstance(traces, (str, Path)):
        raise TypeError(
            f"traces must be a list of traces or paths, not one {type(traces).__name__}; "
            f"pass [{str(traces)[:40]!r}] (and a file as a Path)"
        )
    inputs: list[Any] = []
    for trace in traces:
        inputs.extend(trace_locations([trace]) if isinstance(trace, Path) else [trace])
    return inputs


def _context_for(item: Any) -> ACEStepContext:
    if isinstance(item, TraceLocation):
        return ACEStepContext(sample=item)
    return ACEStepContext(sample=item, trace=item)
