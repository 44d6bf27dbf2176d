"""Learn a skillbook from recorded tau2-bench runs with TraceAnalyser, then inspect it.

    python examples/learn_from_tau2_traces.py RESULTS.json [...] -o SKILLBOOK.json [--model openai/gpt-4.1-mini]

Without --model the roles run on the offline scripted models of `ace_eval.scripted` (rule-based,
not LLMs): the loop runs for real, the skills it writes are templates. Exits 2 when an input is
missing, 1 when no trace could be learned from, 0 otherwise; writes only SKILLBOOK.json (+ its
embeddings sidecar).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ace import RecursiveReflector, Skillbook, SkillManager, TraceAnalyser
from ace_eval.scripted import scripted_recursive_reflector, scripted_skill_manager


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", type=Path, help="tau2 Results files (or folders of them)")
    parser.add_argument("--model", help="a model string for the reflector and the skill manager")
    parser.add_argument("-o", "--output", type=Path, required=True, help="where to write the skillbook")
    args = parser.parse_args()
    missing = [str(path) for path in args.traces if not path.exists()]
    if missing:
        print(f"error: no such trace file or folder: {', '.join(missing)}", file=sys.stderr)
        sys.exit(2)

    skillbook = Skillbook()
    analyser = TraceAnalyser.from_roles(
        reflector=RecursiveReflector(args.model or scripted_recursive_reflector(), skillbook=skillbook.view()),
        skill_manager=SkillManager(args.model or scripted_skill_manager()),
        skillbook=skillbook,
    )
    results = analyser.run(args.traces, workers=4)

    learned_from = 0
    for result in results:
        # A failed reflection is not a pipeline error: the sample finishes, but it taught nothing.
        if result.error is not None:
            print(f"failed at {result.failed_at}: {result.error}")
        elif result.output.reflection_failure is not None:
            print(f"reflection failed: {result.output.reflection_failure}")
        else:
            learned_from += 1
    skillbook.save_to_file(args.output)
    print(skillbook.as_prompt())
    print(f"\n{len(skillbook.skills())} skills from {learned_from} traces -> {args.output}")
    print(skillbook.source_summary()["by_operation_type"])
    if learned_from == 0:
        sys.exit(1)


if __name__ == "__main__":
    main()
