"""Benchmark retrieve_top_k on a synthetic skillbook (default 5,000 skills) with the local embedder.

Prints: index build time (embedding every skill, and from stored vectors), incremental update times,
p50/p95 query latency per mode excluding and including query embedding, the index's memory, BM25
scoring with rank-bm25 vs bm25s on the same documents, and, side by side in the same run, ace-framework
0.13.0's own `retrieve_top_k` on the same skills, vectors and queries (both excluding the query
embedding) with the ratio of the two p50s.

    python benchmarks/retrieval.py [--skills 5000] [--queries 300] [--seed 0]
                                   [--reference-queries 30] [--ace013-wheel PATH | --no-reference]

ace-framework 0.13.0 needs Python >= 3.12 to install, and its top-level package is also called `ace`,
so it runs in a child process (benchmarks/ace013_retrieve.py) with the unpacked wheel first on
PYTHONPATH. Without --ace013-wheel the wheel is fetched once with `pip download` into
results/ace-framework-0.13.0/ and checked against its pinned sha256.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

os.environ.setdefault("LOGFIRE_IGNORE_NO_CONFIG", "1")

from ace.retrieval import Embedder, SkillIndex, default_embedder
from ace.retrieval._terms import terms_of
from ace.skillbook import Skillbook

DOMAINS = ["airline", "retail", "telecom", "banking", "insurance", "hotel", "rail", "car_rental"]
OBJECTS = [
    "reservation",
    "refund",
    "baggage allowance",
    "seat map",
    "loyalty tier",
    "payment method",
    "voucher",
    "invoice",
    "address change",
    "SIM card",
    "data plan",
    "roaming fee",
    "claim",
    "deductible",
    "check-in",
    "cancellation fee",
    "upgrade",
    "companion ticket",
    "gift card",
]
PROBLEMS = [
    "the API rejects partial updates",
    "the tool silently ignores the second passenger",
    "the user asks for an exception to the policy",
    "the total is computed before discounts",
    "the agent confirms before verifying identity",
    "two records share the same identifier",
    "the policy differs for basic economy",
    "the change applies to every leg at once",
    "the date format is ambiguous",
    "the tool times out on long histories",
]
ACE013_WHEEL = "ace_framework-0.13.0-py3-none-any.whl"
ACE013_WHEEL_SHA256 = "b0d75cf6ea191e818eafbd763f182b6eb90285c64ec1817a9ef5182517d64bbe"
ACE013_CACHE = Path(__file__).resolve().parents[1] / "results" / "ace-framework-0.13.0"
ACTIONS = [
    "verify the user's identity first",
    "quote the policy text verbatim",
    "ask before any write",
    "list every option with its price",
    "transfer to a human when the policy forbids it",
    "recompute the total after each change",
    "check the membership tier",
    "confirm each leg",
]


def synthetic_skillbook(size: int, rng: random.Random) -> Skillbook:
    """`size` active skills (about 4 in 5 context) with varied issue, insight and keywords."""
    skillbook = Skillbook()
    for _ in range(size):
        domain, thing = rng.choice(DOMAINS), rng.choice(OBJECTS)
        issue = f"In {domain} tasks about the {thing}, {rng.choice(PROBLEMS)} when {rng.choice(PROBLEMS)}."
        keywords = [domain, thing, rng.choice(["policy", "tools", "identity", "pricing", "dates"])]
        if rng.random() < 0.8:
            insight = f"Always {rng.choice(ACTIONS)}, then {rng.choice(ACTIONS)} for the {thing}."
            skillbook.add_skill("context", issue, keywords, insight=insight)
        else:
            skillbook.add_skill("harness", issue, keywords)
    return skillbook


def synthetic_queries(count: int, rng: random.Random) -> list[str]:
    return [f"{rng.choice(DOMAINS)} {rng.choice(OBJECTS)}: {rng.choice(PROBLEMS)}" for _ in range(count)]


class PrecomputedQueries:
    """Answers `embed` for known queries from a table: timing search without the model call."""

    def __init__(self, embedder: Embedder, queries: Sequence[str]) -> None:
        self.name, self.dim = embedder.name, embedder.dim
        self._vectors = dict(zip(queries, embedder.embed(queries)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vectors[text] for text in texts])


def percentiles_ms(run: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    timings = []
    for query in queries:
        start = time.perf_counter()
        run(query)
        timings.append(time.perf_counter() - start)
    return float(np.percentile(timings, 50) * 1e3), float(np.percentile(timings, 95) * 1e3)


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--reference-queries",
        type=int,
        default=30,
        help="queries timed on ace-framework 0.13 (each takes ~0.2 s at 5,000 skills)",
    )
    parser.add_argument("--ace013-wheel", type=Path, help="a local ace_framework-0.13.0 wheel (else pip download)")
    parser.add_argument("--no-reference", action="store_true", help="skip the ace-framework 0.13 comparison")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    embedder = default_embedder()
    skillbook = synthetic_skillbook(args.skills, rng)
    queries = synthetic_queries(args.queries, rng)
    print(f"{args.skills} skills, {args.queries} queries, embedder {embedder.name} (dim {embedder.dim})")

    index = SkillIndex(skillbook, embedder)
    print(f"index build, embedding every skill:   {timed(index.refresh):8.2f} s")
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    from_stored = SkillIndex(skillbook, embedder)
    build_stored = timed(from_stored.refresh)
    gc.collect()
    index_bytes = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    print(f"index build from stored vectors:      {build_stored * 1e3:8.1f} ms")

    matrix_bytes = args.skills * embedder.dim * 4
    text_bytes = sum(len(skill.embedding_text().encode()) for skill in skillbook.skills())
    print(
        f"index memory: {index_bytes / 2**20:.1f} MiB (float32 matrix {matrix_bytes / 2**20:.1f} MiB, "
        f"text {text_bytes / 2**20:.1f} MiB; budget ~2x matrix + text = "
        f"{(2 * matrix_bytes + text_bytes) / 2**20:.1f} MiB)"
    )

    skill_id = skillbook.skills()[args.skills // 2].id
    skillbook.update_skill(skill_id, issue="Pets travelling in the cabin need a carrier that fits under the seat.")
    print(f"incremental update, 1 skill edited:   {timed(index.refresh) * 1e3:8.1f} ms")
    skillbook.add_skill("harness", "The seat map tool returns stale availability.", ["tools"])
    print(f"incremental update, 1 skill added:    {timed(index.refresh) * 1e3:8.1f} ms")
    skillbook.tag_skill(skill_id, 1)
    print(f"incremental update, 1 skill tagged:   {timed(index.refresh) * 1e3:8.3f} ms")

    cached = SkillIndex(skillbook, PrecomputedQueries(embedder, queries))
    cached.refresh()
    print("\nretrieve_top_k(top_k=5)          p50 ms   p95 ms")
    for mode in ("hybrid", "lexical", "dense"):
        p50, p95 = percentiles_ms(lambda q, m=mode: cached.search(q, top_k=5, mode=m), queries)
        print(f"  {mode:8s} excluding query embed {p50:7.3f}  {p95:7.3f}")
    p50, p95 = percentiles_ms(lambda q: cached.search(q, top_k=5, section="context", keywords=["airline"]), queries)
    print(f"  hybrid + section + keyword filter {p50:5.3f}  {p95:7.3f}")
    p50, p95 = percentiles_ms(lambda q: index.search(q, top_k=5), queries)
    print(f"  hybrid   including query embed {p50:7.3f}  {p95:7.3f}")

    compare_bm25_libraries([terms_of(skill.embedding_text()) for skill in skillbook.skills()], queries)
    if not args.no_reference:
        reference = queries[: args.reference_queries]
        compare_with_ace013(skillbook, reference, embedder, cached, args.ace013_wheel or fetch_ace013_wheel())


def fetch_ace013_wheel() -> Path:
    """The ace-framework 0.13.0 wheel in results/, downloaded with pip on first use."""
    wheel = ACE013_CACHE / ACE013_WHEEL
    if not wheel.is_file():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--python-version",
                "3.12",
                "--dest",
                str(ACE013_CACHE),
                "ace-framework==0.13.0",
            ],
            check=True,
        )
    return wheel


def compare_with_ace013(
    skillbook: Skillbook, queries: Sequence[str], embedder: Embedder, cached: SkillIndex, wheel: Path
) -> None:
    """p50 of ace-framework 0.13.0's retrieve_top_k and of ours on the same skills, search vectors and
    queries, measured one after the other in this run; both exclude the query embedding."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != ACE013_WHEEL_SHA256:
        raise SystemExit(f"{wheel} has sha256 {digest}, expected {ACE013_WHEEL_SHA256}; delete it and rerun")
    skills = skillbook.skills()
    with tempfile.TemporaryDirectory() as folder:
        unpacked = Path(folder) / "ace-framework-0.13.0"
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(unpacked)
        inputs = Path(folder) / "inputs.npz"
        np.savez(
            inputs,
            sections=np.array([skill.section for skill in skills]),
            issues=np.array([skill.issue for skill in skills]),
            insights=np.array([skill.insight or "" for skill in skills]),
            keywords=np.array(["|".join(skill.keywords) for skill in skills]),
            skill_vectors=np.stack([np.asarray(skill.embedding) for skill in skills]),
            queries=np.array(list(queries)),
            query_vectors=embedder.embed(list(queries)),
        )
        child = subprocess.run(
            [sys.executable, str(Path(__file__).with_name("ace013_retrieve.py")), str(inputs)],
            env={**os.environ, "PYTHONPATH": str(unpacked)},
            capture_output=True,
            text=True,
            check=False,
        )
    if child.returncode != 0:
        raise SystemExit(f"ace-framework 0.13 run failed:\n{child.stderr[-2000:]}")
    theirs = json.loads(child.stdout.strip().splitlines()[-1])["seconds"]
    ours_p50, ours_p95 = percentiles_ms(lambda q: cached.search(q, top_k=5), queries)
    theirs_p50, theirs_p95 = (float(np.percentile(theirs, q) * 1e3) for q in (50, 95))
    print(f"\nretrieve_top_k(top_k=5), hybrid, {len(skills)} skills, {len(queries)} queries, query embedding excluded")
    print("                          p50 ms   p95 ms")
    print(
        f"  ace-framework 0.13.0  {theirs_p50:9.2f} {theirs_p95:8.2f}   "
        "(BM25 rebuilt per query, cosines in a Python loop)"
    )
    print(f"  ace (this repository) {ours_p50:9.3f} {ours_p95:8.3f}")
    print(f"  ratio of p50s: {theirs_p50 / ours_p50:.0f}x faster   (target >= 100x)")


def compare_bm25_libraries(documents: list[list[str]], queries: Sequence[str]) -> None:
    """BM25 build time and per-query scoring of every document: rank-bm25 (the seed) vs bm25s."""
    import bm25s
    from rank_bm25 import BM25Okapi

    query_terms = [terms_of(query) for query in queries]
    print(f"\nBM25 over {len(documents)} documents      build ms   score p50 ms   p95 ms")
    start = time.perf_counter()
    okapi = BM25Okapi(documents)
    build = time.perf_counter() - start
    p50, p95 = percentiles_ms(lambda q: okapi.get_scores(q), query_terms)  # type: ignore[arg-type]
    print(f"  rank-bm25 0.2.2 (BM25Okapi)   {build * 1e3:8.1f}   {p50:12.3f}  {p95:7.3f}")
    start = time.perf_counter()
    sparse = bm25s.BM25()
    sparse.index(documents, show_progress=False)
    build = time.perf_counter() - start
    p50, p95 = percentiles_ms(lambda q: sparse.get_scores(q), query_terms)  # type: ignore[arg-type]
    print(f"  bm25s {bm25s.__version__} (lucene)        {build * 1e3:8.1f}   {p50:12.3f}  {p95:7.3f}")


if __name__ == "__main__":
    main()
