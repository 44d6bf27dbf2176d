"""The phases of an `ace-eval e2e` run (learning, each benchmark arm): their wall time and the
model usage of each role within them."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ace.models import UsageMeter, UsageTotals
from ace_eval.e2e.config import Role

__all__ = ["PhaseRecord", "phase"]


@dataclasses.dataclass(frozen=True)
class PhaseRecord:
    """Wall time and model usage of one phase of the run."""

    name: str
    """`learning` or `benchmark: baseline` / `benchmark: with skills`."""
    seconds: float
    """Wall-clock duration."""
    usage: dict[str, UsageTotals]
    """Per role that made requests in the phase: requests, tokens, cost."""


@contextmanager
def phase(name: str, meters: Mapping[Role, UsageMeter], phases: list[PhaseRecord]) -> Iterator[None]:
    """Record the wall time and per-role usage of the enclosed phase into `phases`."""
    started = time.perf_counter()
    before = {role: meter.snapshot() for role, meter in meters.items()}
    try:
        yield
    finally:
        usage = {role: meter.snapshot() - before[role] for role, meter in meters.items()}
        active = {str(role): totals for role, totals in usage.items() if totals.requests or totals.failed_requests}
        phases.append(PhaseRecord(name, time.perf_counter() - started, active))
