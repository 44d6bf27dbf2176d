"""Everything `ace-eval bench` checks before it calls any model; a problem is a `BenchInputError`.

- settings in range, known arms (each once) and feedback mode, valid request settings;
- items to run on: test items always, training items when an arm learns;
- the `oracle` arm only when the task set states its rules; the `icl` arm only with a learning phase
  (not when a saved skillbook is scored), and that skillbook readable (`load_saved_skillbook`);
- no mix of offline (scripted) and real models, and a provider credential for every real model
  unless `--api-base` or `--api-key` is given (`ace_eval.role_models.check_role_models`).
"""

from __future__ import annotations

from pathlib import Path

from ace.errors import UsageError
from ace.skillbook import Skillbook, SkillbookError, SkillbookFormatError
from ace_eval.bench.arms import ARMS, LEARNING_ARMS
from ace_eval.bench.config import BENCH_ROLES, BenchConfig
from ace_eval.bench.environment import FEEDBACK_MODES
from ace_eval.bench.task_set import TaskSet
from ace_eval.role_models import check_role_models

__all__ = ["BenchInputError", "check_run", "load_saved_skillbook"]


class BenchInputError(UsageError):
    """A setting or an input of `ace-eval bench` is wrong; found before any model is called. The
    message names the problem and the fix."""


def check_run(config: BenchConfig, task_set: TaskSet) -> None:
    """Raise `BenchInputError` for anything the module docstring lists."""
    limits = {
        "train_epochs": config.train_epochs,
        "trials": config.trials,
        "max_workers": config.max_workers,
        "skills_limit": config.skills_limit,
        "icl_budget": config.icl_budget,
    }
    limits.update(
        {
            name: value
            for name, value in (
                ("train_limit", config.train_limit),
                ("test_limit", config.test_limit),
                ("session_max_requests", config.session_max_requests),
            )
            if value is not None
        }
    )
    too_small = [f"{name}={value}" for name, value in limits.items() if value < 1]
    if too_small:
        raise BenchInputError(f"{', '.join(too_small)}: must be at least 1")
    if not config.arms:
        raise BenchInputError(f"no arm to run; choose among {', '.join(ARMS)}")
    unknown = [arm for arm in config.arms if arm not in ARMS]
    if unknown:
        raise BenchInputError(f"unknown arm(s) {', '.join(map(repr, unknown))}; choose among {', '.join(ARMS)}")
    if len(set(config.arms)) != len(config.arms):
        raise BenchInputError(f"arms {', '.join(config.arms)}: name each arm once")
    if config.feedback not in FEEDBACK_MODES:
        raise BenchInputError(f"feedback must be one of {', '.join(FEEDBACK_MODES)}; got {config.feedback!r}")
    for role in BENCH_ROLES:
        try:
            config.request_settings(role)
        except ValueError as exc:
            raise BenchInputError(f"request settings of the {role.replace('_', ' ')}: {exc}") from exc
    if not task_set.split("test"):
        raise BenchInputError(f"{task_set.name} has no usable test item; every arm is scored on the test split")
    if config.learns and not task_set.split("train"):
        raise BenchInputError(
            f"{task_set.name} has no usable training item, and arms "
            f"{', '.join(a for a in config.arms if a in LEARNING_ARMS)} learn from "
            "them; add training items or run only the none and oracle arms"
        )
    if config.skillbook is not None and "icl" in config.arms:
        raise BenchInputError(
            "the icl arm pastes the experience of a learning phase, and a run scoring a saved skillbook "
            f"({config.skillbook}) has none; leave icl out of --arms"
        )
    if "oracle" in config.arms and not task_set.rules:
        raise BenchInputError(
            f"the oracle arm injects the true rules, and {task_set.name} states none; leave oracle out of --arms"
        )
    try:
        check_role_models(
            {role: config.model_of(role) for role in BENCH_ROLES},
            api_base=config.server.api_base,
            api_key=config.server.api_key,
        )
    except ValueError as exc:
        raise BenchInputError(str(exc)) from None


def load_saved_skillbook(path: Path) -> Skillbook:
    """The saved skillbook a run scores instead of learning one; `BenchInputError` naming the file,
    what is wrong with it and what to give instead when it cannot be read."""
    try:
        return Skillbook.load_from_file(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    except SkillbookFormatError as exc:
        reason = "; ".join([str(exc), *getattr(exc, "__notes__", [])])
    except SkillbookError as exc:
        reason = str(exc)
    raise BenchInputError(
        f"--skillbook {path}: cannot load it ({reason}); give a skillbook JSON file, such as an earlier run's "
        "skillbook.json"
    )
