"""`ace-eval e2e` and `ace-eval verify`: the command lines of the end-to-end run (see `ace_eval.e2e.runner`).

Exit codes: 0 when every phase ran without a failure and the run folder verifies; 1 when a trace
or a simulation failed (or verify found a problem) - the reports are still written and the failures
are printed, with their count, before the tables; 2 for bad input, before any model is called.
"""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from ace.cli import CommandError, positive_int
from ace.roles import SKILL_INJECTIONS
from ace.steps.learn_from import LEARN_FROM
from ace_eval.role_models import OFFLINE_MODELS, add_role_model_flags, role_settings_from_args
from ace_eval.span_export import add_span_options

if TYPE_CHECKING:
    from ace_eval.e2e.config import E2EConfig
    from ace_eval.e2e.runner import E2EReport

__all__ = ["register", "register_verify"]

_FLAG_ROLES = ("agent", "user", "reflector", "skill-manager")


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace-eval e2e`."""
    parser.description = (
        "Learn a skillbook online on the train split (or offline from recorded traces with --traces), "
        "then benchmark the test split without and with the skills, paired on the same tasks and trials. "
        "With no model options every role runs on offline scripted models: that exercises the whole loop "
        "without a key, but it measures plumbing, not learning. Exit 0: no failure; 1: a trace or "
        "simulation failed; 2: bad input."
    )
    parser.add_argument("--benchmark", default="tau-bench-airline", choices=["tau-bench-airline"])
    parser.add_argument(
        "--traces", nargs="+", type=Path, default=[], help="tau2 Results files or folders (offline learning)"
    )
    parser.add_argument("--output-dir", type=Path, help="run folder (default: results/e2e/run_<id>)")
    add_role_model_flags(parser, _FLAG_ROLES, everyone="every role")
    parser.add_argument("--reflector-type", choices=["rr", "simple"], default="rr")
    parser.add_argument(
        "--skill-injection",
        choices=SKILL_INJECTIONS,
        default="matched",
        help="matched: the skills matched to the user's first message (default); all: every "
        "active skill; tool: ids and issues listed, insights read with a read_skill tool",
    )
    parser.add_argument(
        "--skills-limit", type=positive_int, default=3, help="most skills 'matched' injects (default 3)"
    )
    parser.add_argument(
        "--train-epochs",
        type=positive_int,
        help="passes over the train split (default 2), or over --traces (default 1)",
    )
    parser.add_argument(
        "--learn-from",
        choices=LEARN_FROM,
        default="all",
        help="all: learn from every simulation (default); failures: skip a full-reward simulation into which "
        "no skill was injected",
    )
    parser.add_argument(
        "--recheck",
        action="store_true",
        help="online: keep a new or changed skill only if its simulation, run again with it, gets full reward",
    )
    parser.add_argument("--num-trials", type=positive_int, default=1)
    parser.add_argument("--max-num-steps", type=positive_int, default=200)
    parser.add_argument("--max-workers", type=positive_int, default=4)
    parser.add_argument("--task-limit", type=positive_int, help="use only the first N tasks of each split")
    parser.add_argument("--no-benchmark", action="store_true", help="stop after learning the skillbook")
    parser.add_argument(
        "--allow-test-overlap",
        action="store_true",
        help="learn from --traces that hold test-split tasks although the benchmark runs on them",
    )
    add_span_options(parser)
    parser.add_argument("--verbose", action="store_true", help="also print per-task tables")
    parser.set_defaults(handler=_run)


def register_verify(verify: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace-eval verify`."""
    verify.description = (
        "The Skillbook v2 smoke checks on RUN_DIR/skillbook.json plus counters consistent with "
        "the injections recorded in RUN_DIR/train/. Exit 0 when it passes, 1 naming the failing "
        "skill ids."
    )
    verify.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    verify.set_defaults(handler=_verify)


def _run(args: argparse.Namespace) -> int:
    try:
        config = _config(args)
        config.check_roles()  # before anything heavy loads: mixed roles or a missing key answer at once
    except ValueError as exc:  # E2EInputError included
        raise CommandError(str(exc)) from exc
    # Imported here, not at the top: `--help`, a bad flag and a missing key answer before the roles
    # and tau2 load.
    from tqdm import tqdm

    from ace_eval.e2e.preflight import E2EInputError
    from ace_eval.e2e.report import exit_status, write_reports
    from ace_eval.e2e.runner import run_e2e
    from ace_eval.e2e.verify import verify_run
    from ace_eval.span_export import exporting_spans
    from ace_eval.tau2 import Tau2Error

    offline = [role for role in config.running_roles() if config.model_of(role) in OFFLINE_MODELS]
    if offline:
        print(
            f"note: {', '.join(offline)} run on offline scripted models (not LLMs): this run measures the "
            "plumbing of the loop, not learning"
        )
    try:
        with exporting_spans(args):
            report = run_e2e(config, log=tqdm.write)
    except (E2EInputError, Tau2Error) as exc:
        raise CommandError(str(exc)) from exc
    problems = verify_run(config.output_dir)
    write_reports(report, problems=problems)
    _print_report(report, problems, verbose=args.verbose)
    return exit_status(report, problems)


def _config(args: argparse.Namespace) -> E2EConfig:
    from ace_eval.e2e.config import E2EConfig

    return E2EConfig(
        output_dir=args.output_dir or Path("results") / "e2e" / f"run_{secrets.token_hex(6)}",
        traces=tuple(args.traces),
        agent_model=args.agent_model,
        user_model=args.user_model,
        reflector_model=args.reflector_model,
        skill_manager_model=args.skill_manager_model,
        reflector_type=args.reflector_type,
        api_base=args.api_base,
        api_key=args.api_key,
        cache_prompts=args.cache_prompts,
        cache_ttl=args.cache_ttl,
        skill_injection=args.skill_injection,
        skills_limit=args.skills_limit,
        task_limit=args.task_limit,
        num_trials=args.num_trials,
        max_steps=args.max_num_steps,
        max_workers=args.max_workers,
        train_epochs=args.train_epochs,
        learn_from=args.learn_from,
        recheck=args.recheck,
        benchmark=not args.no_benchmark,
        allow_test_overlap=args.allow_test_overlap,
        max_output_tokens=args.max_output_tokens,
        temperature=args.temperature,
        request_timeout=args.request_timeout,
        structured_output=args.structured_output,
        extra_body=args.extra_body,
        context_window=args.context_window,
        role_settings=role_settings_from_args(args, _FLAG_ROLES),
    )


def _verify(args: argparse.Namespace) -> int:
    from ace_eval.e2e.verify import verify_run

    if not args.run_dir.is_dir():
        raise CommandError(f"{args.run_dir}: no such run folder")
    problems = verify_run(args.run_dir)
    for problem in problems:
        print(f"problem: {problem}")
    print(f"verify {args.run_dir}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


def _print_report(report: E2EReport, problems: list[str], *, verbose: bool) -> None:
    from ace_eval.e2e.paired import format_paired

    failures = report.failures
    if failures:
        print(f"\n{len(failures)} failure(s):")
        for line in failures:
            print(f"failure: {line}")
    for problem in problems:
        print(f"verify problem: {problem}")
    failed = len(report.learning) - report.traces_learned - report.traces_nothing_learned
    print(f"\nskillbook: {report.skills} active skills -> {report.skillbook_path}")
    print(
        f"traces: {len(report.learning)}; learned from {report.traces_learned}, nothing learned "
        f"{report.traces_nothing_learned}, failed {failed}"
    )
    if report.paired is not None:
        print(f"\n== benchmark: {report.config.test_split} split, paired ==\n{format_paired(report.paired)}")
        if verbose:
            from ace_eval.tau2 import format_metrics

            for label, metrics in (("baseline", report.paired.baseline), ("with skills", report.paired.with_skills)):
                print(f"\n== {label} ==\n{format_metrics(metrics)}")
    if report.plumbing_only:
        print("\nplumbing only: scripted roles do not read their skills, so both rows are equal by design")
    print(f"run folder: {report.config.output_dir} (report.md, report.json, summary.json)")
