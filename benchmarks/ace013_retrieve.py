"""Child process of benchmarks/retrieval.py: times ace-framework 0.13.0's own `retrieve_top_k`.

Run with PYTHONPATH pointing at the unpacked ace-framework 0.13.0 wheel, so that `import ace` is that
package and not this repository's; it never imports this repository. Reads the skills, their search
vectors and the queries' vectors from an .npz written by the parent, builds a 0.13 `Skillbook`
with those vectors (as 0.13 keeps them: lists of floats on `Skill.embedding`), and times
`retrieve_top_k(skillbook, query, top_k=5, detector=...)` with a `SimilarityDetector` whose only
change is that `compute_embedding` returns the query's precomputed vector, so the figure excludes
the query embedding, like the parent's. Prints one JSON object: the per-query seconds and the ids
returned for the first query.

    PYTHONPATH=UNPACKED_WHEEL python benchmarks/ace013_retrieve.py INPUT.npz
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np


def main(input_path: str) -> int:
    import ace
    from ace.core.skillbook import Skillbook
    from ace.deduplication.detector import SimilarityDetector

    package = Path(ace.__file__).resolve().parent
    # skill_rendering.py is loaded by path: ace.implementations' __init__ imports the LLM roles.
    spec = importlib.util.spec_from_file_location(
        "ace013_skill_rendering", package / "implementations" / "skill_rendering.py"
    )
    if spec is None or spec.loader is None:
        raise RuntimeError(f"{package} has no implementations/skill_rendering.py; is it ace-framework 0.13.0?")
    rendering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rendering)

    data = np.load(input_path, allow_pickle=False)
    skillbook = Skillbook()
    for section, issue, insight, keywords, vector in zip(
        data["sections"], data["issues"], data["insights"], data["keywords"], data["skill_vectors"]
    ):
        skill = skillbook.add_skill(
            str(section), str(issue), keywords=str(keywords).split("|"), insight=str(insight) or None
        )
        skill.embedding = vector.astype(float).tolist()
    vectors = {
        str(query): vector.astype(float).tolist() for query, vector in zip(data["queries"], data["query_vectors"])
    }

    class PrecomputedDetector(SimilarityDetector):
        def compute_embedding(self, text: str) -> list[float] | None:
            return vectors[text]

    detector = PrecomputedDetector()
    seconds, first = [], None
    for query in vectors:
        start = time.perf_counter()
        found = rendering.retrieve_top_k(skillbook, query, top_k=5, detector=detector)
        seconds.append(time.perf_counter() - start)
        first = first if first is not None else [skill.id for skill in found]
    print(json.dumps({"package": str(package), "seconds": seconds, "first_ids": first}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
