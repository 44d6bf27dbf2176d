"""`ace-eval bench`: does the agent do better with what it learned? Arms none / learned / all / icl /
oracle on the same test items, paired (see docs/learning-benchmark.md)."""

from ace_eval.bench.arms import ARMS, Arm
from ace_eval.bench.config import BenchConfig
from ace_eval.bench.conventions import conventions
from ace_eval.bench.environment import FEEDBACK_MODES, FeedbackMode, GradingEnvironment
from ace_eval.bench.items import BenchItem
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
