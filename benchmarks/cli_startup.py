"""How fast the command lines answer the cheap cases, as ratios to `python3 -c pass` measured in one run.

Usage: python benchmarks/cli_startup.py [--runs 7]

Each command runs `--runs` times in a fresh process (median wall time); the target (issue 21) is
within 5x of `python3 -c pass` for `ace-eval e2e --help`, `ace skillbook show`, a bad flag and a
missing key. Provider keys are removed from the environment for the missing-key cases.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ace.skillbook import Skillbook

REAL = "openai/gpt-4.1-mini"


def _commands(folder: Path) -> dict[str, list[str]]:
    book = Skillbook()
    for n in range(20):
        book.add_skill("context", f"Issue number {n}.", ["k"], "Do this.")
    book.set_embeddings({skill.id: [1.0, 0.0] for skill in book.skills()}, model="m")
    book.save_to_file(folder / "skillbook.json")
    (folder / "trace.json").write_text("{}")
    bin_dir = Path(sys.executable).parent
    ace, ace_eval = str(bin_dir / "ace"), str(bin_dir / "ace-eval")
    return {
        "python3 -c pass": [sys.executable, "-c", "pass"],
        "ace --help": [ace, "--help"],
        "ace-eval e2e --help": [ace_eval, "e2e", "--help"],
        "ace skillbook show": [ace, "skillbook", "show", str(folder / "skillbook.json")],
        "ace-eval e2e --bad-flag": [ace_eval, "e2e", "--bad-flag"],
        "ace learn --epochs x (bad value)": [
            ace,
            "learn",
            "t",
            "--skillbook",
            "s",
            "--reflector-model",
            "x",
            "--skill-manager-model",
            "x",
            "--epochs",
            "x",
        ],
        "ace-eval e2e, missing key": [
            ace_eval,
            "e2e",
            *(arg for role in ("agent", "user", "reflector", "skill-manager") for arg in (f"--{role}-model", REAL)),
        ],
        "ace learn, missing key": [
            ace,
            "learn",
            str(folder / "trace.json"),
            "--skillbook",
            str(folder / "new.json"),
            "--reflector-model",
            REAL,
            "--skill-manager-model",
            REAL,
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    environment = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    with tempfile.TemporaryDirectory() as tmp:
        commands = _commands(Path(tmp))
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):  # interleaved: a change of load shifts every command alike
            for name, command in commands.items():
                start = time.perf_counter()
                subprocess.run(command, capture_output=True, env=environment, check=False)
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["python3 -c pass"])
    print(f"{'command':36} {'median':>8} {'ratio':>6}   (load average {os.getloadavg()[0]:.1f})")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:36} {median * 1000:6.0f} ms {median / base:5.1f}x")


if __name__ == "__main__":
    main()
