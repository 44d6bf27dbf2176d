"""Benchmark task -> skills matching and the skills HTTP API with the offline default models.

Prints: the machine's load average first (other jobs skew every timing), index build time,
`SkillMatcher.match` p50/p95 (task embedding + recall + field-aware rerank of
a 20-skill shortlist + floor) at 100 and 5,000 skills, requests per second of `ace serve` on
loopback (a bounded httpx load loop from several client threads), and the server's resident memory
with the default models loaded and 5,000 skills indexed.

    python benchmarks/matching.py [--sizes 100 5000] [--queries 300] [--requests 800] [--clients 4]
                                  [--no-http]

Skills are the 55 active skills of tests/data/matching/matching_dev.json plus synthetic ones; tasks are
the dev set's 109 task texts, cycled.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")

sys.path.insert(0, str(Path(__file__).parent))
from matching_dev_eval import DEV_SET, load_dev_set

from ace.retrieval import SkillMatcher, default_embedder
from ace.skillbook import Skillbook

TOOLS = [
    "kubectl",
    "helm",
    "terraform",
    "pytest",
    "pandas",
    "Postgres",
    "Redis",
    "nginx",
    "Playwright",
    "the Gmail API",
    "the calendar API",
    "pip",
    "Docker",
    "GitHub Actions",
    "Airflow",
    "Kafka",
    "the payments API",
    "the refund tool",
    "the booking API",
    "openpyxl",
    "SQLite",
    "systemd",
]
SYMPTOMS = [
    "times out after 30 seconds",
    "returns an empty result",
    "reports a permission error",
    "duplicates rows on retry",
    "silently truncates the input",
    "uses the wrong time zone",
    "fails only in CI",
    "rejects valid credentials",
    "leaks memory under load",
    "returns stale data from a cache",
    "crashes at import",
    "drops the last page of results",
]
CAUSES = [
    "a default limit is too low",
    "the retry is not idempotent",
    "the config is read from the wrong file",
    "an environment variable is missing in that environment",
    "the version pin drifted",
    "the request is sent before the session is ready",
    "the encoding is not UTF-8",
    "a background job holds a lock",
    "pagination stops at the first empty page",
]
KEYWORDS = ["infra", "ci", "data", "api", "auth", "timeouts", "caching", "encoding", "retries", "paging"]


def synthetic_skillbook(size: int, seed: int = 0) -> Skillbook:
    """The dev set's active skills, then synthetic ones up to `size` skills."""
    dev, _, _ = load_dev_set(DEV_SET)
    skillbook = Skillbook()
    for skill in dev.skills()[:size]:
        skillbook.add_skill(skill.section, skill.issue, skill.keywords, insight=skill.insight)
    rng = random.Random(seed)
    while len(skillbook) < size:
        tool, symptom, cause = rng.choice(TOOLS), rng.choice(SYMPTOMS), rng.choice(CAUSES)
        skillbook.add_skill(
            "context",
            f"{tool} {symptom} when {cause}, so the task looks done but the result is wrong.",
            [tool.split()[-1].lower(), *rng.sample(KEYWORDS, 2)],
            insight=f"Check whether {cause} before changing the code around {tool}.",
        )
    return skillbook


def percentile_ms(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q)) * 1000


def bench_match(size: int, tasks: list[str], queries: int) -> None:
    skillbook = synthetic_skillbook(size)
    matcher = SkillMatcher(skillbook, embedder=default_embedder())
    start = time.perf_counter()
    matcher.refresh()
    build = time.perf_counter() - start
    timings, empty = [], 0
    cpu_start = time.process_time()
    for i in range(queries):
        start = time.perf_counter()
        matches = matcher.match(tasks[i % len(tasks)])
        timings.append(time.perf_counter() - start)
        empty += not matches
    cpu_ms = (time.process_time() - cpu_start) / queries * 1000
    print(
        f"match @ {size:>5} skills: p50 {percentile_ms(timings, 50):5.1f} ms  p95 {percentile_ms(timings, 95):5.1f} ms"
        f"  CPU {cpu_ms:4.1f} ms/match  ({queries} queries, {empty} returned [])  index build {build:.1f} s"
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def resident_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_http(size: int, tasks: list[str], requests: int, clients: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "skillbook.json"
        synthetic_skillbook(size).save_to_file(path)
        port = free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from ace.cli import main; raise SystemExit(main())",
                "serve",
                str(path),
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 300
            while True:
                try:
                    httpx.get(f"{base}/openapi.json", timeout=1.0)
                    break
                except httpx.TransportError:
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("ace serve did not come up") from None
                    time.sleep(0.2)
            for route, params_of in [
                ("task", lambda i: {"task": tasks[i % len(tasks)]}),
                ("catalog", lambda i: {}),
            ]:
                per_client = requests // clients
                failures: list[int] = []

                def load(
                    offset: int,
                    per_client: int = per_client,
                    params_of: Any = params_of,
                    failures: list[int] = failures,
                ) -> None:
                    with httpx.Client(base_url=base, timeout=30.0) as client:
                        for i in range(per_client):
                            status = client.get("/memory/skills", params=params_of(offset + i)).status_code
                            if status != 200:
                                failures.append(status)

                threads = [threading.Thread(target=load, args=(n * per_client,)) for n in range(clients)]
                cpu_before = cpu_seconds(server.pid)
                start = time.perf_counter()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                elapsed = time.perf_counter() - start
                served = per_client * clients
                cpu_ms = (cpu_seconds(server.pid) - cpu_before) / served * 1000
                print(
                    f"http @ {size:>5} skills, GET /memory/skills ({route}): "
                    f"{served / elapsed:6.1f} requests/s  ({served} requests, {clients} clients, "
                    f"{len(failures)} non-200; server CPU {cpu_ms:.1f} ms/request, i.e. at most "
                    f"{(os.cpu_count() or 1) * 1000 / cpu_ms:.0f} requests/s on {os.cpu_count()} idle cores)"
                )
            print(f"server resident memory @ {size} skills: {resident_mb(server.pid):.0f} MB")
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 5000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--requests", type=int, default=800)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--no-http", action="store_true", help="time SkillMatcher.match only, not ace serve")
    args = parser.parse_args()
    print(f"load average before start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _, dev_tasks, _ = load_dev_set(DEV_SET)
    tasks = [task["task"] for task in dev_tasks]
    for size in args.sizes:
        bench_match(size, tasks, args.queries)
    for size in [] if args.no_http else args.sizes:
        bench_http(size, tasks, args.requests, args.clients)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
