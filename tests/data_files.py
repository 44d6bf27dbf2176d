"""The data the tests, benchmarks and docs examples read: `tests/data/` (sources and licences in its
README). Large files are kept gzipped; `unpack_recorded` / `unpack` write them as plain files into a
folder the caller owns (a test's temporary folder), since the loaders under test read plain JSON.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

__all__ = ["DATA_DIR", "RECORDED_RUNS", "unpack", "unpack_recorded"]

DATA_DIR = Path(__file__).resolve().parent / "data"
"""`tests/data/` in this repository."""

RECORDED_RUNS = (
    "aide_claude-sonnet-4-5_airline_50_1trial.json",
    "langchain_gpt-oss-120b_airline_50_1trial.json",
    "sierra_gpt-4.1_airline_test20_1trial.json",
    "tau2trace_gpt-4.1-mini_airline_1sim.json",
)
"""The recorded tau2 airline runs of real LLM agents, by their plain-JSON file names."""


def unpack(relative: str, into: Path) -> Path:
    """Write `tests/data/<relative>` (stored as is, or as `<relative>.gz`) to `into/<file name>`.

    Returns the written path. Raises FileNotFoundError when neither form exists.
    """
    plain = DATA_DIR / relative
    target = into / plain.name
    if plain.is_file():
        shutil.copyfile(plain, target)
        return target
    with gzip.open(plain.with_name(plain.name + ".gz"), "rb") as packed, target.open("wb") as out:
        shutil.copyfileobj(packed, out)
    return target


def unpack_recorded(into: Path) -> Path:
    """Write the four recorded tau2 runs (`RECORDED_RUNS`) as plain JSON into `into`; returns `into`."""
    into.mkdir(parents=True, exist_ok=True)
    for name in RECORDED_RUNS:
        unpack(f"tau2/recorded/{name}", into)
    return into
