"""The run's account of itself: `summary.json` (the headline figures, what `ace serve --runs` lists),
`report.json` (every figure), `report.md` (the same, to read) and `report.html` (the same with
charts, self-contained: `report_html`).

Per arm: accuracy with its 95% interval, per item kind, and the agent's prompt tokens per answer.
Paired differences (`runner.COMPARISONS`) with their interval, McNemar p-value, fixed and broken
pairs and the harm on controls; the issue's targets, met or not; the learned skills verbatim and
per skill its attribution in the `learned` arm (accuracy where injected and where not, and the
item kinds it reached); the learning cost (wall time, requests, tokens per role); every answer.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

from ace.atomic_write import write_text_atomic
from ace_eval.bench.arms import ARM_QUESTIONS
from ace_eval.bench.report_html import render_bench_report_html
from ace_eval.bench.runner import BenchReport
from ace_eval.bench.scoring import PairedDifference, pair_key
from ace_eval.stats import binomial_exact_ci
from ace_eval.versions import package_versions

__all__ = ["CONTROL_HARM_LIMIT", "exit_status", "report_dict", "summary_dict", "write_reports"]

CONTROL_HARM_LIMIT = 0.02
"""The most control pairs the `learned` arm may break (against `none`) for the harm target."""

_PACKAGES = ("ace", "pydantic-ai-slim", "litellm", "numpy", "onnxruntime")


def write_reports(report: BenchReport) -> dict[str, Any]:
    """Write summary.json, report.json, report.md and report.html into the run folder (atomically
    each); returns the report.json data."""
    data = report_dict(report)
    out = report.config.output_dir
    write_text_atomic(out / "summary.json", json.dumps(summary_dict(data), indent=2) + "\n")
    write_text_atomic(out / "report.json", json.dumps(data, indent=2, default=str) + "\n")
    write_text_atomic(out / "report.md", markdown(report, data))
    write_text_atomic(out / "report.html", render_bench_report_html(data, run_name=out.name))
    return data


def summary_dict(data: dict[str, Any]) -> dict[str, Any]:
    """The headline of report data `data`: the `none` and `learned` arms in the shape of an e2e
    summary (`baseline` / `with_skills`, accuracy as pass^1) so one runs page lists both kinds."""
    scores = data["scores"]
    versus_none = next((d for d in data["differences"] if (d["arm"], d["baseline"]) == ("learned", "none")), None)
    return {
        "command": "ace-eval bench",
        "plumbing_only": data["plumbing_only"],
        "exit_status": data["exit_status"],
        "task_set": data["task_set"],
        "seed": data["seed"],
        "skills": data["learning"]["active_skills"],
        "baseline": _arm_headline("none", scores),
        "with_skills": _arm_headline("learned", scores),
        "difference": versus_none["difference"] if versus_none else None,
        "difference_ci95": versus_none["ci95"] if versus_none else None,
        "failures": data["failures"],
    }


def _arm_headline(arm: str, scores: dict[str, Any]) -> dict[str, Any] | None:
    if arm not in scores:
        return None
    return {"arm": arm, "pass_hat_k": {"1": scores[arm]["accuracy"]}, "ci95": scores[arm]["ci95"]}


def exit_status(report: BenchReport) -> int:
    """0 when every input line, learning sample and answer went through; else 1."""
    return 1 if report.failures else 0


def report_dict(report: BenchReport) -> dict[str, Any]:
    """Everything report.json holds (see the module docstring)."""
    config = report.config
    return {
        "plumbing_only": report.plumbing_only,
        "exit_status": exit_status(report),
        "task_set": report.task_set.name,
        "seed": config.seed,
        "feedback": config.feedback,
        "learn_from": config.learn_from,
        "saved_skillbook": str(config.skillbook) if config.skillbook is not None else None,
        "recheck": config.recheck,
        "counterexamples": config.counterexamples,
        "confirm": config.confirm,
        "worked_examples": config.worked_examples,
        "arms": list(config.arms),
        "items": {
            "train": len(report.train_items),
            "test": len(report.test_items),
            "trials": config.trials,
            "test_by_kind": dict(sorted(Counter(item.kind for item in report.test_items).items())),
        },
        "scores": {
            arm: {
                "gets": ARM_QUESTIONS[arm],
                "accuracy": score.accuracy,
                "ci95": list(score.ci95),
                "pairs": score.pairs,
                "correct": score.correct,
                "by_kind": score.by_kind,
                "prompt_tokens_per_item": report.prompt_tokens_per_item(arm),
                "failures": list(score.failures),
            }
            for arm, score in report.scores.items()
        },
        "differences": [_difference(difference) for difference in report.differences],
        "targets": _targets(report),
        "learning": _learning(report),
        "skills": [_skill(skill) for skill in report.skills],
        "retired": [{**_skill(skill), "reason": skill.occurrences[-1].learning_text} for skill in report.retired],
        "attribution": _attribution(report),
        "icl": dataclasses.asdict(report.icl) if report.icl is not None else None,
        "per_item": _per_item(report),
        "phases": [phase.to_dict() for phase in report.phases],
        "model_settings": report.model_settings,
        "recoveries": report.recoveries,
        "failures": list(report.failures),
        "config": _config(report),
        "versions": package_versions(_PACKAGES),
    }


def _difference(difference: PairedDifference) -> dict[str, Any]:
    data = dataclasses.asdict(difference)
    data["ci95"] = list(difference.ci95)
    data["control_harm"] = difference.control_harm
    return data


def _find(report: BenchReport, arm: str, baseline: str) -> PairedDifference | None:
    return next((d for d in report.differences if (d.arm, d.baseline) == (arm, baseline)), None)


def _targets(report: BenchReport) -> dict[str, Any]:
    """The issue's three targets for the `learned` arm; a target whose arms did not run is None."""
    versus_none, versus_icl = _find(report, "learned", "none"), _find(report, "learned", "icl")
    targets: dict[str, Any] = {
        "learned_beats_none": None,
        "learned_matches_icl_with_fewer_tokens": None,
        "control_harm_at_most_2_percent": None,
    }
    if versus_none is not None:
        targets["learned_beats_none"] = {
            "met": versus_none.ci95[0] > 0,
            "rule": "paired 95% CI of learned - none above 0",
            "difference": versus_none.difference,
            "ci95": list(versus_none.ci95),
            "mcnemar_p": versus_none.mcnemar_p,
        }
        harm = versus_none.control_harm
        if harm is not None:
            broken, pairs = len(versus_none.controls_broken), versus_none.control_pairs
            unaided = _broken_with_no_skill(report, versus_none.controls_broken)
            low, high = binomial_exact_ci(broken, pairs)
            note = f"{broken} of {pairs} broken ({harm:.0%}; exact 95% interval {low:.1%} to {high:.1%})"
            if unaided:
                note += f", {unaided} of them with no skill injected: the prompt of the none arm, answered differently"
            targets["control_harm_at_most_2_percent"] = {
                "met": harm <= CONTROL_HARM_LIMIT,
                "rule": "control pairs right in none but wrong in learned <= 2%",
                "broken": broken,
                "broken_with_no_skill_injected": unaided,
                "control_pairs": pairs,
                "share": harm,
                "share_ci95": [low, high],
                "note": note,
            }
    if versus_icl is not None:
        learned_tokens, icl_tokens = report.prompt_tokens_per_item("learned"), report.prompt_tokens_per_item("icl")
        fewer = learned_tokens is not None and icl_tokens is not None and learned_tokens < icl_tokens
        targets["learned_matches_icl_with_fewer_tokens"] = {
            "met": versus_icl.difference >= 0 and fewer,
            "rule": "learned - icl >= 0 with fewer prompt tokens per item",
            "difference": versus_icl.difference,
            "ci95": list(versus_icl.ci95),
            "mcnemar_p": versus_icl.mcnemar_p,
            "prompt_tokens_per_item": {"learned": learned_tokens, "icl": icl_tokens},
        }
    return targets


