"""`TraceAnalyser`: learn a skillbook from recorded traces, without running an agent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ace.deduplication import DeduplicationManager
from ace.pipeline import Pipeline, SampleResult
from ace.roles import ReflectorLike, SkillManagerLike
from ace.runners._loop import LearningSettings, run_epochs
from ace.skillbook import Skillbook
from ace.steps import ACEStepContext, LoadTracesStep, TraceLocation, trace_locations

__all__ = ["TraceAnalyser"]


class TraceAnalyser:
    """LoadTracesStep -> ReflectStep -> UpdateStep [-> dedup] [-> checkpoint] [-> extra].

    `run(traces)` takes in-memory traces (dicts, message lists, strings...) and/or files: a `Path`
    (a JSON, JSONL or tau2 Results file, or a folder of them) expands to one sample per trace in it.
    """

    def __init__(self, pipeline: Pipeline, skillbook: Skillbook) -> None:
        self.pipeline = pipeline
        """The assembled pipeline."""
        self.skillbook = skillbook
        """The skillbook the analyser learns into."""

    @classmethod
    def from_roles(
        cls,
        *,
        reflector: ReflectorLike,
        skill_manager: SkillManagerLike,
        skillbook: Skillbook | None = None,
        dedup_manager: DeduplicationManager | None = None,
        dedup_interval: int = 10,
        checkpoint_dir: str | Path | None = None,
        checkpoint_interval: int = 10,
        extra_steps: Sequence[Any] | None = None,
    ) -> TraceAnalyser:
        """Assemble the analyser (the same learning settings as `ACE.from_roles`)."""
        learning = LearningSettings(
            reflector=reflector,
            skill_manager=skill_manager,
            skillbook=skillbook if skillbook is not None else Skillbook(),
            dedup_manager=dedup_manager,
            dedup_interval=dedup_interval,
            checkpoint_dir=checkpoint_dir,
            checkpoint_interval=checkpoint_interval,
            extra_steps=tuple(extra_steps or ()),
        )
        return cls(Pipeline([LoadTracesStep(), *learning.tail()], name="TraceAnalyser"), learning.skillbook)

    def run(self, traces: Iterable[Any], *, epochs: int = 1, workers: int = 1) -> list[SampleResult]:
        """Learn from every trace, `epochs` times (epochs are barriers). A file that cannot be read
        fails its own sample with a `TraceFileError`; the other traces are learned from."""
        inputs: list[Any] = []
        for trace in traces:
            inputs.extend(trace_locations([trace]) if isinstance(trace, Path) else [trace])
        return run_epochs(
            self.pipeline,
            inputs,
            self.skillbook,
            epochs=epochs,
            workers=workers,
            make_context=_context_for,
        )


def _context_for(item: Any) -> ACEStepContext:
    if isinstance(item, TraceLocation):
        return ACEStepContext(sample=item)
    return ACEStepContext(sample=item, trace=item)
