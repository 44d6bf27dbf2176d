"""Branch: children run concurrently on one input, all finish, failures collected, outputs merged."""

from __future__ import annotations

from collections.abc import Sequence

from pipeline_helpers import AddOne, AsyncDouble, AsyncProbe, FailOn, NumberContext, contexts

from ace.pipeline import (
    Branch,
    BranchConflictError,
    BranchError,
    CancellationToken,
    Pipeline,
    PipelineCancelled,
    StepContext,
)


class SetField:
    """Async step setting one field to a fixed value."""

    requires = frozenset()

    def __init__(self, name: str, **values: int) -> None:
        self.name = name
        self.values = values
        self.provides = frozenset(values)
        self.calls = 0

    async def __call__(self, ctx: NumberContext) -> NumberContext:
        self.calls += 1
        return ctx.replace(**self.values)


async def test_children_run_concurrently_on_the_same_input() -> None:
    left, right = AsyncProbe("Left", parties=2), AsyncProbe("Right", parties=2)
    left.barrier = right.barrier
    results = await Pipeline([Branch(left, right)]).run_async(contexts(1))
    assert results[0].ok, results[0].error  # each child waited for the other at the barrier


def test_outputs_of_children_writing_different_fields_are_merged() -> None:
    results = Pipeline([Branch(SetField("X", x=7), SetField("Y", y=9))]).run(contexts(1))
    assert (results[0].output.x, results[0].output.y) == (7, 9)


def test_a_failing_child_does_not_stop_the_others_and_all_failures_are_listed() -> None:
    survivor = SetField("Survivor", y=1)
    branch = Branch(FailOn({0}, name="First"), survivor, FailOn({0}, name="Third"), name="fork")
    [result] = Pipeline([branch]).run(contexts(1))
    assert survivor.calls == 1
    assert isinstance(result.error, BranchError)
    assert [name for name, _ in result.error.failures] == ["First", "Third"]
    assert all(isinstance(error, ValueError) for _, error in result.error.failures)
    assert result.failed_at == "fork"


def test_children_setting_a_field_to_different_values_raise_a_conflict_by_default() -> None:
    [result] = Pipeline([Branch(SetField("A", x=1), SetField("B", x=2))]).run(contexts(1))
    assert isinstance(result.error, BranchConflictError)
    assert result.error.conflicts == {"x": ("A", "B")}
    assert "'x' written by A, B" in str(result.error)


def test_children_setting_a_field_to_the_same_value_do_not_conflict() -> None:
    [result] = Pipeline([Branch(SetField("A", x=5), SetField("B", x=5, y=1))]).run(contexts(1))
    assert (result.output.x, result.output.y) == (5, 1)


def test_last_write_wins_keeps_the_later_childs_value() -> None:
    branch = Branch(SetField("A", x=1, y=3), SetField("B", x=2), merge="last_write_wins")
    [result] = Pipeline([branch]).run(contexts(1))
    assert (result.output.x, result.output.y) == (2, 3)


def test_a_merge_function_receives_the_input_and_every_output_in_child_order() -> None:
    def total(ctx: StepContext, outputs: Sequence[NumberContext]) -> NumberContext:
        return ctx.replace(y=sum(output.x for output in outputs))

    branch = Branch(AddOne("A"), SetField("B", x=10), merge=total)
    [result] = Pipeline([branch]).run([NumberContext(sample=0, x=3)])
    assert result.output.y == 4 + 10
    assert result.output.x == 3


def test_branch_children_may_be_pipelines() -> None:
    branch = Branch(Pipeline([AddOne(), AsyncDouble()], name="double"), SetField("Mark", sample=5))
    [result] = Pipeline([branch]).run(contexts(1), workers=1)
    assert (result.output.y, result.output.sample) == (2, 5)


def test_a_cancelled_branch_keeps_the_other_childrens_failures_visible_on_the_error() -> None:
    token = CancellationToken()

    class CancelRun:
        requires = frozenset()
        provides = frozenset()

        async def __call__(self, ctx: NumberContext) -> NumberContext:
            token.cancel()
            return ctx

    # "Boom" starts (and passes the cancellation check) before the other child cancels the run.
    branch = Branch(FailOn({0}, name="Boom"), Pipeline([CancelRun(), AddOne()], name="cancels"))
    [result] = Pipeline([branch]).run(contexts(1), cancel=token)

    assert isinstance(result.error, PipelineCancelled)
    assert result.error.__notes__ == ["branch child 'Boom' also failed: ValueError: sample 0 rejected"]
