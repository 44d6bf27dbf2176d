"""`ace-eval e2e`: learn a skillbook on tau2-bench airline with the ACE loop, benchmark it, report.

The names below are imported on first use, so `ace-eval e2e --help` and a bad flag answer without
loading the roles, the LLM clients or tau2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace_eval.e2e.config import ROLES, E2EConfig, Role
    from ace_eval.e2e.outcomes import SampleOutcome
    from ace_eval.e2e.paired import (
        PairedComparison,
        TaskChange,
        TrialOutcome,
        format_paired,
        paired_comparison,
        paired_to_dict,
    )
    from ace_eval.e2e.preflight import E2EInputError
    from ace_eval.e2e.runner import E2EReport, run_e2e, run_e2e_async
    from ace_eval.e2e.verify import verify_run
    from ace_eval.phases import PhaseRecord

__all__ = [
    "E2EConfig",
    "E2EInputError",
    "E2EReport",
    "PairedComparison",
    "PhaseRecord",
    "ROLES",
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

_EXPORTS: dict[str, str] = {
    "ROLES": "ace_eval.e2e.config",
    "E2EConfig": "ace_eval.e2e.config",
    "Role": "ace_eval.e2e.config",
    "SampleOutcome": "ace_eval.e2e.outcomes",
    "PairedComparison": "ace_eval.e2e.paired",
    "TaskChange": "ace_eval.e2e.paired",
    "TrialOutcome": "ace_eval.e2e.paired",
    "format_paired": "ace_eval.e2e.paired",
    "paired_comparison": "ace_eval.e2e.paired",
    "paired_to_dict": "ace_eval.e2e.paired",
    "E2EInputError": "ace_eval.e2e.preflight",
    "E2EReport": "ace_eval.e2e.runner",
    "PhaseRecord": "ace_eval.phases",
    "run_e2e": "ace_eval.e2e.runner",
    "run_e2e_async": "ace_eval.e2e.runner",
    "verify_run": "ace_eval.e2e.verify",
}
"""Where each lazily imported name of `__all__` lives."""


__getattr__ = lazy_getattr(__name__, _EXPORTS)
