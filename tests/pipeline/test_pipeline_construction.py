"""Pipeline and Branch validate their wiring when built, with messages naming what is wrong."""

from __future__ import annotations

import pytest
from pipeline_helpers import AddOne, AsyncDouble, FailOn, GatedStep, NumberContext, SyncProbe

from ace.pipeline import Branch, Pipeline, PipelineConfigError, PipelineOrderError, StepContext


class Needs:
    """A step declaring arbitrary requires/provides."""

    def __init__(self, name: str, requires: set[str], provides: set[str]) -> None:
        self.name = name
        self.requires = frozenset(requires)
        self.provides = frozenset(provides)

    def __call__(self, ctx: StepContext) -> StepContext:
        return ctx


def test_step_requiring_a_field_only_a_later_step_provides_raises_order_error_naming_all_three() -> None:
    with pytest.raises(PipelineOrderError, match=r"step 'Reflect' requires 'trace'.*later step 'Act' provides"):
        Pipeline([Needs("Reflect", {"trace"}, {"reflection"}), Needs("Act", set(), {"trace"})])


def test_step_that_rewrites_a_field_may_precede_another_step_that_rewrites_it() -> None:
    pipeline = Pipeline([Needs("Trim", {"text"}, {"text"}), Needs("Lower", {"text"}, {"text"})])
    assert pipeline.requires == {"text"}


def test_field_provided_by_no_step_is_an_external_requirement_not_an_order_error() -> None:
    pipeline = Pipeline([Needs("Act", {"task"}, {"trace"}), Needs("Reflect", {"trace"}, {"reflection"})])
    assert pipeline.requires == {"task"}
    assert pipeline.provides == {"trace", "reflection"}


def test_nested_pipeline_requires_only_what_its_steps_need_from_outside() -> None:
    inner = Pipeline([Needs("Act", {"task"}, {"trace"}), Needs("Reflect", {"trace", "skills"}, {"reflection"})])
    assert inner.requires == {"task", "skills"}
    outer = Pipeline([Needs("Load", set(), {"skills"}), inner])
    assert outer.requires == {"task"}
    assert outer.provides == {"skills", "trace", "reflection"}


def test_object_without_requires_raises_config_error_naming_it() -> None:
    class NoContract:
        def __call__(self, ctx: StepContext) -> StepContext:
            return ctx

    with pytest.raises(PipelineConfigError, match=r"step 1 of Pipeline 'Pipeline' \(NoContract .*no `requires`"):
        Pipeline([AddOne(), NoContract()])


def test_object_that_is_not_callable_raises_config_error_naming_it() -> None:
    class Inert:
        requires = frozenset()
        provides = frozenset()

    with pytest.raises(PipelineConfigError, match=r"Inert .*is not callable"):
        Pipeline([Inert()])


def test_requires_given_as_a_string_raises_config_error() -> None:
    step = Needs("Odd", set(), set())
    step.requires = "trace"  # type: ignore[assignment]
    with pytest.raises(PipelineConfigError, match=r"`requires` = 'trace'; expected a frozenset"):
        Pipeline([step])


def test_two_async_boundaries_raise_config_error_naming_both() -> None:
    with pytest.raises(PipelineConfigError, match=r"2 async boundary steps \('Reflect', 'Update'\)"):
        Pipeline([SyncProbe("Reflect", async_boundary=True), SyncProbe("Update", async_boundary=True)])


def test_nested_pipeline_with_an_async_boundary_raises_config_error() -> None:
    inner = Pipeline([AddOne(), GatedStep("Reflect", async_boundary=True)], name="tail")
    with pytest.raises(PipelineConfigError, match=r"step 'tail' .* async boundary at 'Reflect'"):
        Pipeline([AddOne("First"), inner])


def test_bad_max_workers_raises_config_error() -> None:
    with pytest.raises(PipelineConfigError, match=r"`max_workers` = 0"):
        Pipeline([SyncProbe(max_workers=0)])


def test_empty_pipeline_raises_config_error() -> None:
    with pytest.raises(PipelineConfigError, match="no steps"):
        Pipeline([])


@pytest.mark.parametrize(
    ("steps", "expected"),
    [(AddOne(), r"expects a list of steps; got AddOne"), ("AddOne", r"expects a list of steps; got str")],
)
def test_steps_that_are_not_a_list_raise_type_error_naming_the_object(steps: object, expected: str) -> None:
    with pytest.raises(TypeError, match=expected):
        Pipeline(steps)  # type: ignore[arg-type]


def test_branch_child_that_is_not_a_step_raises_config_error_naming_it() -> None:
    with pytest.raises(PipelineConfigError, match=r"child 1 of Branch 'Branch' \(int 3\)"):
        Branch(AddOne(), 3)  # type: ignore[arg-type]


def test_branch_name_that_is_not_a_string_raises_type_error() -> None:
    with pytest.raises(TypeError, match=r"Branch name must be a non-empty str; got int 3"):
        Branch(AddOne(), name=3)  # type: ignore[arg-type]


def test_branch_with_unknown_merge_strategy_raises_config_error() -> None:
    with pytest.raises(PipelineConfigError, match=r"merge='first_wins'"):
        Branch(AddOne(), AsyncDouble(), merge="first_wins")  # type: ignore[arg-type]


def test_branch_child_with_async_boundary_raises_config_error() -> None:
    with pytest.raises(PipelineConfigError, match=r"child 'Reflect' of Branch 'Branch' has an async boundary"):
        Branch(AddOne(), GatedStep("Reflect", async_boundary=True))


def test_branch_contract_is_the_union_of_its_children() -> None:
    branch = Branch(AddOne(), AsyncDouble(), FailOn(set()))
    assert branch.requires == {"x"}
    assert branch.provides == {"x", "y", "log"}


def test_context_type_missing_a_field_the_steps_name_raises_config_error_at_run() -> None:
    pipeline = Pipeline([AddOne()])
    with pytest.raises(PipelineConfigError, match=r"step 'AddOne' .* field '(x|log)', which StepContext does not have"):
        pipeline.run([StepContext(sample=0)])
    assert pipeline.run([NumberContext(sample=0)])[0].ok
