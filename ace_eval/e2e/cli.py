"""`ace-eval e2e`: the command line of the end-to-end run (see `ace_eval.e2e.runner`)."""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path

import logfire

from ace.cli import CommandError
from ace_eval.e2e.config import E2EConfig
from ace_eval.e2e.runner import E2EReport, run_e2e
from ace_eval.e2e.scripted import SCRIPTED
from ace_eval.tau2 import Tau2Error, format_metrics

__all__ = ["register"]

_MODEL_HELP = 'model string (litellm style, e.g. openai/gpt-4.1-mini) or "scripted" (offline, default)'


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `e2e` command."""
    parser = subparsers.add_parser(
        "e2e",
        help="learn a skillbook from tau2-bench airline traces, then benchmark it",
        description=(
            "Collect tau2 airline traces on the train split (or read recorded ones with --traces), "
            "learn a skillbook from them, then benchmark the test split without and with the skills. "
            "With no model options every role runs on offline scripted models: that exercises the "
            "whole loop without a key, but it measures plumbing, not learning."
        ),
    )
    parser.add_argument("--benchmark", default="tau-bench-airline", choices=["tau-bench-airline"])
    parser.add_argument("--traces", nargs="+", type=Path, default=[], help="tau2 Results files or folders")
    parser.add_argument("--output-dir", type=Path, help="run folder (default: results/e2e/run_<id>)")
    for role in ("agent", "user", "reflector", "skill-manager"):
        parser.add_argument(f"--{role}-model", default=SCRIPTED, help=_MODEL_HELP)
    parser.add_argument("--reflector-type", choices=["rr", "simple"], default="rr")
    parser.add_argument("--api-base", help="OpenAI-compatible server for the non-scripted models")
    parser.add_argument("--api-key", help="API key for --api-base")
    parser.add_argument("--num-trials", type=_positive, default=1)
    parser.add_argument("--max-num-steps", type=_positive, default=200)
    parser.add_argument("--max-workers", type=_positive, default=4)
    parser.add_argument("--epochs", type=_positive, default=1)
    parser.add_argument("--task-limit", type=_positive, help="use only the first N tasks of each split")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--no-benchmark", action="store_true", help="stop after learning the skillbook")
    parser.add_argument("--logfire", action="store_true", help="send spans to Logfire (needs LOGFIRE_TOKEN)")
    parser.add_argument("--verbose", action="store_true", help="also print per-task tables")
    parser.set_defaults(handler=_run)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _run(args: argparse.Namespace) -> int:
    if args.logfire:
        logfire.configure(send_to_logfire="if-token-present", service_name="ace-eval", console=False, inspect_arguments=False)
        logfire.instrument_pydantic_ai()
    else:
        logfire.configure(send_to_logfire=False, console=False, inspect_arguments=False)
    for path in args.traces:
        if not path.exists():
            raise CommandError(f"--traces {path}: no such file or folder")
    config = E2EConfig(
        output_dir=args.output_dir or Path("results") / "e2e" / f"run_{secrets.token_hex(6)}",
        traces=tuple(args.traces),
        agent_model=args.agent_model,
        user_model=args.user_model,
        reflector_model=args.reflector_model,
        skill_manager_model=args.skill_manager_model,
        reflector_type=args.reflector_type,
        api_base=args.api_base,
        api_key=args.api_key,
        task_limit=args.task_limit,
        num_trials=args.num_trials,
        max_steps=args.max_num_steps,
        max_workers=args.max_workers,
        epochs=args.epochs,
        benchmark=not args.no_benchmark,
        temperature=args.temperature,
    )
    scripted_roles = [name for name in ("agent", "user", "reflector", "skill_manager")
                      if getattr(config, f"{name}_model") == SCRIPTED]
    if scripted_roles:
        print(f"note: {', '.join(scripted_roles)} run on offline scripted models (not LLMs); "
              "the numbers below measure the plumbing, not learning")
    try:
        report = run_e2e(config)
    except Tau2Error as exc:
        raise CommandError(str(exc)) from exc
    _print_report(report, verbose=args.verbose)
    print(f"run folder: {config.output_dir}")
    return 0


def _print_report(report: E2EReport, *, verbose: bool) -> None:
    for line in report.learning_failures + report.simulation_failures:
        print(f"failure: {line}")
    print(f"skillbook: {report.skills} active skills learned from {report.traces_learned} traces "
          f"-> {report.skillbook_path}")
    for label, metrics in (("baseline (no skills)", report.baseline), ("with learned skills", report.with_skills)):
        if metrics is None:
            continue
        text = format_metrics(metrics)
        print(f"\n== {label} ==\n" + (text if verbose else "\n".join(text.splitlines()[: 1 + len(metrics.pass_hat_k)])))
