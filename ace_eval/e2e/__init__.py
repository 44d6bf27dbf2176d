"""`ace-eval e2e`: learn a skillbook from tau2-bench airline traces, then benchmark it."""

from ace_eval.e2e.config import E2EConfig
from ace_eval.e2e.runner import E2EReport, run_e2e, run_e2e_async, skills_block

__all__ = ["E2EConfig", "E2EReport", "run_e2e", "run_e2e_async", "skills_block"]
