"""Re-grade a tau2 Results file with our evaluator and compare with the rewards it recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ace.untrusted import quote
from ace_eval.tau2.errors import UnknownTaskError
from ace_eval.tau2.evaluator import evaluate_simulation
from ace_eval.tau2.results import Results, RewardInfo
from ace_eval.tau2.tasks import Task

__all__ = ["RegradeReport", "RegradedSimulation", "regrade_results"]


@dataclass(frozen=True)
class RegradedSimulation:
    """One simulation's recorded grade next to ours."""

    task_id: str
    """The task simulated."""
    trial: int | None
    """Trial index, as recorded."""
    termination_reason: str
    """How the run ended."""
    computed: RewardInfo
    """Our grade."""
    recorded: RewardInfo | None
    """The grade stored in the file, if any."""

    @property
    def graded(self) -> bool:
        """True when the file records a db_check to compare with."""
        return self.recorded is not None and self.recorded.db_check is not None

    @property
    def agrees(self) -> bool:
        """True when graded and both db_match and reward equal the recorded ones."""
        recorded, computed = self.recorded, self.computed
        if recorded is None or recorded.db_check is None or computed.db_check is None:
            return False
        return computed.db_check.db_match == recorded.db_check.db_match and computed.reward == recorded.reward


@dataclass(frozen=True)
class RegradeReport:
    """All re-graded simulations of one Results file."""

    simulations: tuple[RegradedSimulation, ...]
    """In file order."""

    @property
    def graded(self) -> int:
        """Simulations with a recorded db_check."""
        return sum(sim.graded for sim in self.simulations)

    @property
    def agreeing(self) -> int:
        """Graded simulations whose db_match and reward we reproduce."""
        return sum(sim.agrees for sim in self.simulations)


def regrade_results(results: Results, tasks: Sequence[Task] | None = None) -> RegradeReport:
    """Grade every simulation of `results` against `tasks` (default: the tasks embedded in the file).

    Raises `UnknownTaskError` naming the first simulation whose task id is not among the tasks.
    """
    by_id = {task.id: task for task in (results.tasks if tasks is None else tasks)}
    regraded = []
    for simulation in results.simulations:
        task = by_id.get(simulation.task_id)
        if task is None:
            raise UnknownTaskError(
                f"simulation {quote(simulation.id)} refers to task {quote(simulation.task_id)}, which is not among the "
                f"{len(by_id)} tasks given; pass the task set it was run with"
            )
        regraded.append(
            RegradedSimulation(
                task_id=simulation.task_id,
                trial=simulation.trial,
                termination_reason=simulation.termination_reason,
                computed=evaluate_simulation(task, simulation.messages, simulation.termination_reason),
                recorded=simulation.reward_info,
            )
        )
    return RegradeReport(simulations=tuple(regraded))
