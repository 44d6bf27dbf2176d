"""`ace learn TRACES... --skillbook PATH`: learn a skillbook from recorded traces with `TraceAnalyser`.

Traces: files or folders of our JSON / JSONL traces, tau2 Results files and OpenTelemetry span
files (OTLP JSON lines, one trace per root agent run; see `docs/loop.md`). The skillbook - a JSON
file or a `postgresql://` URL - is loaded (or started empty when it does not exist), held under
`Skillbook.locked` for the run (learners on one skillbook take turns: a second one is refused while
the first runs) and saved at the end; the report says what changed (skills added / updated / tagged
/ removed, with ids, from finished sessions only: a session that did not finish was rolled back) and
what became of each trace (learned / nothing learned / failed, one line per failure).

Exit codes: 0 every trace was learned from (or had nothing to teach); 1 a trace failed (the
skillbook is still saved with what the others taught); 2 bad input, before any model is called.

Seam for callers and tests: the handler resolves `args.reflector_model` / `args.skill_manager_model`
with `ace.models.resolve_model`, which takes a pydantic-ai `Model` instance as it is, so
`args = make_parser(argv).parse_args(argv); args.reflector_model = FunctionModel(...);
args.handler(args)` runs the command on in-process models.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ace.cli._app import CommandError
from ace.cli._request_flags import add_model_server_flags, add_request_flags, positive_int
from ace.cli._skillbook_file import load_skillbook, shown, skillbook_location, terminal_text

if TYPE_CHECKING:
    from ace.pipeline import SampleResult
    from ace.roles import RecursiveReflector, Reflector, SkillManager
    from ace.skillbook import Skillbook

__all__ = ["register"]


_MODEL_HELP = (
    'model string (litellm "provider/name" or pydantic-ai "provider:name", e.g. openai/gpt-4.1-mini; '
    'with --api-base, openai/<served-name>) or "test" (pydantic-ai TestModel, offline: it calls every '
    "tool with made-up arguments: a smoke run of the plumbing, whose sessions usually fail)"
)
_KINDS = ("ADD", "UPDATE", "TAG", "REMOVE")
_REPORTED = {"ADD": "added", "UPDATE": "updated", "TAG": "tagged", "REMOVE": "removed"}


def register(parser: argparse.ArgumentParser) -> None:
    """Fill the parser of `ace learn`."""
    parser.description = (
        "Run the Reflector and the SkillManager over recorded traces (TraceAnalyser) and save what they "
        "learned into a skillbook. TRACES are files or folders (searched for .json/.jsonl): our JSON/JSONL "
        "traces, tau2 Results files, or OpenTelemetry GenAI span files (OTLP JSON lines as written by "
        'FileSpanExporter; one trace per root agent run). The model "test" runs offline on pydantic-ai\'s '
        "TestModel: a smoke run of the plumbing, not learning - it calls every tool with made-up arguments, "
        "so its sessions usually stop short and the run exits 1; the scripted models of ace-eval are not "
        "available here. Exit 0: every trace learned from or nothing to learn; 1: a trace "
        "failed; 2: bad input."
    )
    parser.add_argument("traces", nargs="+", type=Path, metavar="TRACES", help="trace files or folders")
    parser.add_argument(
        "--skillbook",
        type=skillbook_location,
        required=True,
        metavar="SKILLBOOK",
        help="skillbook JSON file or postgresql:// URL to learn into (started empty when it does not exist)",
    )
    parser.add_argument("--reflector-model", required=True, help=_MODEL_HELP)
    parser.add_argument("--skill-manager-model", required=True, help=_MODEL_HELP)
    parser.add_argument(
        "--reflector-type",
        choices=["rr", "simple"],
        default="rr",
        help="rr: RecursiveReflector, code over the trace in a sandbox (default); simple: one pass",
    )
    add_model_server_flags(parser, models="the models")
    parser.add_argument("--epochs", type=positive_int, default=1, help="passes over the traces (default 1)")
    parser.add_argument("--workers", type=positive_int, default=4, help="traces learned from at once (default 4)")
    parser.add_argument(
        "--checkpoint-dir",
        type=Path,
        help="write checkpoint_<n>.json and latest.json here every --checkpoint-interval traces",
    )
    parser.add_argument(
        "--checkpoint-interval", type=positive_int, default=10, help="traces between checkpoints (default 10)"
    )
    add_request_flags(parser, ("reflector", "skill-manager"), everyone="both roles")
    parser.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    missing = [str(path) for path in args.traces if not path.exists()]
    if missing:
        raise CommandError(f"no such trace file or folder: {', '.join(missing)}")
    _check_credentials(args)  # before anything heavy loads: a missing key answers at once

    import filelock
    from tqdm import tqdm

    from ace.models import ModelConfigurationError
    from ace.runners import TraceAnalyser
    from ace.skillbook import Skillbook, SkillbookError

    location = shown(args.skillbook)
    if isinstance(args.skillbook, Path) and args.skillbook.is_dir():
        raise CommandError(f"{location}: is a folder; give the skillbook's JSON file")
    load_skillbook(args.skillbook, missing_ok=True)  # a malformed skillbook is a one-line error before any model runs
    try:
        with Skillbook.locked(args.skillbook, timeout=0) as skillbook:
            reflector, skill_manager = _roles(args, skillbook)
            before = len(skillbook.skills())
            analyser = TraceAnalyser.from_roles(
                reflector=reflector,
                skill_manager=skill_manager,
                skillbook=skillbook,
                reflect_workers=args.workers,
                checkpoint_dir=args.checkpoint_dir,
                checkpoint_interval=args.checkpoint_interval,
            )
            tqdm.write(
                f"learning from {len(args.traces)} path(s), {args.epochs} epoch(s) into {location} "
                f"({before} active skills; {args.reflector_type} reflector {_name(args.reflector_model)}, "
                f"skill manager {_name(args.skill_manager_model)})"
            )
            results = analyser.run(list(args.traces), epochs=args.epochs, workers=args.workers)
    except ModelConfigurationError as exc:  # every trace failed on it: nothing was written
        raise CommandError(str(exc)) from None
    except filelock.Timeout:
        holder = f" ({location}.lock)" if isinstance(args.skillbook, Path) else ""
        raise CommandError(f"{location} is locked by another writer{holder}; try again when it is done") from None
    except SkillbookError as exc:  # the database went away, or a write was refused
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"{location}: cannot write ({exc.strerror or exc})") from None
    report = LearnReport.of(results)
    print(report.format(location, len(skillbook.skills())))
    return 1 if report.failures else 0


def _check_credentials(args: argparse.Namespace) -> None:
    """A provider credential the models need and the environment lacks is a one-line error."""
    from ace.models import ModelConfigurationError, check_credentials

    if args.api_base is not None or args.api_key is not None:
        return
    models = {role.replace("_", " "): getattr(args, f"{role}_model") for role in ("reflector", "skill_manager")}
    try:
        check_credentials(
            {
                role: model
                for role, model in models.items()
                if isinstance(model, str) and model not in ("test", "scripted")
            }
        )
    except ModelConfigurationError as exc:
        raise CommandError(str(exc)) from None


def _roles(args: argparse.Namespace, skillbook: Skillbook) -> tuple[Reflector | RecursiveReflector, SkillManager]:
    from ace.agentic import AgenticConfig
    from ace.models import ModelResolutionError, RequestSettings, resolve_model
    from ace.roles import RecursiveReflector, Reflector, SkillManager

    models = {}
    for role in ("reflector", "skill_manager"):
        name = getattr(args, f"{role}_model")
        if name == "scripted":
            raise CommandError(
                f"--{role.replace('_', '-')}-model scripted: the scripted models belong to ace-eval "
                '(ace-eval e2e --traces); use "test" for an offline smoke run, or a real model'
            )
        try:
            models[role] = resolve_model(
                name,
                api_base=args.api_base,
                api_key=args.api_key,
                cache_prompts=args.cache_prompts,
                cache_ttl=args.cache_ttl,
            )
        except ModelResolutionError as exc:
            raise CommandError(f"--{role.replace('_', '-')}-model: {exc}") from exc
    defaults = {
        "reflector": RecursiveReflector.DEFAULT_SETTINGS if args.reflector_type == "rr" else Reflector.DEFAULT_SETTINGS,
        "skill_manager": SkillManager.DEFAULT_SETTINGS,
    }
    settings: dict[str, RequestSettings] = {}
    for role, default in defaults.items():
        try:
            settings[role] = default.overridden(
                max_output_tokens=args.max_output_tokens,
                temperature=args.temperature,
                timeout_seconds=args.request_timeout,
                structured_output=args.structured_output,
                extra_body=args.extra_body,
            ).overridden(
                max_output_tokens=getattr(args, f"{role}_max_output_tokens"),
                temperature=getattr(args, f"{role}_temperature"),
                extra_body=getattr(args, f"{role}_extra_body"),
            )
        except ValueError as exc:
            raise CommandError(f"request settings of the {role.replace('_', ' ')}: {exc}") from exc
    config = AgenticConfig(context_window_tokens=args.context_window)
    reflector: Reflector | RecursiveReflector
    if args.reflector_type == "rr":
        reflector = RecursiveReflector(
            models["reflector"], skillbook=skillbook.view(), settings=settings["reflector"], config=config
        )
    else:
        reflector = Reflector(models["reflector"], settings=settings["reflector"])
    return reflector, SkillManager(models["skill_manager"], settings=settings["skill_manager"], config=config)


def _name(model: Any) -> str:
    return model if isinstance(model, str) else type(model).__name__


class LearnReport:
    """What a learning run changed and what became of each trace (one `SampleResult` per trace
    per epoch): a trace is learned from only when its SkillManager session finished with an
    operation; finished without one, nothing learned; anything else failed."""

    def __init__(self) -> None:
        self.changed: dict[str, list[str]] = {kind: [] for kind in _KINDS}
        """Skill ids per operation kind (ADD, UPDATE, TAG, REMOVE), each id once, in order."""
        self.learned = 0
        """Traces whose finished session changed the skillbook."""
        self.nothing_learned = 0
        """Traces whose finished session changed nothing."""
        self.failures: list[str] = []
        """One line per failed trace: epoch, trace, step and reason."""

    @classmethod
    def of(cls, results: Sequence[SampleResult]) -> LearnReport:
        """Classify `results` (of `TraceAnalyser.run`)."""
        from ace.steps import ACEStepContext

        report = cls()
        for result in results:
            ctx = result.output if result.output is not None else result.sample
            assert isinstance(ctx, ACEStepContext)
            output = ctx.skill_manager_output
            # only a finished session writes: one that stopped short was rolled back
            operations = output.operations if output is not None and result.error is None else ()
            for operation in operations:
                ids = report.changed[operation.type]
                if operation.skill_id and operation.skill_id not in ids:
                    ids.append(operation.skill_id)
            reason = None
            if result.error is not None:
                reason = f"{result.failed_at}: {type(result.error).__name__}: {result.error}"
            elif ctx.reflection_failure is not None:
                reason = f"ReflectStep: the reflection failed: {ctx.reflection_failure}"
            elif output is None or not output.finished:
                reason = "UpdateStep: the SkillManager session did not finish" + (
                    f" ({output.reasoning})" if output else ""
                )
            if reason is not None:
                report.failures.append(f"epoch {ctx.epoch}: {_trace_label(ctx)}: {reason}")
            elif output is not None and output.operations:
                report.learned += 1
            else:
                report.nothing_learned += 1
        return report

    def format(self, location: str, active_skills: int) -> str:
        """The report as printed: failures first, then the changes and the counts."""
        lines = [f"failure: {terminal_text(line, one_line=True)}" for line in self.failures]
        for kind in _KINDS:
            ids = self.changed[kind]
            lines.append(f"skills {_REPORTED[kind]}: {len(ids)}" + (f" ({', '.join(ids)})" if ids else ""))
        lines.append(
            f"traces: learned from {self.learned}, nothing learned {self.nothing_learned}, failed {len(self.failures)}"
        )
        lines.append(terminal_text(f"skillbook: {active_skills} active skills -> {location}", one_line=True))
        return "\n".join(lines)


def _trace_label(ctx: Any) -> str:
    from ace.steps import LoadTracesStep, TraceFileError, TraceLocation, infer_trace_identity

    if ctx.trace is None:  # a sample that failed keeps the context it started with
        sample = ctx.sample
        if not isinstance(sample, TraceLocation):
            return "trace"
        try:
            ctx = LoadTracesStep()(ctx)  # the file is parsed once and cached: this only names the trace
        except TraceFileError:
            return f"{sample.path} trace {sample.index}"
    try:
        identity = infer_trace_identity(ctx.trace, metadata=ctx.metadata)
    except ValueError:
        return str(ctx.metadata.get("display_name") or "trace")
    return f"{identity.display_name} ({identity.trace_uid})" if identity.display_name else identity.trace_uid
