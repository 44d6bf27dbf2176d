"""Trace and SKILL.md loaders under attack (issue 23, class 8): this tree against an earlier commit,
side by side in one run.

    python benchmarks/loaders.py [--base REV] [--mib 20] [--spans 8000]

The `ace` package of `--base` (default: where this branch left main, `git merge-base HEAD main`;
once the branch is merged pass the main it was measured against, `--base b1c70e3`) is exported
with `git archive` into a temporary folder. Every figure is measured in a fresh interpreter per tree, on
files written once beforehand:

- OpenTelemetry span files of `--spans` spans: one OTel trace of that many root agent runs (the
  issue's 8,000-span file), and one run over a chain of that many spans: `load_trace_file` seconds;
- JSON trace files of `--mib` MiB: tiny objects (`[{"a":1},...]`, the issue's attack), the densest
  file this tree still accepts (one object of tiny distinct keys), and a real recorded tau2 Results
  file repeated to that size: `trace_locations` (the first step of `ace learn`, which parses and
  caches the file) and, for a file of one trace, `LoadTracesStep` (which copies that trace out of
  the cache): peak RSS growth / file size, and the outcome;
- a SKILL.md whose front matter has as many keys as its 64 KiB allow: `parse_skill_md` seconds.

Prints the machine's load average first (other jobs skew timings; memory figures do not move),
then one line per figure: base, this tree, and the ratio this / base.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "tests" / "data" / "tau2" / "recorded" / "aide_claude-sonnet-4-5_airline_50_1trial.json.gz"
MEASURE = """
import json, resource, sys, time
from pathlib import Path
kind, path = sys.argv[1], Path(sys.argv[2])
from ace.steps import load_trace_file, trace_locations
from ace.skillbook.agent_skills import parse_skill_md
rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
before, began = rss(), time.perf_counter()
try:
    if kind == "spans":
        outcome = f"{len(load_trace_file(path))} traces"
    elif kind == "skill_md":
        parse_skill_md(path.read_text(), "big", str(path))
        outcome = "parsed"
    else:
        locations = trace_locations([path])
        outcome = f"{len(locations)} traces"
        if len(locations) == 1:
            from ace.steps import ACEStepContext, LoadTracesStep
            LoadTracesStep()(ACEStepContext(sample=locations[0]))
except Exception as error:
    outcome = f"refused ({type(error).__name__})"
print(json.dumps({"seconds": time.perf_counter() - began, "growth": rss() - before, "outcome": outcome}))
"""


def export_package(rev: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "ace"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def measure(root: Path, kind: str, path: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, kind, str(path)], cwd=root, env=env, check=True, capture_output=True, text=True
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def span_file(path: Path, spans: int, *, chain: bool) -> Path:
    rows = []
    for number in range(spans):
        span = {"traceId": "ab", "spanId": f"{number + 1:x}", "name": "invoke_agent a"}
        if chain and number:
            span.update(name="step", parentSpanId=f"{number:x}")
        rows.append(span)
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": rows}]}]}, separators=(",", ":")) + "\n")
    return path


def repeated(path: Path, item: str, size: int) -> Path:
    """A JSON array of `item` repeated to about `size` bytes, written in pieces."""
    count = size // (len(item) + 1)
    with path.open("w") as file:
        file.write("[")
        for start in range(0, count, 100_000):
            file.write(",".join([item] * min(100_000, count - start)) + ("," if start + 100_000 < count else ""))
        file.write("]")
    return path


def keyed(path: Path, size: int) -> Path:
    """One object of distinct keys with tiny values (`{"0":0,"1":0,...}`) of about `size` bytes: the
    densest file this tree accepts (its parsed form is about 24x its size, the estimate too)."""
    with path.open("w") as file:
        file.write("{")
        written, number = 1, 0
        while written < size - 2**20:
            piece = ",".join(f'"{key}":0' for key in range(number, number + 100_000))
            file.write(("," if number else "") + piece)
            written += len(piece) + 1
            number += 100_000
        file.write("}")
    return path


def results_file(path: Path, size: int) -> Path:
    document = json.loads(gzip.decompress(RECORDED.read_bytes()))
    simulations = document["simulations"]
    copies = max(1, size // len(json.dumps(document)))
    document["simulations"] = [
        dict(simulation, id=f"{simulation['id']}-{copy}") for copy in range(copies) for simulation in simulations
    ]
    path.write_text(json.dumps(document))
    return path


def skill_md_file(path: Path) -> Path:
    lines = ["name: big", "description: A skill with very many front matter keys."]
    number = 0
    while sum(len(line) + 1 for line in lines) < 64 * 1024 - 32:
        lines.append(f"k{number}: v")
        number += 1
    path.write_text("---\n" + "\n".join(lines) + "\n---\n\nBody.\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="the commit to compare with (default: git merge-base HEAD main)")
    parser.add_argument("--mib", type=int, default=20, help="size of the JSON trace files (default 20; the issue: 100)")
    parser.add_argument("--spans", type=int, default=8000, help="spans of the OpenTelemetry files (default 8000)")
    args = parser.parse_args()
    base = (
        args.base
        or subprocess.run(
            ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs; base {base[:10]}")
    size = args.mib * 2**20 - 2**16  # under the 100 MiB cap of a trace file at --mib 100
    with tempfile.TemporaryDirectory(prefix="ace-bench-loaders-") as folder:
        work = Path(folder)
        export_package(base, work / "base")
        trees = {"base": work / "base", "this": REPO}
        cases = [
            (
                "spans",
                f"OTel file, {args.spans:,} root runs: seconds",
                span_file(work / "runs.jsonl", args.spans, chain=False),
            ),
            (
                "spans",
                f"OTel file, chain of {args.spans:,} spans: seconds",
                span_file(work / "chain.jsonl", args.spans, chain=True),
            ),
            ("json", f"{args.mib} MiB of tiny objects: peak RSS / size", repeated(work / "tiny.json", '{"a":1}', size)),
            (
                "json",
                f"{args.mib} MiB, one object of tiny distinct keys: peak RSS / size",
                keyed(work / "keys.json", size),
            ),
            (
                "json",
                f"{args.mib} MiB tau2 Results (recorded, repeated): peak RSS / size",
                results_file(work / "results.json", size),
            ),
            ("skill_md", "SKILL.md with a 64 KiB front matter of keys: seconds", skill_md_file(work / "SKILL.md")),
        ]
        print(f"{'figure':64} {'base':>18} {'this tree':>18} {'this/base':>10}")
        for kind, label, path in cases:
            results = {name: measure(root, kind, path) for name, root in trees.items()}
            if kind == "json":
                cells = {name: f"{r['growth'] / path.stat().st_size:.1f}x" for name, r in results.items()}  # type: ignore[operator]
                ratio = results["this"]["growth"] / max(results["base"]["growth"], 1)  # type: ignore[operator]
            else:
                cells = {name: f"{r['seconds']:.3f} s" for name, r in results.items()}
                ratio = results["this"]["seconds"] / results["base"]["seconds"]  # type: ignore[operator]
            print(f"{label:64} {cells['base']:>18} {cells['this']:>18} {ratio:>9.3f}x")
            print(f"{'':64} {str(results['base']['outcome'])[:18]:>18} {str(results['this']['outcome'])[:18]:>18}")


if __name__ == "__main__":
    main()
