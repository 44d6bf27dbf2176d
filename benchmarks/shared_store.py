"""Several writer processes and several `ace serve` replicas sharing one PostgreSQL skillbook.

Usage: python benchmarks/shared_store.py [--writers 4] [--mutations 100] [--replicas 2]
           [--probe-every 5] [--poll-interval 0.002] [--quiet-markers 20]

Starts a throwaway PostgreSQL server (`TempPostgres` from tests/postgres/pg_server.py: initdb into a
temporary folder, 127.0.0.1, a free port, fsync off), seeds a skillbook with a few skills, starts
`--replicas` real `ace serve postgresql://...` processes on free ports of 127.0.0.1, then runs
`--writers` processes that each make `--mutations` mutations through `Skillbook.locked(url)` (one
transaction each): a rotating mix of `tag_skill`, `add_skill` and `update_skill` on the seed skills
and, every `--probe-every`-th mutation, a marker: `tag_skill(probe, 0)`, whose resulting
`neutral_count` and commit time (the moment the writer's `with` block returned) the writer records.
One thread per replica polls `GET /memory/skills/{probe}` every `--poll-interval` seconds; a
marker's lag is the time from its commit to the first answer whose `neutral_count` reaches it.
After the writers finish, `--quiet-markers` more markers are written 50 ms apart from the main
process: the lag of the path alone, with no other write in flight.

Prints mutations/s (all writers, wall time from the common start to the last commit), the latency
of one locked mutation, lost updates (expected counters, provenance records and added skills
against the final skillbook: must be 0, ids unique and contiguous), replica lag p50/p99/max under
load and when quiet, and how long the replicas took to serve the final state. Exits 1 on a lost update. Needs
the `postgres` and `server` extras and
the PostgreSQL binaries (initdb, pg_ctl); exits 2 saying what is missing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from postgres.pg_server import TempPostgres, missing_binaries

if TYPE_CHECKING:
    from ace.skillbook import Skillbook

SEEDS = 5
PROBE_ISSUE = "The probe skill: replicas are polled for its neutral counter."


def _writer(
    url: str,
    worker: int,
    mutations: int,
    probe_every: int,
    seeds: list[str],
    probe: str,
    ready: multiprocessing.Queue,
    go: multiprocessing.Event,
    results: multiprocessing.Queue,
) -> None:
    from ace.skillbook import InsightSource, Skillbook

    Skillbook.load_from_file(url)  # connect (and check the schema) before the clock starts
    ready.put(worker)
    go.wait()
    tags: dict[str, list[str]] = {}
    updates: dict[str, list[str]] = {}
    added: list[str] = []
    markers: list[tuple[int, float]] = []
    latencies: list[float] = []
    for step in range(mutations):
        trace = f"{worker}-{step}"
        source = InsightSource(source_system="bench", trace_id=trace)
        target = seeds[(worker + step) % len(seeds)]
        start = time.perf_counter()
        if step % probe_every == probe_every - 1:
            with Skillbook.locked(url) as skillbook:
                count = skillbook.tag_skill(probe, 0).neutral_count
            markers.append((count, time.time()))
        elif step % 3 == 0:
            with Skillbook.locked(url) as skillbook:
                skillbook.tag_skill(target, 1, insight_source=source)
            tags.setdefault(target, []).append(trace)
        elif step % 3 == 1:
            issue = f"Issue {trace}: the agent retries a refused call."
            with Skillbook.locked(url) as skillbook:
                skillbook.add_skill(
                    "context", issue, ["bench", f"w{worker}"], "Stop after the refusal.", insight_source=source
                )
            added.append(issue)
        else:
            with Skillbook.locked(url) as skillbook:
                skillbook.update_skill(target, insight=f"Insight revised by {trace}.", insight_source=source)
            updates.setdefault(target, []).append(trace)
        latencies.append(time.perf_counter() - start)
    results.put(
        {
            "worker": worker,
            "tags": tags,
            "updates": updates,
            "added": added,
            "markers": markers,
            "latencies": latencies,
            "end": time.time(),
        }
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Replica:
    """One `ace serve URL` process and a thread polling it for the probe skill's neutral counter."""

    def __init__(self, url: str, log: Path) -> None:
        self.port = _free_port()
        self.log = log
        ace = shutil.which("ace") or str(Path(sys.executable).parent / "ace")
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [ace, "serve", url, "--port", str(self.port)], stdout=out, stderr=subprocess.STDOUT
            )
        self.seen: dict[int, float] = {}
        """neutral_count value -> when this replica's answer first reached it."""
        self.polls = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def get(self, path: str, conn: http.client.HTTPConnection | None = None) -> tuple[int, bytes]:
        conn = conn or http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if self.get("/memory/skills")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        tail = self.log.read_text(errors="replace")[-2000:]
        raise SystemExit(f"ace serve on port {self.port} did not come up:\n{tail}")

    def start_polling(self, probe: str, interval: float) -> None:
        self._thread = threading.Thread(target=self._poll, args=(probe, interval), daemon=True)
        self._thread.start()

    def _poll(self, probe: str, interval: float) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        highest = 0
        while not self._stop.is_set():
            status, body = self.get(f"/memory/skills/{probe}", conn)
            now = time.time()
            self.polls += 1
            count = json.loads(body)["neutral_count"] if status == 200 else 0
            for value in range(highest + 1, count + 1):
                self.seen[value] = now
            highest = max(highest, count)
            time.sleep(interval)
        conn.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _converge(replicas: list[Replica], final: Skillbook, markers: int, timeout: float = 60.0) -> float:
    """Seconds until every replica serves `final`'s catalog and has shown `markers` markers."""
    start = time.time()
    for replica in replicas:
        conn = http.client.HTTPConnection("127.0.0.1", replica.port, timeout=10)
        while True:
            status, body = replica.get("/memory/skills", conn)
            if (
                status == 200
                and len(json.loads(body)) == len(final.skills())
                and max(replica.seen, default=0) >= markers
            ):
                break
            if time.time() - start > timeout:
                raise SystemExit(f"the replica on port {replica.port} did not serve the final state in {timeout:g} s")
            time.sleep(0.01)
        conn.close()
    return time.time() - start


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def _lost_updates(url: str, seeds: list[str], probe: str, results: list[dict], quiet: int) -> tuple[int, list[str]]:
    """How many expected effects the final skillbook lacks, and a line per kind of loss."""
    from ace.skillbook import Skillbook

    skillbook = Skillbook.load_from_file(url)
    problems: list[str] = []
    lost = 0
    for seed in seeds:
        skill = skillbook.get_skill(seed)
        tags = sorted(t for r in results for t in r["tags"].get(seed, []))
        updates = sorted(t for r in results for t in r["updates"].get(seed, []))
        recorded_tags = sorted(o.trace_id for o in skill.occurrences if o.operation_type == "TAG")
        recorded_updates = sorted(o.trace_id for o in skill.occurrences if o.operation_type == "UPDATE")
        missing = (
            (len(tags) - skill.helpful_count)
            + len(set(tags) - set(recorded_tags))
            + len(set(updates) - set(recorded_updates))
        )
        if missing or len(recorded_tags) != len(tags) or len(recorded_updates) != len(updates):
            problems.append(
                f"{seed}: helpful {skill.helpful_count}/{len(tags)}, TAG records "
                f"{len(recorded_tags)}/{len(tags)}, UPDATE records {len(recorded_updates)}/{len(updates)}"
            )
        lost += max(missing, 0)
    markers = sum(len(r["markers"]) for r in results) + quiet
    probe_count = skillbook.get_skill(probe).neutral_count
    if probe_count != markers:
        problems.append(f"{probe}: neutral {probe_count}/{markers}")
        lost += max(markers - probe_count, 0)
    issues = sorted(i for r in results for i in r["added"])
    extra = [s for s in skillbook.skills(include_inactive=True) if s.id not in {*seeds, probe}]
    ids = [s.id for s in extra]
    first = len(seeds) + 2
    if sorted(ids) != [f"context-{n:05d}" for n in range(first, first + len(issues))] or len(set(ids)) != len(ids):
        problems.append(f"added ids not unique and contiguous: {len(ids)} ids, {len(set(ids))} distinct")
    missing_issues = len(set(issues) - {s.issue for s in extra})
    if missing_issues or len(extra) != len(issues):
        problems.append(f"added skills: {len(extra)} stored, {len(issues)} added, {missing_issues} missing")
    lost += missing_issues
    return lost, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=4, help="writer processes (default 4)")
    parser.add_argument("--mutations", type=int, default=100, help="mutations per writer (default 100)")
    parser.add_argument("--replicas", type=int, default=2, help="ace serve replicas polled (default 2)")
    parser.add_argument("--probe-every", type=int, default=5, help="every Nth mutation is a marker (default 5)")
    parser.add_argument(
        "--poll-interval", type=float, default=0.002, help="seconds between a replica's polls (default 0.002)"
    )
    parser.add_argument(
        "--quiet-markers",
        type=int,
        default=20,
        help="markers written one at a time after the writers finish (default 20)",
    )
    args = parser.parse_args()
    try:
        import psycopg  # noqa: F401
    except ImportError:
        print("the postgres extra is not installed: pip install -e '.[postgres]'", file=sys.stderr)
        return 2
    reason = missing_binaries()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2

    from ace.skillbook import Skillbook

    server = TempPostgres()
    server.start()
    replicas: list[Replica] = []
    try:
        url = server.url("bench")
        with Skillbook.locked(url) as skillbook:
            seeds = [
                skillbook.add_skill(
                    "context", f"Seed issue {n}: the agent skips a check.", ["bench", "seed"], f"Seed insight {n}."
                ).id
                for n in range(SEEDS)
            ]
            probe = skillbook.add_skill("context", PROBE_ISSUE, ["probe"], "Nothing to learn.").id

        started = time.perf_counter()
        replicas = [Replica(url, server.folder / f"replica-{n}.log") for n in range(args.replicas)]
        for replica in replicas:
            replica.wait_ready()
        print(f"{args.replicas} ace serve replicas up in {time.perf_counter() - started:.1f} s", flush=True)
        for replica in replicas:
            replica.start_polling(probe, args.poll_interval)

        context = multiprocessing.get_context("spawn")
        ready, results_queue, go = context.Queue(), context.Queue(), context.Event()
        workers = [
            context.Process(
                target=_writer, args=(url, w, args.mutations, args.probe_every, seeds, probe, ready, go, results_queue)
            )
            for w in range(args.writers)
        ]
        for process in workers:
            process.start()
        for _ in workers:
            ready.get(timeout=120)
        t0 = time.time()
        go.set()
        results = [results_queue.get(timeout=600) for _ in workers]
        for process in workers:
            process.join(timeout=60)
        if any(process.exitcode != 0 for process in workers):
            print(f"writer exit codes: {[p.exitcode for p in workers]}", file=sys.stderr)
            return 1
        elapsed = max(r["end"] for r in results) - t0
        total = args.writers * args.mutations

        converged = _converge(replicas, Skillbook.load_from_file(url), sum(len(r["markers"]) for r in results))
        quiet: list[tuple[int, float]] = []
        if replicas:
            for _ in range(args.quiet_markers):  # no other write in flight: the lag of the path alone
                time.sleep(0.05)
                with Skillbook.locked(url) as skillbook:
                    count = skillbook.tag_skill(probe, 0).neutral_count
                quiet.append((count, time.time()))
            _converge(replicas, Skillbook.load_from_file(url), count)
        final = Skillbook.load_from_file(url)
        for replica in replicas:
            replica.stop()

        lost, problems = _lost_updates(url, seeds, probe, results, len(quiet))
        commits = {count: at for r in results for count, at in r["markers"]}
        lags = [max(0.0, replica.seen[count] - at) for replica in replicas for count, at in commits.items()]
        quiet_lags = [max(0.0, replica.seen[count] - at) for replica in replicas for count, at in quiet]
        latencies = [x for r in results for x in r["latencies"]]

        print(f"machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
        print(
            f"settings: {args.writers} writers x {args.mutations} mutations (tag/add/update mix, every "
            f"{args.probe_every}th a probe marker), {args.replicas} ace serve replicas polled every "
            f"{args.poll_interval * 1000:g} ms, PostgreSQL on 127.0.0.1 with fsync off"
        )
        print(f"mutations: {total} in {elapsed:.2f} s = {total / elapsed:.0f} mutations/s overall")
        print(
            f"one locked mutation: p50 {statistics.median(latencies) * 1000:.1f} ms, "
            f"p99 {_percentile(latencies, 0.99) * 1000:.1f} ms"
        )
        print(
            f"lost updates: {lost} ({len(final.skills())} skills stored; ids unique and contiguous: "
            f"{'no' if any('ids' in p for p in problems) else 'yes'})"
        )
        for problem in problems:
            print(f"  {problem}")
        if lags:
            print(
                f"replica lag (commit -> replica answer), {len(lags)} samples ({len(commits)} markers x "
                f"{args.replicas} replicas): p50 {statistics.median(lags) * 1000:.1f} ms, "
                f"p99 {_percentile(lags, 0.99) * 1000:.1f} ms, max {max(lags) * 1000:.1f} ms"
            )
            print(
                f"replica lag with no other write in flight, {len(quiet_lags)} samples ({len(quiet)} markers "
                f"50 ms apart x {args.replicas} replicas): p50 {statistics.median(quiet_lags) * 1000:.1f} ms, "
                f"p99 {_percentile(quiet_lags, 0.99) * 1000:.1f} ms"
            )
            print(
                f"replicas serving the final state {converged * 1000:.0f} ms after the last writer finished; "
                f"polls: {', '.join(str(r.polls) for r in replicas)}"
            )
        return 1 if lost or problems else 0
    finally:
        for replica in replicas:
            if replica.process.poll() is None:
                replica.stop()
        server.stop()
        server.remove()


if __name__ == "__main__":
    sys.exit(main())
