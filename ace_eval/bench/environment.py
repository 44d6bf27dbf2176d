"""How benchmark items reach the loop: `bench_samples` turns items into `Sample`s, and
`GradingEnvironment` grades the agent's answer and words the feedback the learner sees.

Feedback modes (`--feedback`):

- `labels`: right or wrong and the expected answer (`Incorrect. The expected answer is: 2024.03.05`);
  the trace's ground truth is the expected answer;
- `verdict`: right or wrong only (`Incorrect.`); the trace has no ground truth.
"""

from __future__ import annotations

from collections.abc import Sequence

from ace.errors import UsageError
from ace.roles import AgentOutput, Sample
from ace.steps import EnvironmentResult
from ace_eval.bench.items import BenchItem
from ace_eval.bench.names import FEEDBACK_MODES, FeedbackMode

__all__ = ["FEEDBACK_MODES", "FeedbackMode", "GradingEnvironment", "bench_samples", "feedback_text", "item_of"]


def bench_samples(items: Sequence[BenchItem], *, trials: int = 1, context: str = "") -> list[Sample]:
    """One `Sample` per item and trial (item order, then trial), with `context` given to the agent
    beside each question. The sample id is the item id (`<item id>~<trial>` with several trials);
    the item and the 0-based trial ride in `metadata`. The expected answer is not on the sample:
    only the environment knows it."""
    return [
        Sample(
            question=item.question,
            context=context,
            id=item.id if trials == 1 else f"{item.id}~{trial}",
            metadata={"item": item, "trial": trial},
        )
        for item in items
        for trial in range(trials)
    ]


def item_of(sample: Sample) -> BenchItem:
    """The item a `bench_samples` sample was made from. Raises TypeError for another sample."""
    item = sample.metadata.get("item")
    if not isinstance(item, BenchItem):
        raise TypeError(f"sample {sample.id!r} carries no BenchItem in its metadata; build samples with bench_samples")
    return item


def feedback_text(item: BenchItem, correct: bool, mode: FeedbackMode) -> str:
    """The words the learner gets for an answer to `item` under `mode`."""
    if correct:
        return "Correct."
    return f"Incorrect. The expected answer is: {item.expected}" if mode == "labels" else "Incorrect."


class GradingEnvironment:
    """Grades each answer against its item (`BenchItem.is_correct`) and says so in `mode`'s words;
    `metrics` is `{"correct": 1.0}` or `{"correct": 0.0}`."""

    def __init__(self, mode: FeedbackMode) -> None:
        """Raises UsageError for an unknown feedback mode."""
        if mode not in FEEDBACK_MODES:
            raise UsageError(f"feedback must be one of {', '.join(FEEDBACK_MODES)}; got {mode!r}")
        self.mode: FeedbackMode = mode
        """The feedback mode."""

    def evaluate(self, sample: Sample, agent_output: AgentOutput) -> EnvironmentResult:
        item = item_of(sample)
        correct = item.is_correct(agent_output.answer)
        return EnvironmentResult(
            feedback=feedback_text(item, correct, self.mode),
            ground_truth=item.expected if self.mode == "labels" else None,
            metrics={"correct": 1.0 if correct else 0.0},
        )