def _broken_with_no_skill(report: BenchReport, broken: tuple[str, ...]) -> int:
    """How many of the `learned` arm's `broken` pairs got no skill: their prompt was the none arm's, so
    the answer changed by the model's or the server's own variance, not by what was learned."""
    unaided = {pair_key(outcome) for outcome in report.outcomes["learned"] if not outcome.injected_skill_ids}
    return sum(key in unaided for key in broken)


def _learning(report: BenchReport) -> dict[str, Any]:
    phase = next((p for p in report.phases if p.name == "learning"), None)
    statuses = Counter(outcome.status for outcome in report.learning)
    return {
        "epochs": report.config.train_epochs if report.learning else 0,
        "samples": len(report.learning),
        "learned": statuses["learned"],
        "nothing_learned": statuses["nothing learned"],
        "failed": statuses["failed"],
        "active_skills": len(report.skills),
        "skillbook": str(report.skillbook_path) if report.skillbook_path else None,
        "seconds": round(phase.seconds, 3) if phase else 0.0,
        "usage": {role: totals.to_dict() for role, totals in phase.usage.items()} if phase else {},
        "outcomes": [outcome.to_dict() for outcome in report.learning],
    }


def _skill(skill: Any) -> dict[str, Any]:
    return {
        "id": skill.id,
        "section": skill.section,
        "issue": skill.issue,
        "insight": skill.insight,
        "keywords": list(skill.keywords),
        "used_count": skill.used_count,
        "helpful_count": skill.helpful_count,
        "harmful_count": skill.harmful_count,
        "neutral_count": skill.neutral_count,
        "counterexamples": list(skill.counterexample_questions),
        "backed_by": list(skill.backing_trace_uids),
    }


