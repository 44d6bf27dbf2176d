"""Load `ace serve` on 127.0.0.1 with a fixed number of clients for a fixed time, and print req/s,
p50 / p99 latency and the server's CPU per request, for GET and POST matching requests.

    python benchmarks/http_load.py [--baseline] [--clients 8] [--duration 20] [--repeated 0.5]
                                   [--workers 2] [--skills 5000 | --skillbook PATH] [--single 200]

With `--baseline`, each measurement is made twice in the same run, first against `ace serve
--task-cache 0 --no-batching` (every task embedded, one by one, in one process: the server before
issue 25) and then against `ace serve --workers N` with the task cache and micro-batching, same
clients, same duration, same sequence of task texts; a last table prints the ratios. The load client
is a separate process (threads with one keep-alive connection each), so it shares the machine's
cores with the server: its CPU per request is printed too, with the load average before each run.

Task texts: `--repeated` of the requests (default half) draw from 32 task texts of the matching dev
set, so they repeat; the others are fresh, a dev task with a unique ticket number, never sent before.
Both servers get the same sequence, and the answers both gave for the same request are compared
byte for byte (the `identical` line). `--single N` also times N requests from one client (the
latency of a request on an idle server). The skillbook is `--skillbook PATH` (yours: a file with its
`.embeddings.npz` sidecar, so the servers start without embedding it) or, by default, the dev set's
skills plus synthetic ones up to `--skills`, built once with its vectors under results/http_load/.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")

sys.path.insert(0, str(Path(__file__).parent))

REPO = Path(__file__).resolve().parents[1]
HOT_TASKS = 32
"""How many distinct task texts the repeated requests draw from."""
START_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class RunResult:
    """One load run against one server on one route."""

    requests: int
    seconds: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms: float
    client_cpu_ms: float
    failures: int
    load_average: float
    answers: dict[str, str]

    @property
    def rate(self) -> float:
        return self.requests / self.seconds


def task_texts(route: str, count: int, repeated: float, seed: int) -> list[str]:
    """The `count` task texts one run sends, in order: a `repeated` share from the hot set, the rest
    fresh (a dev task with a ticket number unique to this route and position)."""
    from matching_dev_eval import DEV_SET, load_dev_set

    _, dev_tasks, _ = load_dev_set(DEV_SET)
    tasks = [task["task"] for task in dev_tasks]
    hot = tasks[:HOT_TASKS]
    rng = random.Random(seed)
    texts = []
    for position in range(count):
        if rng.random() < repeated:
            texts.append(rng.choice(hot))
        else:
            texts.append(f"{rng.choice(tasks)} (ticket {route}-{seed}-{position})")
    return texts


# ---- the client process ---------------------------------------------------------------------


def client_main(config: dict) -> None:
    """Run one load: `clients` threads, one connection each, send the texts in order (thread k
    takes the next unsent text) until `duration` seconds pass; print the results as one JSON line."""
    texts: list[str] = config["texts"]
    port, route, deadline_s, limit = config["port"], config["route"], config["duration"], 3
    cursor = iter(range(len(texts)))
    cursor_lock = threading.Lock()
    latencies: list[float] = []
    answers: dict[str, str] = {}
    failures = [0]
    stop_at = time.perf_counter() + deadline_s

    def worker() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.perf_counter() < stop_at:
            with cursor_lock:
                index = next(cursor, None)
            if index is None:
                break
            text = texts[index]
            start = time.perf_counter()
            if route == "GET":
                query = urllib.parse.urlencode({"task": text, "limit": limit})
                connection.request("GET", f"/memory/skills?{query}")
            else:
                body = json.dumps({"task": text, "limit": limit})
                connection.request(
                    "POST", "/memory/skills/match", body=body, headers={"Content-Type": "application/json"}
                )
            response = connection.getresponse()
            payload = response.read()
            latencies.append(time.perf_counter() - start)
            if response.status != 200:
                failures[0] += 1
            answers[text] = hashlib.sha256(payload).hexdigest()
        connection.close()

    cpu_start = time.process_time()
    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(config["clients"])]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    print(
        json.dumps(
            {
                "latencies": latencies,
                "seconds": elapsed,
                "failures": failures[0],
                "client_cpu_s": time.process_time() - cpu_start,
                "answers": answers,
            }
        )
    )


# ---- the server -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_cpu_seconds(pid: int) -> float:
    """User + system CPU the process and all its descendants (uvicorn's workers) have used so far."""
    ticks = 0
    by_parent: dict[int, list[int]] = {}
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(entry.name)] = fields
        by_parent.setdefault(int(fields[1]), []).append(int(entry.name))
    pending = [pid]
    while pending:
        current = pending.pop()
        if current in stats:
            ticks += int(stats[current][11]) + int(stats[current][12])
        pending.extend(by_parent.get(current, []))
    return ticks / os.sysconf("SC_CLK_TCK")


