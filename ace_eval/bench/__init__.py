"""`ace-eval bench`: does the agent do better with what it learned? Arms none / learned / all / icl /
oracle on the same test items, paired (see docs/learning-benchmark.md).

The names below are imported on first use, so `ace-eval bench --help` and a bad flag answer without
loading the roles or the LLM clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace_eval.bench.config import BenchConfig
    from ace_eval.bench.conventions import conventions
    from ace_eval.bench.environment import GradingEnvironment
    from ace_eval.bench.items import BenchItem
    from ace_eval.bench.names import ARMS, FEEDBACK_MODES, Arm, FeedbackMode
    from ace_eval.bench.preflight import BenchInputError
    from ace_eval.bench.report import write_reports
    from ace_eval.bench.runner import BenchReport, run_bench, run_bench_async
    from ace_eval.bench.scoring import ArmScore, ItemOutcome, PairedDifference
    from ace_eval.bench.task_file import TaskFile, TaskFileError, load_task_file
    from ace_eval.bench.task_set import RuleSkill, TaskSet

__all__ = [
    "ARMS",
    "FEEDBACK_MODES",
    "Arm",
    "ArmScore",
    "BenchConfig",
    "BenchInputError",
    "BenchItem",
    "BenchReport",
    "FeedbackMode",
    "GradingEnvironment",
    "ItemOutcome",
    "PairedDifference",
    "RuleSkill",
    "TaskFile",
    "TaskFileError",
    "TaskSet",
    "conventions",
    "load_task_file",
    "run_bench",
    "run_bench_async",
    "write_reports",
]

_EXPORTS: dict[str, str] = {
    "ARMS": "ace_eval.bench.names",
    "FEEDBACK_MODES": "ace_eval.bench.names",
    "Arm": "ace_eval.bench.names",
    "FeedbackMode": "ace_eval.bench.names",
    "BenchConfig": "ace_eval.bench.config",
    "conventions": "ace_eval.bench.conventions",
    "GradingEnvironment": "ace_eval.bench.environment",
    "BenchItem": "ace_eval.bench.items",
    "BenchInputError": "ace_eval.bench.preflight",
    "write_reports": "ace_eval.bench.report",
    "BenchReport": "ace_eval.bench.runner",
    "run_bench": "ace_eval.bench.runner",
    "run_bench_async": "ace_eval.bench.runner",
    "ArmScore": "ace_eval.bench.scoring",
    "ItemOutcome": "ace_eval.bench.scoring",
    "PairedDifference": "ace_eval.bench.scoring",
    "TaskFile": "ace_eval.bench.task_file",
    "TaskFileError": "ace_eval.bench.task_file",
    "load_task_file": "ace_eval.bench.task_file",
    "RuleSkill": "ace_eval.bench.task_set",
    "TaskSet": "ace_eval.bench.task_set",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
