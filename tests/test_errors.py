"""One error root: every error class of ace and ace_eval is an `AceError`, and keeps its built-in base."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import ace
import ace_eval
from ace.errors import AceError
from ace.skillbook import Skillbook, SkillbookError, SkillbookFormatError, SkillNotFoundError


def _modules(public_only: bool) -> list[ModuleType]:
    modules = []
    for package in (ace, ace_eval):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            private = any(part.startswith("_") for part in info.name.split(".")[1:])
            if public_only and private:
                continue
            modules.append(importlib.import_module(info.name))
    return modules


def _is_error(value: object) -> bool:
    return inspect.isclass(value) and issubclass(value, BaseException) and not issubclass(value, Warning)


def _exported_errors() -> set[type[BaseException]]:
    return {
        getattr(module, name)
        for module in _modules(public_only=True)
        for name in getattr(module, "__all__", ())
        if _is_error(getattr(module, name))
    }


def _defined_errors() -> set[type[BaseException]]:
    return {
        value
        for module in _modules(public_only=False)
        for value in vars(module).values()
        if _is_error(value) and value.__module__ == module.__name__
    }


def test_every_exported_error_of_a_public_module_is_an_ace_error() -> None:
    errors = _exported_errors()

    assert len(errors) >= 25  # the walk found the family, not an empty list
    assert sorted(e.__qualname__ for e in errors if not issubclass(e, AceError)) == []


def test_every_error_class_defined_anywhere_in_ace_or_ace_eval_is_an_ace_error() -> None:
    # Private modules too: an error raised from one reaches callers all the same.
    assert sorted(f"{e.__module__}.{e.__qualname__}" for e in _defined_errors() if not issubclass(e, AceError)) == []


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        ("ace.skillbook", "SkillbookError", ValueError),
        ("ace.skillbook", "SkillbookFormatError", ValueError),
        ("ace.skillbook", "SkillNotFoundError", KeyError),
        ("ace.untrusted", "UntrustedInputError", ValueError),
        ("ace.agentic.sandbox", "SandboxError", RuntimeError),
        ("ace.retrieval.embedder", "EmbeddingError", RuntimeError),
        ("ace.retrieval.rerankers", "RerankError", RuntimeError),
        ("ace.retrieval.local_embedder", "ModelChecksumError", RuntimeError),
        ("ace.models", "ModelResolutionError", ValueError),
        ("ace.roles.skill_source", "UnknownSkillError", ValueError),
        ("ace.roles.skill_manager", "SkillManagerIncompleteError", RuntimeError),
        ("ace.traces", "TraceFileError", ValueError),
        ("ace_eval.e2e.preflight", "E2EInputError", ValueError),
    ],
)
def test_an_error_keeps_the_builtin_base_callers_already_catch(module: str, name: str, builtin: type) -> None:
    error = getattr(importlib.import_module(module), name)

    assert issubclass(error, AceError) and issubclass(error, builtin)


def test_unknown_skill_is_a_skillbook_error_and_still_a_key_error_with_a_readable_message() -> None:
    with pytest.raises(SkillbookError) as caught:
        Skillbook().tag_skill("context-00042", 1)

    error = caught.value
    assert isinstance(error, SkillNotFoundError) and isinstance(error, KeyError)
    assert str(error) == "no skill with id 'context-00042'"
    assert error.skill_id == "context-00042" and error.args == ("context-00042",)


def test_one_except_clause_catches_skillbook_and_pipeline_errors_alike() -> None:
    from ace.pipeline import Pipeline

    caught = []
    for fail in (lambda: Skillbook.from_dict({"schema_version": "1"}), lambda: Pipeline([object()])):
        try:
            fail()
        except AceError as error:
            caught.append(type(error).__name__)

    assert caught == [SkillbookFormatError.__name__, "PipelineConfigError"]


def test_the_examples_of_docs_errors_md_run_and_print_what_they_say(capsys: pytest.CaptureFixture[str]) -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
    [block] = re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)
    exec(compile(block, str(doc), "exec"), {})

    assert capsys.readouterr().out.splitlines() == [
        "no skill with id 'context-00042'",
        "SkillbookError insight must be a non-empty string, got None",
    ]


BARE_VALUE_ERROR_ALLOWED = {
    "ace/skillbook/storage/_sidecar.py": "the .npz parser; load_embeddings turns each into a SkillbookFormatError",
    "ace/retrieval/rerankers/litellm_reranker.py": "a malformed provider answer, turned into a RerankError at once",
    "ace/server/_inputs.py": "pydantic validators, which must raise ValueError (answered 422)",
    "ace_eval/bench/task_file.py": "the line parser; load_task_file turns each into that line's failure",
    "ace_eval/spans/_reader.py": "the span parser; the reader turns each into a SpanFileError",
    "ace_eval/tau2/environment.py": "a tool the agent named does not exist: upstream's error message for the agent",
}
"""Modules whose `raise ValueError(...)` never reaches a caller, and why."""


def _raises_bare_value_error(path: Path) -> bool:
    import ast

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            if isinstance(node.exc.func, ast.Name) and node.exc.func.id == "ValueError":
                return True
    return False


def test_a_refused_argument_is_never_a_bare_value_error() -> None:
    root = Path(__file__).resolve().parents[1]
    raising = {
        str(path.relative_to(root))
        for package in ("ace", "ace_eval")
        for path in (root / package).rglob("*.py")
        if _raises_bare_value_error(path)
    }

    assert raising == set(BARE_VALUE_ERROR_ALLOWED)


def _epochs_zero() -> None:
    from pydantic_ai.models.test import TestModel

    from ace.roles import Agent, Reflector, SkillManager
    from ace.runners import ACE

    skillbook = Skillbook()
    ace = ACE.from_roles(
        agent=Agent(TestModel()),
        reflector=Reflector(TestModel()),
        skill_manager=SkillManager(TestModel()),
        skillbook=skillbook,
    )
    ace.run(["a question"], epochs=0)


def _workers_zero() -> None:
    from ace.pipeline import Pipeline, StepContext

    class Unchanged:
        requires: frozenset[str] = frozenset()
        provides: frozenset[str] = frozenset()

        def __call__(self, ctx: StepContext) -> StepContext:
            return ctx

    Pipeline([Unchanged()]).run([StepContext(sample="a sample")], workers=0)


def _floor_two() -> None:
    from ace.retrieval import SkillMatcher

    SkillMatcher(Skillbook(), floor=2)


def _delta_two() -> None:
    skillbook = Skillbook()
    skillbook.add_skill("context", "An issue.", ["k"], "An insight.")
    skillbook.tag_skill("context-00001", 2)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (_epochs_zero, "UsageError"),
        (_workers_zero, "PipelineConfigError"),
        (_floor_two, "UsageError"),
        (_delta_two, "SkillbookError"),
    ],
    ids=["epochs", "workers", "floor", "delta"],
)
def test_a_refused_argument_is_an_ace_error_and_a_value_error(call: Callable[[], None], error: str, request) -> None:
    argument = request.node.callspec.id
    with pytest.raises(AceError, match=argument) as caught:
        call()

    assert type(caught.value).__name__ == error and isinstance(caught.value, ValueError)


def test_every_error_class_is_documented_and_exported_by_a_public_module() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text(encoding="utf-8")
    exported = {name for module in _modules(public_only=True) for name in getattr(module, "__all__", ())}
    errors = {error.__name__ for error in _defined_errors()}

    assert len(errors) >= 35
    assert sorted(name for name in errors if not re.search(rf"\b{name}\b", doc)) == []
    assert sorted(errors - exported) == []
