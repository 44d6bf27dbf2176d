"""The closed sets of `ace-eval bench` - its arms and feedback modes - light to import for the command line."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["ARMS", "FEEDBACK_MODES", "LEARNING_ARMS", "Arm", "FeedbackMode"]

Arm = Literal["none", "learned", "all", "icl", "oracle"]
"""One way of giving the agent what was learned (see `ace_eval.bench.arms`)."""
ARMS: tuple[Arm, ...] = get_args(Arm)
"""Every arm, in report order."""
LEARNING_ARMS = frozenset({"learned", "all", "icl"})
"""Arms that need the learning phase (its skillbook, or its experience for `icl`)."""

FeedbackMode = Literal["labels", "verdict"]
"""What the learner is told about an answer (see `ace_eval.bench.environment`)."""
FEEDBACK_MODES: tuple[FeedbackMode, ...] = get_args(FeedbackMode)
"""The feedback modes; `labels` is the default."""