def _attribution(report: BenchReport) -> list[dict[str, Any]]:
    """Per learned skill, in the `learned` arm: accuracy of the answers it was injected into and of
    the others (None over no answer), and the item kinds it reached."""
    outcomes = report.outcomes.get("learned", ())
    kinds = {item.id: item.kind for item in report.test_items}
    rows = []
    for skill in report.skills:
        with_it = [o for o in outcomes if skill.id in o.injected_skill_ids]
        without = [o for o in outcomes if skill.id not in o.injected_skill_ids]
        rows.append(
            {
                "id": skill.id,
                "injected": len(with_it),
                "accuracy_injected": _accuracy(with_it),
                "accuracy_not_injected": _accuracy(without),
                "injected_by_kind": dict(sorted(Counter(kinds[o.item_id] for o in with_it).items())),
            }
        )
    return rows


def _accuracy(outcomes: list[Any]) -> float | None:
    return sum(o.correct for o in outcomes) / len(outcomes) if outcomes else None


def _per_item(report: BenchReport) -> list[dict[str, Any]]:
    rows = []
    for item in report.test_items:
        answers = {
            arm: [o.to_dict() for o in outcomes if o.item_id == item.id] for arm, outcomes in report.outcomes.items()
        }
        rows.append(
            {"id": item.id, "kind": item.kind, "question": item.question, "expected": item.expected, "answers": answers}
        )
    return rows


def _config(report: BenchReport) -> dict[str, Any]:
    config = dataclasses.asdict(report.config)
    config["server"] = {
        "api_base": report.config.server.api_base,
        "cache_prompts": report.config.server.cache_prompts,
        "cache_ttl": report.config.server.cache_ttl,
    }  # never the API key
    config["output_dir"] = str(report.config.output_dir)
    config["task_file"] = str(report.config.task_file) if report.config.task_file else None
    config["skillbook"] = str(report.config.skillbook) if report.config.skillbook else None
    config["role_settings"] = {role: s.to_dict() for role, s in report.config.role_settings.items()}
    return config


