"""`ace-eval tau2 ...`: commands of the tau2 airline harness.

`ace-eval tau2 regrade RESULTS.json [--json] [--tasks FILE]` re-grades a tau2 Results file and
prints, per simulation, the computed and the recorded reward and db_match, then
`agreement: <agreeing>/<graded>`. Exit code 0 when every graded simulation agrees, 1 otherwise,
2 for bad input.

`ace-eval tau2 metrics RESULTS.json [--json]` prints pass^k with its bootstrap 95% CI and the
per-task table of a graded Results file.

`ace-eval tau2 run --agent-model MODEL --user-model MODEL --output RESULTS.json [...]` simulates a
split's tasks, grades them, writes the Results file and prints the metrics (`--spans-file PATH` keeps
every span locally). Its flags are those of `ace-eval e2e` (`--num-trials`, `--max-workers`,
`--max-num-steps`, ...); the earlier spellings (`--agent`, `--user`, `--trials`, `--workers`,
`--max-steps`) are still accepted, unlisted. Exit code 1 when a simulation failed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.cli import CommandError
from ace.models import ModelResolutionError, resolve_model
from ace_eval.scripted import SCRIPTED, scripted_agent, scripted_user
from ace_eval.span_export import add_span_options, exporting_spans
from ace_eval.tau2.data import load_tasks
from ace_eval.tau2.errors import Tau2Error
from ace_eval.tau2.metrics import compute_metrics, format_metrics
from ace_eval.tau2.regrade import RegradedSimulation, RegradeReport, regrade_results
from ace_eval.tau2.results import load_results
from ace_eval.tau2.runner import run_tasks

__all__ = ["register"]


def register(tau2: argparse.ArgumentParser) -> None:
    """Fill the parser of the `ace-eval tau2` command group: its sub-commands."""
    commands = tau2.add_subparsers(dest="tau2_command", metavar="COMMAND", required=True)
    regrade = commands.add_parser("regrade", help="re-grade a tau2 Results file and compare with its recorded rewards")
    regrade.add_argument("results", type=Path, help="a tau2 Results JSON file")
    regrade.add_argument(
        "--tasks", type=Path, help="grade with this tasks JSON list instead of the tasks embedded in the file"
    )
    regrade.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    regrade.set_defaults(handler=_regrade)
    metrics = commands.add_parser("metrics", help="pass^k, its 95%% CI and the per-task table of a Results file")
    metrics.add_argument("results", type=Path, help="a graded tau2 Results JSON file")
    metrics.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    metrics.set_defaults(handler=_metrics)
    _register_run(commands)


_MODEL_HELP = (
    'model string (litellm "provider/name" or pydantic-ai "provider:name", e.g. openai/gpt-4.1-mini), '
    '"scripted" (offline rule-based, default) or "test" (pydantic-ai TestModel)'
)

_RENAMED = {
    "agent_model": "--agent",
    "user_model": "--user",
    "num_trials": "--trials",
    "max_workers": "--workers",
    "max_num_steps": "--max-steps",
}
"""Earlier spellings of `tau2 run` options, kept as unlisted aliases (dest -> old flag)."""


def _register_run(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser("run", help="simulate airline tasks, grade them, write a Results file")
    run.add_argument("--agent-model", default=SCRIPTED, help=f"the agent's {_MODEL_HELP}")
    run.add_argument("--user-model", default=SCRIPTED, help=f"the simulated user's {_MODEL_HELP}")
    run.add_argument("--output", type=Path, required=True, help="Results JSON to write (rewritten as runs finish)")
    run.add_argument("--split", choices=("train", "test", "base"), default="test", help="task split (default test)")
    run.add_argument("--task-ids", nargs="+", metavar="ID", help="only these tasks of the split")
    run.add_argument("--num-trials", type=int, default=1, help="simulations per task (default 1)")
    run.add_argument("--max-workers", type=int, default=4, help="simulations in flight at once (default 4)")
    run.add_argument("--max-num-steps", type=int, default=200, help="step budget per simulation (default 200)")
    run.add_argument("--max-errors", type=int, default=10, help="tool-error budget per simulation (default 10)")
    run.add_argument("--agent-temperature", type=float, default=0.0, help="default 0.0")
    run.add_argument("--user-temperature", type=float, default=0.0, help="default 0.0")
    run.add_argument(
        "--seed",
        type=int,
        default=300,
        help="base of upstream's per-trial seeds, sent with every request of the trial (default 300)",
    )
    run.add_argument("--api-base", help="OpenAI-compatible server for both models (e.g. a local llama-server)")
    run.add_argument("--api-key", help="API key for --api-base (any string for a local server)")
    for dest, flag in _RENAMED.items():
        run.add_argument(flag, dest=dest, type=str if dest.endswith("_model") else int, help=argparse.SUPPRESS)
    add_span_options(run)
    run.set_defaults(handler=_run)


def _model(name: str, role: str, args: argparse.Namespace) -> Model:
    if name.strip() == SCRIPTED:
        return scripted_agent() if role == "agent" else scripted_user()
    return resolve_model(name, api_base=args.api_base, api_key=args.api_key)


def _run(args: argparse.Namespace) -> int:
    for option in ("num_trials", "max_workers", "max_num_steps", "max_errors"):
        if getattr(args, option) < 1:
            raise CommandError(f"--{option.replace('_', '-')} must be at least 1, got {getattr(args, option)}")
    try:
        agent, user = _model(args.agent_model, "agent", args), _model(args.user_model, "user", args)
        tasks = load_tasks(args.split)
    except (ModelResolutionError, Tau2Error) as exc:
        raise CommandError(str(exc)) from exc
    offline = [role for role in ("agent", "user") if getattr(args, f"{role}_model").strip() in (SCRIPTED, "test")]
    if offline:
        print(f"note: {' and '.join(offline)} run on offline models (not LLMs): the rewards measure plumbing")
    if args.task_ids:
        unknown = sorted(set(args.task_ids) - {task.id for task in tasks})
        if unknown:
            raise CommandError(f"task ids {unknown} are not in the {args.split} split")
        tasks = [task for task in tasks if task.id in set(args.task_ids)]
    with exporting_spans(args):
        outcome = asyncio.run(
            run_tasks(
                tasks,
                agent_model=agent,
                user_model=user,
                trials=args.num_trials,
                workers=args.max_workers,
                max_steps=args.max_num_steps,
                max_errors=args.max_errors,
                agent_temperature=args.agent_temperature,
                user_temperature=args.user_temperature,
                seed=args.seed,
                output_path=args.output,
            )
        )
    for failure in outcome.failures:
        print(f"task {failure.task_id} trial {failure.trial} failed: {failure.error}", file=sys.stderr)
    if outcome.results.simulations:
        print(format_metrics(compute_metrics(outcome.results.simulations)))
    print(f"results: {args.output}")
    return 1 if outcome.failures else 0


def _metrics(args: argparse.Namespace) -> int:
    try:
        metrics = compute_metrics(load_results(args.results).simulations)
    except Tau2Error as exc:
        raise CommandError(str(exc)) from exc
    print(json.dumps(dataclasses.asdict(metrics), indent=2) if args.json else format_metrics(metrics))
    return 0


def _regrade(args: argparse.Namespace) -> int:
    try:
        results = load_results(args.results)
        tasks = load_tasks(path=args.tasks) if args.tasks is not None else None
        report = regrade_results(results, tasks)
    except Tau2Error as exc:
        raise CommandError(str(exc)) from exc
    print(_as_json(report) if args.json else _as_text(report))
    return 0 if report.agreeing == report.graded else 1


def _row(sim: RegradedSimulation) -> dict[str, Any]:
    recorded_db = sim.recorded.db_check if sim.recorded else None
    return {
        "task_id": sim.task_id,
        "trial": sim.trial,
        "termination_reason": sim.termination_reason,
        "reward": sim.computed.reward,
        "db_match": sim.computed.db_check.db_match if sim.computed.db_check else None,
        "recorded_reward": sim.recorded.reward if sim.recorded else None,
        "recorded_db_match": recorded_db.db_match if recorded_db else None,
        "graded": sim.graded,
        "agrees": sim.agrees if sim.graded else None,
    }


def _as_json(report: RegradeReport) -> str:
    return json.dumps(
        {
            "simulations": [_row(sim) for sim in report.simulations],
            "agreeing": report.agreeing,
            "graded": report.graded,
        },
        indent=2,
    )


def _as_text(report: RegradeReport) -> str:
    lines = []
    for sim in report.simulations:
        row = _row(sim)
        head = f"task {row['task_id']} trial {row['trial']}: "
        if not sim.graded:
            lines.append(
                f"{head}not graded ({row['termination_reason']}, no recorded db_check); "
                f"reward {row['reward']} (recorded {row['recorded_reward']})"
            )
            continue
        verdict = "agree" if sim.agrees else "DISAGREE"
        lines.append(
            f"{head}reward {row['reward']} (recorded {row['recorded_reward']}), "
            f"db_match {row['db_match']} (recorded {row['recorded_db_match']}) {verdict}"
        )
    lines.append(f"agreement: {report.agreeing}/{report.graded}")
    return "\n".join(lines)
