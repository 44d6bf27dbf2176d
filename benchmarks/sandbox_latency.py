"""Sandbox start and `print(1)` latency: this tree against an earlier commit, side by side in one run.

    python benchmarks/sandbox_latency.py [--base REV] [--rounds 5] [--starts 10] [--calls 100]

The `ace` package of `--base` (default: where this branch left main, `git merge-base HEAD main`; pass
e.g. `--base 6d9af35` once the branch is merged) is exported with `git archive` into a temporary
folder. Each round measures both trees in turn, each in a fresh interpreter (base first in even
rounds, this tree first in odd ones, so that a load spike does not favour one side): `--starts`
sandbox starts (`Sandbox().start()`, a worker process confined and answering) and `--calls`
`execute("print(1)")` on one started sandbox. Prints the machine's load average first (other jobs
skew every timing), then the median of each figure and the ratio this tree / base.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEASURE = """
import json, sys, time
from ace.agentic.sandbox import Sandbox
starts, calls = int(sys.argv[1]), int(sys.argv[2])
start_s = []
for _ in range(starts):
    began = time.perf_counter()
    box = Sandbox()
    box.start()
    start_s.append(time.perf_counter() - began)
    box.close()
call_s = []
with Sandbox() as box:
    box.start()
    for _ in range(calls):
        began = time.perf_counter()
        assert box.execute("print(1)").stdout == "1\\n"
        call_s.append(time.perf_counter() - began)
print(json.dumps({"start_s": start_s, "call_s": call_s}))
"""


def export_package(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "ace"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def measure(root: Path, starts: int, calls: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(starts), str(calls)],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, list[float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="the commit to compare with (default: git merge-base HEAD main)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    base = (
        args.base
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    samples: dict[str, dict[str, list[float]]] = {
        "base": {"start_s": [], "call_s": []},
        "this": {"start_s": [], "call_s": []},
    }
    with tempfile.TemporaryDirectory(prefix="ace-bench-base-") as folder:
        export_package(base, Path(folder))
        trees = {"base": Path(folder), "this": REPO}
        for round_number in range(args.rounds):
            order = ("base", "this") if round_number % 2 == 0 else ("this", "base")
            for name in order:
                for key, values in measure(trees[name], args.starts, args.calls).items():
                    samples[name][key].extend(values)
    print(
        f"base {base[:12]} against this working tree; {len(samples['base']['start_s'])} starts and "
        f"{len(samples['base']['call_s'])} calls each"
    )
    print(f"{'figure':<24}{'base':>10}{'this':>10}{'this/base':>11}")
    for key, what in (("start_s", "start"), ("call_s", "print(1)")):
        for statistic, compute in (("median", statistics.median), ("p90", _p90)):
            before, after = compute(samples["base"][key]) * 1000, compute(samples["this"][key]) * 1000
            print(f"{f'{what} {statistic} (ms)':<24}{before:>10.2f}{after:>10.2f}{after / before:>11.2f}")


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


if __name__ == "__main__":
    main()
