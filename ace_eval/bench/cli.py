"""`ace-eval bench conventions` and `ace-eval bench tasks FILE.jsonl`: the learning benchmark's command lines.

Exit codes: 0 when every input line, learning sample and answer went through; 1 when one failed
(the report is still written and the failures are printed first, with their count); 2 for bad
input, before any model is called.
"""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ace.cli import CommandError, positive_int
from ace.steps.learn_from import LEARN_FROM
from ace_eval.bench.names import ARMS, FEEDBACK_MODES, Arm
from ace_eval.role_models import ModelServer, add_role_model_flags, role_settings_from_args
from ace_eval.span_export import add_span_options

if TYPE_CHECKING:
    from ace_eval.bench.config import BenchConfig
    from ace_eval.bench.task_set import TaskSet

__all__ = ["register"]

_FLAG_ROLES = ("agent", "reflector", "skill-manager")


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the `bench` command's parser: its description and the `conventions` and `tasks` families."""
    parser.description = (
        "Learn a skillbook on a task family's training items with the ACE loop, then score the arms "
        "none (nothing), learned (matched learned skills), all (every learned skill), icl (the training "
        "experience pasted in the prompt) and oracle (the true rules written by hand) on the same test "
        "items, with paired differences. With no model options every role runs on offline scripted "
        "models: that checks the plumbing in seconds, but measures nothing about learning. "
        "Exit 0: no failure; 1: an input line, learning sample or answer failed; 2: bad input."
    )
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    conventions = families.add_parser(
        "conventions",
        help="built-in: hidden house rules (formats, units, a policy exception) with control items",
        description="Short tasks whose answers follow five hidden house rules, plus control items no rule "
        "touches; deterministic by --seed (see docs/learning-benchmark.md).",
    )
    for split, per_rule, controls in (("train", 3, 5), ("test", 4, 10)):
        conventions.add_argument(
            f"--{split}-per-rule",
            type=positive_int,
            default=per_rule,
            help=f"{split} items drawn per rule (default {per_rule})",
        )
        conventions.add_argument(
            f"--{split}-controls",
            type=positive_int,
            default=controls,
            help=f"{split} control items, cycling through the control kinds (default {controls})",
        )
    _add_run_flags(conventions)
    conventions.set_defaults(handler=_run)
    tasks = families.add_parser(
        "tasks",
        help="your own items: a JSONL file of id, split, question, expected [, rule, control, grading]",
        description='FILE holds one JSON object per line: {"id", "split": "train"|"test", "question", '
        '"expected"} and optionally "rule", "control" (true/false), "grading" ("normalised", the '
        'default, or "exact"). A malformed line fails alone (exit 1), named with its line number.',
    )
    tasks.add_argument("file", type=Path, metavar="FILE", help="JSONL task file")
    _add_run_flags(tasks)
    tasks.set_defaults(handler=_run)


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output-dir", type=Path, help="run folder (default: results/bench/run_<id>)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the conventions items and the bootstrap (default 0)")
    parser.add_argument(
        "--arms",
        type=_arms,
        help=f"comma-separated arms to score (default: all of {','.join(ARMS)}; oracle only when "
        "the task set states its rules)",
    )
    parser.add_argument(
        "--skillbook",
        type=Path,
        metavar="FILE",
        help="score this saved skillbook (e.g. an earlier run's skillbook.json) instead of learning one: no "
        "learning phase, and no icl arm (it pastes the experience learning gathers)",
    )
    parser.add_argument(
        "--feedback",
        choices=FEEDBACK_MODES,
        default="labels",
        help="labels: right/wrong and the expected answer (default); verdict: right/wrong only",
    )
    parser.add_argument(
        "--train-epochs", type=positive_int, default=1, help="passes over the training items (default 1)"
    )
    parser.add_argument(
        "--learn-from",
        choices=LEARN_FROM,
        default="all",
        help="all: learn from every training answer (default); failures: skip a right answer into which "
        "no skill was injected",
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="keep a new or changed skill only if the agent, answering its training item again with it, gets it right",
    )
    parser.add_argument(
        "--counterexamples",
        action="store_true",
        help="answer a failed training item again without its injected skills; if that is right, record it as "
        "their counterexample (the matcher withholds them from tasks nearer to it) instead of learning from it",
    )
    parser.add_argument(
        "--confirm",
        action="store_true",
        help="answer a right training item again without its injected skills; if that is wrong, record it as "
        "their confirmation; after training, retire every lesson no second training item backs",
    )
    parser.add_argument(
        "--worked-examples",
        action="store_true",
        help="a skill learned from a labelled answer carries it as its example (task -> expected answer)",
    )
    parser.add_argument("--train-limit", type=positive_int, help="use only the first N training items")
    parser.add_argument("--test-limit", type=positive_int, help="use only the first N test items")
    parser.add_argument("--trials", type=positive_int, default=1, help="answers per test item and arm (default 1)")
    parser.add_argument(
        "--icl-budget",
        type=positive_int,
        default=2048,
        help="tokens of training experience the icl arm pastes into each prompt (default 2048)",
    )
    parser.add_argument(
        "--skills-limit", type=positive_int, default=3, help="most skills the matcher injects (default 3)"
    )
    parser.add_argument(
        "--allow-unmatched-skills",
        action="store_true",
        help="let the SkillManager keep a skill whose issue does not match the question it is learned from "
        "(default: refused, since the learned arm would never inject it there)",
    )
    parser.add_argument("--max-workers", type=positive_int, default=1, help="items answered at once (default 1)")
    parser.add_argument(
        "--session-max-requests",
        type=positive_int,
        help="most requests of one SkillManager or RecursiveReflector session (default 30)",
    )
    add_role_model_flags(parser, _FLAG_ROLES, everyone="every role")
    parser.add_argument(
        "--reflector-type",
        choices=["simple", "rr"],
        default="simple",
        help="simple: one-pass Reflector (default: a trace is one question and answer); rr: RecursiveReflector",
    )
    add_span_options(parser)


