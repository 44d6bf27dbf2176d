"""Save and load time of a 5,000-skill skillbook with 384-d embeddings.

Usage: python benchmarks/skillbook_io.py [--skills 5000] [--dim 384] [--repeats 5]
Prints the median and best wall time of `save_to_file` and `load_from_file`, and the file sizes.
Reference on the project machines: ace-framework 0.13.0 takes 1.69 s to save and 0.68 s to load.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ace.skillbook import InsightSource, Skillbook


def build(skills: int, dim: int) -> Skillbook:
    """A synthetic skillbook: mixed sections, a provenance record per skill, a unit vector per skill."""
    rng = np.random.default_rng(0)
    book = Skillbook()
    for number in range(skills):
        source = InsightSource(source_system="bench", trace_id=f"task-{number}", epoch=1, learning_text="lesson")
        if number % 5:
            book.add_skill(
                "context",
                f"Issue {number}: the agent misreads API family {number % 37}.",
                [f"domain_{number % 11}", "api"],
                f"Check the rule before call {number}.",
                insight_source=source,
            )
        else:
            book.add_skill(
                "harness",
                f"Harness issue {number}: retries stall the runner.",
                ["tau2", "retries"],
                insight_source=source,
            )
    vectors = rng.standard_normal((skills, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    book.set_embeddings({s.id: v for s, v in zip(book.skills(), vectors)}, model="bench-minilm")
    return book


def timed(action, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=5000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    book = build(args.skills, args.dim)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "skillbook.json"
        save = timed(lambda: book.save_to_file(path), args.repeats)
        load = timed(lambda: Skillbook.load_from_file(path), args.repeats)
        loaded = Skillbook.load_from_file(path)
        assert len(loaded) == args.skills
        assert all(s.embedding is not None for s in loaded.skills())
        json_mb = path.stat().st_size / 1e6
        npz_mb = path.with_name("skillbook.embeddings.npz").stat().st_size / 1e6
    print(f"skills={args.skills} dim={args.dim} repeats={args.repeats}")
    print(f"save: median {statistics.median(save):.3f} s, best {min(save):.3f} s   (ace-framework 0.13.0: 1.69 s)")
    print(f"load: median {statistics.median(load):.3f} s, best {min(load):.3f} s   (ace-framework 0.13.0: 0.68 s)")
    print(f"files: json {json_mb:.2f} MB, npz {npz_mb:.2f} MB")


if __name__ == "__main__":
    main()
