"""How reliably the learning roles work on a model: Reflector, RecursiveReflector, SkillManager, N sessions each.

Usage:
  python benchmarks/role_reliability.py --model scripted [-n 5]          # offline FunctionModels
  python benchmarks/role_reliability.py --model openai/qwen15 --api-base http://127.0.0.1:8080/v1 \
      --api-key sk-local -n 5 [--context-window 8192]

Inputs are fixed: the N shortest recorded tau2 airline simulations of at least 8 messages
(tests/data/tau2/recorded; short enough for a 2-core CPU, long enough to hold a real exchange), each
with its upstream grade as feedback, and for the SkillManager a reflection with a lesson written from
that grade. Per role it prints: valid outputs, finished sessions, sessions with at least one skillbook
operation (SkillManager; every input holds a lesson), runaways (responses cut at the output cap),
the recovery wrapper's repairs, and the mean requests, input and output tokens and seconds per session.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.models import Model

from ace.agentic import AgenticConfig
from ace.models import UsageMeter, UsageTotals, metered, resolve_model
from ace.roles import RecursiveReflector, Reflector, ReflectorOutput, SkillManager
from ace.skillbook import InsightSource, Skillbook
from ace.steps import load_trace_file
from ace_eval import scripted
from ace_eval.tau2 import RewardInfo
from ace_eval.tau2.ace_task import describe_outcome

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from data_files import unpack_recorded

_MIN_MESSAGES = 8
_ROLES = ("Reflector", "RecursiveReflector", "SkillManager")


@dataclass
class RoleFigures:
    """What N sessions of one role did."""

    sessions: int = 0
    valid: int = 0
    finished: int = 0
    with_operation: int = 0
    seconds: float = 0.0
    usage: UsageTotals = field(default_factory=UsageTotals)
    recoveries: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)


def main() -> None:
    args = _arguments()
    with tempfile.TemporaryDirectory() as tmp:
        traces = _shortest_traces(unpack_recorded(Path(tmp)), args.n)
    print(
        f"model {args.model}; {len(traces)} recorded simulations, "
        f"{min(t['chars'] for t in traces)}-{max(t['chars'] for t in traces)} characters of messages"
    )
    figures = asyncio.run(_run_all(args, traces))
    print(
        f"\n{'role':<20} {'valid':>7} {'finished':>9} {'>=1 op':>7} {'runaways':>9} {'requests':>9} "
        f"{'in tok':>8} {'out tok':>8} {'seconds':>8}  repairs / failures"
    )
    for role, fig in figures.items():
        n = max(fig.sessions, 1)
        op = f"{fig.with_operation}/{fig.sessions}" if role == "SkillManager" else "-"
        print(
            f"{role:<20} {fig.valid:>3}/{fig.sessions:<3} {fig.finished:>5}/{fig.sessions:<3} {op:>7} "
            f"{fig.usage.truncated_responses:>9} {fig.usage.requests / n:>9.1f} {fig.usage.input_tokens / n:>8.0f} "
            f"{fig.usage.output_tokens / n:>8.0f} {fig.seconds / n:>8.1f}  "
            f"{dict(fig.recoveries) or '-'} / {dict(fig.failures) or '-'}"
        )


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help='a litellm model string, or "scripted"')
    parser.add_argument("--api-base")
    parser.add_argument("--api-key")
    parser.add_argument("-n", type=int, default=5, help="sessions per role (default 5)")
    parser.add_argument("--context-window", type=int, help="the model's context window, for a local alias")
    parser.add_argument("--roles", nargs="+", default=list(_ROLES), choices=_ROLES, help="roles to run (default: all)")
    return parser.parse_args()


def _shortest_traces(recorded: Path, n: int) -> list[dict[str, Any]]:
    traces = []
    for path in sorted(recorded.glob("*.json")):
        for trace in load_trace_file(path):
            simulation = trace["simulation"]
            if simulation.get("reward_info") is None or len(simulation["messages"]) < _MIN_MESSAGES:
                continue
            reward_info = RewardInfo.model_validate(simulation["reward_info"])
            trace["feedback"] = describe_outcome(reward_info, simulation["termination_reason"])
            trace["chars"] = sum(len(m.get("content") or "") for m in simulation["messages"])
            traces.append(trace)
    return sorted(traces, key=lambda t: (t["chars"], t["simulation"]["id"]))[:n]


async def _run_all(args: argparse.Namespace, traces: list[dict[str, Any]]) -> dict[str, RoleFigures]:
    config = AgenticConfig(max_requests=12, context_window_tokens=args.context_window)
    figures = {}
    for role in args.roles:
        meter = UsageMeter()
        model = metered(_model(args, role), meter)
        if role == "Reflector":
            runner: Any = Reflector(model)
        elif role == "RecursiveReflector":
            runner = RecursiveReflector(model, config=config)
        else:
            runner = SkillManager(model, config=config)
        figures[role] = await _sessions(role, runner, traces, meter)
    return figures


async def _sessions(role: str, runner: Any, traces: list[dict[str, Any]], meter: UsageMeter) -> RoleFigures:
    fig = RoleFigures()
    for trace in traces:
        before, started = meter.snapshot(), time.perf_counter()
        try:
            if role == "SkillManager":
                output: Any = await runner.update_skills(
                    reflections=[_lesson(trace)],
                    skillbook=Skillbook(),
                    source=_source(trace),
                    outcome=trace["feedback"],
                    question_context=_question(trace),
                )
                fig.finished += output.finished
                fig.valid += output.finished and not output.unbacked_claims
                fig.with_operation += bool(output.operations)
                if output.unbacked_claims:
                    fig.failures[f"claims {'+'.join(output.unbacked_claims)} not done"] += 1
            else:
                output = await runner.reflect(trace=trace, question=_question(trace), feedback=trace["feedback"])
                fig.finished += not output.failed
                fig.valid += not output.failed and all(
                    (output.error_identification, output.correct_approach, output.key_insight)
                )
                if output.failed:
                    fig.failures[(output.failure_reason or "failed")[:60]] += 1
        except Exception as exc:  # a benchmark counts failures; the message says which
            fig.failures[f"{type(exc).__name__}: {str(exc)[:60]}"] += 1
        fig.sessions += 1
        fig.seconds += time.perf_counter() - started
        fig.usage = fig.usage + (meter.snapshot() - before)
        print(f"  {role}: session {fig.sessions} done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    fig.recoveries.update(runner.recoveries)
    return fig


def _model(args: argparse.Namespace, role: str) -> Model:
    if args.model == scripted.SCRIPTED:
        make = {
            "Reflector": scripted.scripted_reflector,
            "RecursiveReflector": scripted.scripted_recursive_reflector,
            "SkillManager": scripted.scripted_skill_manager,
        }[role]
        return make()
    return resolve_model(args.model, api_base=args.api_base, api_key=args.api_key)


def _lesson(trace: dict[str, Any]) -> ReflectorOutput:
    """A reflection with a lesson, written from the simulation's grade (no model involved)."""
    question = _question(trace)
    feedback = trace["feedback"].replace("\n", "; ")
    succeeded = feedback.startswith("reward 1")
    return ReflectorOutput(
        reasoning=f"The run was graded: {feedback}.",
        error_identification="none; the request was completed" if succeeded else f"the request failed: {feedback}",
        root_cause_analysis="the agent followed the policy"
        if succeeded
        else "the agent did not complete the expected actions",
        correct_approach="verify the user, check the policy, take the expected action, confirm it",
        key_insight=f"For requests like '{question[:80]}', verify the user and the policy conditions, then take "
        "the action the policy allows and confirm it to the user.",
    )


def _source(trace: dict[str, Any]) -> InsightSource:
    return InsightSource(source_system="tau2", trace_id=trace["simulation"]["id"], sample_question=_question(trace))


def _question(trace: dict[str, Any]) -> str:
    instructions = trace["task"]["user_scenario"]["instructions"]
    return instructions if isinstance(instructions, str) else instructions["reason_for_call"]


if __name__ == "__main__":
    main()
