"""Size of the Reflector's rendering of every recorded tau2 simulation, old versus new.

Usage: python benchmarks/trace_rendering.py [FOLDER]
FOLDER holds tau2 Results files (*.json); default: the recorded runs in tests/data (unpacked into a
temporary folder). Each simulation is loaded as the Reflector gets it
(`load_trace_file`: `{"task", "simulation"}` dicts).

Prints, for the old rendering (indented JSON of the whole trace) and the new one (`render_trace`
before truncation): mean and max size in characters, how many exceed DEFAULT_TRACE_CHAR_LIMIT
(and so would lose their middle), and the ratio of the means.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

from ace.steps import load_trace_file
from ace.traces.rendering import DEFAULT_TRACE_CHAR_LIMIT, render_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from data_files import unpack_recorded


def report(label: str, sizes: dict[str, int]) -> None:
    longest = max(sizes, key=sizes.__getitem__)
    over = sum(size > DEFAULT_TRACE_CHAR_LIMIT for size in sizes.values())
    print(
        f"{label}: mean {statistics.mean(sizes.values()):>8,.0f}  max {sizes[longest]:>8,} ({longest})"
        f"  over {DEFAULT_TRACE_CHAR_LIMIT:,}: {over}"
    )


def main() -> None:
    if len(sys.argv) > 1:
        measure(Path(sys.argv[1]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        measure(unpack_recorded(Path(tmp)))


def measure(folder: Path) -> None:
    paths = sorted(folder.glob("*.json"))
    if not paths:
        raise SystemExit(f"no *.json in {folder}")
    old: dict[str, int] = {}
    new: dict[str, int] = {}
    for path in paths:
        for trace in load_trace_file(path):
            name = f"{path.name} task {trace['task']['id']}"
            old[name] = len(json.dumps(trace, indent=2, ensure_ascii=False, default=str))
            new[name] = len(render_trace(trace, max_chars=sys.maxsize))
    print(f"{len(new)} simulations in {len(paths)} files of {folder}")
    report("old (indented JSON)", old)
    report("new (render_trace) ", new)
    print(f"ratio of means old/new: {statistics.mean(old.values()) / statistics.mean(new.values()):.2f}x")


if __name__ == "__main__":
    main()
