"""`measure_phase`: the wall time and per-role model usage of one phase of an evaluation run.

Shared by `ace-eval e2e` and `ace-eval bench`: each role's model is `metered` into its own
`UsageMeter`, and a phase records the difference of the meters' snapshots around it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar

from ace.models import UsageMeter, UsageTotals

__all__ = ["PhaseRecord", "measure_phase"]

RoleName = TypeVar("RoleName", bound=str)


@dataclasses.dataclass(frozen=True)
class PhaseRecord:
    """Wall time and model usage of one phase of the run."""

    name: str
    """What the phase did, e.g. `learning` or `benchmark: baseline`."""
    seconds: float
    """Wall-clock duration."""
    usage: dict[str, UsageTotals]
    """Per role that made requests in the phase: requests, tokens, cost."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: name, seconds (rounded to ms) and usage per role."""
        return {
            "name": self.name,
            "seconds": round(self.seconds, 3),
            "usage": {role: totals.to_dict() for role, totals in self.usage.items()},
        }


@contextmanager
def measure_phase(name: str, meters: Mapping[RoleName, UsageMeter], phases: list[PhaseRecord]) -> Iterator[None]:
    """Append the `PhaseRecord` of the enclosed block to `phases` (also when it raises); roles
    whose meter recorded no request in it are left out."""
    started = time.perf_counter()
    before = {role: meter.snapshot() for role, meter in meters.items()}
    try:
        yield
    finally:
        usage = {role: meter.snapshot() - before[role] for role, meter in meters.items()}
        active = {str(role): totals for role, totals in usage.items() if totals.requests or totals.failed_requests}
        phases.append(PhaseRecord(name, time.perf_counter() - started, active))