class Server:
    """`ace serve` in its own process, started with `flags`, stopped with `stop()`."""

    def __init__(self, skillbook: Path, flags: list[str]) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from ace.cli import main; sys.exit(main())",
                "serve",
                str(skillbook),
                "--port",
                str(self.port),
                *flags,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                connection.request("GET", "/memory/skills?task=warm+up")
                if connection.getresponse().status == 200:
                    connection.close()
                    break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"ace serve {' '.join(flags)} did not come up")
            time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_load(server: Server, route: str, texts: list[str], clients: int, duration: float) -> RunResult:
    config = {"texts": texts, "port": server.port, "route": route, "clients": clients, "duration": duration}
    load_average = os.getloadavg()[0]
    cpu_before = tree_cpu_seconds(server.process.pid)
    client = subprocess.run(
        [sys.executable, __file__, "--client"],
        input=json.dumps(config),
        capture_output=True,
        text=True,
        check=True,
    )
    cpu = tree_cpu_seconds(server.process.pid) - cpu_before
    result = json.loads(client.stdout)
    latencies = result["latencies"]
    count = len(latencies)
    return RunResult(
        requests=count,
        seconds=result["seconds"],
        p50_ms=float(np.percentile(latencies, 50)) * 1000,
        p99_ms=float(np.percentile(latencies, 99)) * 1000,
        server_cpu_ms=cpu / count * 1000,
        client_cpu_ms=result["client_cpu_s"] / count * 1000,
        failures=result["failures"],
        load_average=load_average,
        answers=result["answers"],
    )


# ---- the skillbook ----------------------------------------------------------------------------


def default_skillbook(size: int) -> Path:
    """The dev set's skills plus synthetic ones up to `size`, saved with their match vectors (built
    once: embedding 5,000 skills takes about 35 s)."""
    from matching import synthetic_skillbook

    from ace.retrieval import SkillMatcher, default_embedder
    from ace.skillbook import Skillbook

    path = REPO / "results" / "http_load" / f"skillbook-{size}.json"
    if not path.exists():
        print(f"building {path.relative_to(REPO)} ({size} skills with their vectors) ...", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        synthetic_skillbook(size).save_to_file(path)
        with Skillbook.locked(path) as book:
            SkillMatcher(book, embedder=default_embedder()).refresh()
    return path


# ---- the report ---------------------------------------------------------------------------------


def line(label: str, result: RunResult) -> str:
    return (
        f"{label:<34} {result.rate:7.1f} req/s  p50 {result.p50_ms:6.1f} ms  p99 {result.p99_ms:6.1f} ms  "
        f"server CPU {result.server_cpu_ms:5.2f} ms/req  client CPU {result.client_cpu_ms:4.2f} ms/req  "
        f"({result.requests} requests, {result.failures} non-200, load {result.load_average:.2f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also measure ace serve without the task cache and batching, in one process, first",
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients, one connection each (default 8)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per load run (default 20)")
    parser.add_argument(
        "--repeated", type=float, default=0.5, help="share of requests whose task text repeats (0 to 1, default 0.5)"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="ace serve --workers for the measured server (default 2)"
    )
    parser.add_argument("--skills", type=int, default=5000, help="size of the default synthetic skillbook")
    parser.add_argument("--skillbook", type=Path, help="serve this skillbook file instead (with its .embeddings.npz)")
    parser.add_argument(
        "--single",
        type=int,
        default=200,
        help="requests from a single client, for the latency of one request (0: skip)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(json.loads(sys.stdin.read()))
        return 0
    if not 0 <= args.repeated <= 1 or args.clients < 1 or args.duration <= 0 or args.workers < 1:
        parser.error("--repeated is within 0..1; --clients, --duration and --workers are positive")
    skillbook = args.skillbook if args.skillbook is not None else default_skillbook(args.skills)
    modes = [("baseline", ["--task-cache", "0", "--no-batching"])] if args.baseline else []
    modes.append((f"cache+batching, {args.workers} worker(s)", ["--workers", str(args.workers)]))
    # Generous: no run sends more than 2,000 requests a second.
    count = int(args.duration * 2000) + 1
    routes = {route: task_texts(route, count, args.repeated, args.seed) for route in ("GET", "POST")}
    single = task_texts("single", max(args.single, 1), args.repeated, args.seed)
    print(
        f"{skillbook.name}: {args.clients} clients x {args.duration:g} s per run, {args.repeated:.0%} repeated "
        f"task texts; client in its own process on the same {os.cpu_count()} cores"
    )
    results: dict[tuple[str, str], RunResult] = {}
    for mode, flags in modes:
        server = Server(skillbook, flags)
        try:
            for route, texts in routes.items():
                results[mode, route] = run_load(server, route, texts, args.clients, args.duration)
                print(line(f"{mode}: {route}", results[mode, route]), flush=True)
            if args.single:
                results[mode, "single"] = run_load(server, "GET", single[: args.single], 1, args.duration)
                print(line(f"{mode}: GET, 1 client", results[mode, "single"]), flush=True)
        finally:
            server.stop()
    if args.baseline:
        (base, _), (new, _) = modes
        print("\nratios, measured vs baseline (same run):")
        for route in ("GET", "POST", "single"):
            if (base, route) not in results:
                continue
            before, after = results[base, route], results[new, route]
            shared = before.answers.keys() & after.answers.keys()
            same = sum(before.answers[text] == after.answers[text] for text in shared)
            print(
                f"  {route:<6} req/s x{after.rate / before.rate:5.2f}  p50 {before.p50_ms:6.1f} -> "
                f"{after.p50_ms:6.1f} ms  p99 {before.p99_ms:6.1f} -> {after.p99_ms:6.1f} ms  "
                f"server CPU/req {before.server_cpu_ms:5.2f} -> {after.server_cpu_ms:5.2f} ms  "
                f"identical answers {same}/{len(shared)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