def markdown(report: BenchReport, data: dict[str, Any]) -> str:
    """report.md: the figures of `data` as tables, plumbing warning first."""
    config = report.config
    lines = [f"# ace-eval bench run: {config.output_dir.name}", ""]
    if report.plumbing_only:
        lines += [
            "**Plumbing only**: the roles ran on offline scripted models (not LLMs), which never read their "
            "skills or context: every arm scores the same by design. These figures show the benchmark "
            "works, not that anything learns.",
            "",
        ]
    items = data["items"]
    if config.skillbook is not None:
        learned = f"no learning phase: the skills of `{config.skillbook}` scored"
        learning = f"arms: {', '.join(config.arms)}"
    else:
        learned = f"{items['train']} training items x {config.train_epochs} epoch(s)"
        learning = (
            f"feedback while learning: `{config.feedback}`, learning from `{config.learn_from}`"
            f"{', lessons rechecked on their own item' if config.recheck else ''}"
            f"{', counterexamples checked' if config.counterexamples else ''}"
            f"{', lessons no second item backs retired' if config.confirm else ''}"
            f"{', skills carry their worked example' if config.worked_examples else ''}; "
            f"arms: {', '.join(config.arms)}"
        )
    lines += [
        f"- task set: `{data['task_set']}`, seed {config.seed}; {learned}, {items['test']} test items x "
        f"{items['trials']} trial(s)",
        f"- {learning}",
        f"- models: agent `{config.agent_model}`, {config.reflector_type} reflector `{config.reflector_model}`, "
        f"skill manager `{config.skill_manager_model}`",
        f"- exit status: {data['exit_status']} ({len(report.failures)} failure(s))",
        "",
        "## Arms",
        "",
        "| arm | what the agent gets | accuracy | 95% CI | correct / pairs | prompt tokens per item |",
        "|---|---|---|---|---|---|",
    ]
    for arm, score in data["scores"].items():
        tokens = score["prompt_tokens_per_item"]
        lines.append(
            f"| {arm} | {score['gets']} | {score['accuracy']:.3f} | [{score['ci95'][0]:.3f}, "
            f"{score['ci95'][1]:.3f}] | {score['correct']} / {score['pairs']} | "
            f"{'-' if tokens is None else f'{tokens:.0f}'} |"
        )
    lines += [
        "",
        "## Paired differences",
        "",
        "| arm - baseline | difference | paired 95% CI | exact McNemar p | fixed | broken | controls broken |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in data["differences"]:
        lines.append(
            f"| {d['arm']} - {d['baseline']} | {d['difference']:+.3f} | [{d['ci95'][0]:+.3f}, "
            f"{d['ci95'][1]:+.3f}] | {d['mcnemar_p']:.3g} | {len(d['fixed'])} | {len(d['broken'])} | "
            f"{len(d['controls_broken'])} / {d['control_pairs']} |"
        )
    lines += ["", "## Targets", ""]
    for name, target in data["targets"].items():
        title = name.replace("_", " ")
        if target is None:
            lines.append(f"- {title}: **not run**")
            continue
        note = f" ({target['note']})" if "note" in target else ""
        lines.append(f"- {title}: **{'met' if target['met'] else 'NOT met'}**: {target['rule']}{note}")
    kinds = sorted({kind for score in data["scores"].values() for kind in score["by_kind"]})
    lines += [
        "",
        "## Accuracy per item kind",
        "",
        "| kind | " + " | ".join(data["scores"]) + " |",
        "|---|" + "---|" * len(data["scores"]),
    ]
    for kind in kinds:
        cells = [f"{s['by_kind'][kind]:.2f}" if kind in s["by_kind"] else "-" for s in data["scores"].values()]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += _skills_markdown(data)
    learning = data["learning"]
    lines += [
        "",
        "## Learning cost",
        "",
        f"{learning['samples']} samples: {learning['learned']} learned from, {learning['nothing_learned']} "
        f"taught nothing, {learning['failed']} failed; {learning['seconds']:.0f} s.",
        "",
        "| role | requests | input tokens | output tokens |",
        "|---|---|---|---|",
    ]
    for role, usage in learning["usage"].items():
        lines.append(f"| {role} | {usage['requests']} | {usage['input_tokens']} | {usage['output_tokens']} |")
    if data["icl"] is not None:
        icl = data["icl"]
        lines += [
            "",
            f"The icl arm's context holds {icl['included']} of {icl['available']} training experiences, "
            f"{icl['tokens']} tokens (budget {icl['budget']}).",
        ]
    if report.failures:
        lines += ["", "## Failures", "", *(f"- {line}" for line in report.failures)]
    lines += [
        "",
        "## Phases",
        "",
        "| phase | seconds | role | requests | input tokens | output tokens |",
        "|---|---|---|---|---|---|",
    ]
    for phase in data["phases"]:
        for role, usage in phase["usage"].items():
            lines.append(
                f"| {phase['name']} | {phase['seconds']:.0f} | {role} | {usage['requests']} | "
                f"{usage['input_tokens']} | {usage['output_tokens']} |"
            )
    lines += [
        "",
        "## Answers",
        "",
        "| item | kind | expected | " + " | ".join(data["scores"]) + " |",
        "|---|---|---|" + "---|" * len(data["scores"]),
    ]
    for row in data["per_item"]:
        cells = ["".join("✓" if a["correct"] else "✗" for a in row["answers"][arm]) for arm in data["scores"]]
        lines.append(f"| {row['id']} | {row['kind']} | `{row['expected']}` | " + " | ".join(cells) + " |")
    lines += ["", "## Versions", "", *(f"- {name}: {version}" for name, version in data["versions"].items()), ""]
    return "\n".join(lines)


def _skills_markdown(data: dict[str, Any]) -> list[str]:
    lines = ["", "## Learned skills (verbatim)", ""]
    if data["retired"]:
        lines += [
            "Retired after learning, as no second training item backed them (not used by any arm):",
            "",
            *(
                f"- **{skill['id']}**: issue: {skill['issue']} / insight: {skill['insight']}"
                for skill in data["retired"]
            ),
            "",
        ]
    if not data["skills"]:
        return lines + ["(none)"]
    attribution = {row["id"]: row for row in data["attribution"]}
    for skill in data["skills"]:
        row = attribution[skill["id"]]
        rates = " / ".join(
            "-" if r is None else f"{r:.2f}" for r in (row["accuracy_injected"], row["accuracy_not_injected"])
        )
        reached = ", ".join(f"{kind} x{count}" for kind, count in row["injected_by_kind"].items()) or "nothing"
        lines += [
            f"- **{skill['id']}** ({skill['section']}; keywords: {', '.join(skill['keywords'])})",
            f"  - issue: {skill['issue']}",
            f"  - insight: {skill['insight']}",
            f"  - learned arm: injected into {row['injected']} answers ({reached}); accuracy injected / not: {rates}; "
            "helpful / harmful / neutral: "
            f"{skill['helpful_count']} / {skill['harmful_count']} / {skill['neutral_count']}",
            *(f"  - counterexample: {question}" for question in skill["counterexamples"]),
            f"  - backed by: {', '.join(skill['backed_by']) or 'no trace'}",
        ]
    return lines