def _arms(text: str) -> tuple[str, ...]:
    arms = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [arm for arm in arms if arm not in ARMS]
    if not arms or unknown:
        raise argparse.ArgumentTypeError(f"choose among {', '.join(ARMS)}, comma-separated; got {text!r}")
    return arms


def _run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `--help` and a bad flag answer before the roles load.
    from tqdm import tqdm

    from ace_eval.bench.conventions import conventions
    from ace_eval.bench.preflight import BenchInputError
    from ace_eval.bench.report import write_reports
    from ace_eval.bench.runner import run_bench
    from ace_eval.bench.task_file import TaskFileError, load_task_file
    from ace_eval.bench.task_set import TaskSet
    from ace_eval.span_export import exporting_spans

    if args.family == "tasks":
        try:
            task_file = load_task_file(args.file)
        except TaskFileError as exc:
            raise CommandError(str(exc)) from exc
        task_set = TaskSet(name=str(args.file), items=task_file.items, problems=task_file.problems)
    else:
        task_set = conventions(
            args.seed,
            train_per_rule=args.train_per_rule,
            test_per_rule=args.test_per_rule,
            train_controls=args.train_controls,
            test_controls=args.test_controls,
        )
    try:
        config = _config(args, task_set)
    except ValueError as exc:
        raise CommandError(str(exc)) from exc
    if config.plumbing_only:
        print(
            "note: the roles run on offline scripted models (not LLMs): this run measures the plumbing of the "
            "benchmark, not learning"
        )
    for problem in task_set.problems:
        tqdm.write(f"failure: {problem}")
    try:
        with exporting_spans(args):
            report = run_bench(config, task_set, log=tqdm.write)
    except BenchInputError as exc:
        raise CommandError(str(exc)) from exc
    data = write_reports(report)
    _print_summary(report.failures, data)
    return int(data["exit_status"])


def _config(args: argparse.Namespace, task_set: TaskSet) -> BenchConfig:
    from ace_eval.bench.config import BenchConfig

    arms = args.arms or tuple(
        arm for arm in ARMS if (arm != "oracle" or task_set.rules) and (arm != "icl" or args.skillbook is None)
    )
    return BenchConfig(
        output_dir=args.output_dir or Path("results") / "bench" / f"run_{secrets.token_hex(6)}",
        family=args.family,
        task_file=getattr(args, "file", None),
        seed=args.seed,
        arms=cast("tuple[Arm, ...]", arms),
        skillbook=args.skillbook,
        feedback=args.feedback,
        train_epochs=args.train_epochs,
        learn_from=args.learn_from,
        recheck=args.recheck,
        counterexamples=args.counterexamples,
        confirm=args.confirm,
        worked_examples=args.worked_examples,
        train_limit=args.train_limit,
        test_limit=args.test_limit,
        trials=args.trials,
        icl_budget=args.icl_budget,
        skills_limit=args.skills_limit,
        require_task_match=not args.allow_unmatched_skills,
        agent_model=args.agent_model,
        reflector_model=args.reflector_model,
        skill_manager_model=args.skill_manager_model,
        reflector_type=args.reflector_type,
        server=ModelServer(
            api_base=args.api_base, api_key=args.api_key, cache_prompts=args.cache_prompts, cache_ttl=args.cache_ttl
        ),
        max_workers=args.max_workers,
        max_output_tokens=args.max_output_tokens,
        temperature=args.temperature,
        request_timeout=args.request_timeout,
        structured_output=args.structured_output,
        extra_body=args.extra_body,
        context_window=args.context_window,
        session_max_requests=args.session_max_requests,
        role_settings=role_settings_from_args(args, _FLAG_ROLES),
    )


def _print_summary(failures: tuple[str, ...], data: dict[str, Any]) -> None:
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for line in failures:
            print(f"failure: {line}")
    print("\narm       accuracy  95% CI            prompt tokens/item")
    for arm, score in data["scores"].items():
        tokens = score["prompt_tokens_per_item"]
        print(
            f"{arm:<9} {score['accuracy']:.3f}     [{score['ci95'][0]:.3f}, {score['ci95'][1]:.3f}]    "
            f"{'-' if tokens is None else f'{tokens:.0f}'}"
        )
    for d in data["differences"]:
        print(
            f"{d['arm']} - {d['baseline']}: {d['difference']:+.3f}  paired 95% CI [{d['ci95'][0]:+.3f}, "
            f"{d['ci95'][1]:+.3f}]  exact McNemar p={d['mcnemar_p']:.3g}  fixed {len(d['fixed'])}, broken "
            f"{len(d['broken'])} (controls {len(d['controls_broken'])}/{d['control_pairs']})"
        )
    learning = data["learning"]
    if learning["samples"]:
        print(
            f"learning: {learning['samples']} samples, {learning['learned']} learned from, {learning['failed']} "
            f"failed, {learning['active_skills']} skills, {learning['seconds']:.0f} s"
        )
    if data["plumbing_only"]:
        print(
            "\nplumbing only: scripted roles never read their skills or context, so every arm scores the same by design"
        )
    print(f"run folder: {data['config']['output_dir']} (report.md, report.html, report.json)")
