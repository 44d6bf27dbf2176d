"""`ace-eval e2e`: learn a skillbook on tau2-bench airline with the ACE loop, benchmark it, report."""

from ace_eval.e2e.config import ROLES, E2EConfig, Role
from ace_eval.e2e.outcomes import SampleOutcome
from ace_eval.e2e.paired import PairedComparison, TaskChange, TrialOutcome, format_paired, paired_comparison, paired_to_dict
from ace_eval.e2e.preflight import E2EInputError
from ace_eval.e2e.runner import E2EReport, PhaseRecord, run_e2e, run_e2e_async
from ace_eval.e2e.verify import verify_run

__all__ = [
    "ROLES",
    "E2EConfig",
    "E2EInputError",
    "E2EReport",
    "PairedComparison",
    "PhaseRecord",
    "Role",
    "SampleOutcome",
    "TaskChange",
    "TrialOutcome",
    "format_paired",
    "paired_comparison",
    "paired_to_dict",
    "run_e2e",
    "run_e2e_async",
    "verify_run",
]
