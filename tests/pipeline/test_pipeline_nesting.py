"""A Pipeline is a step: pipelines nest, and failures name the innermost step."""

from __future__ import annotations

from pipeline_helpers import AddOne, AsyncDouble, FailOn, GatedStep, contexts

from ace.pipeline import Pipeline, StepEvent


def test_nested_pipeline_runs_its_steps_in_order_inside_the_outer_one() -> None:
    inner = Pipeline([AddOne("Inner1"), AddOne("Inner2")], name="inner")
    results = Pipeline([AddOne("Outer1"), inner, AsyncDouble()]).run(contexts(2))
    assert [r.output.log for r in results] == [("Outer1", "Inner1", "Inner2", "AsyncDouble")] * 2
    assert [r.output.y for r in results] == [6, 8]


def test_failure_inside_a_nested_pipeline_names_the_inner_step() -> None:
    inner = Pipeline([AddOne(), FailOn({0}, name="InnerCheck")], name="inner")
    results = Pipeline([inner, AsyncDouble()]).run(contexts(2))
    assert results[0].failed_at == "InnerCheck"
    assert isinstance(results[0].error, ValueError)
    assert results[1].ok


def test_hooks_and_spans_see_the_nested_pipeline_and_each_of_its_steps() -> None:
    seen: list[str] = []

    def record(event: StepEvent) -> None:
        seen.append(event.step)

    inner = Pipeline([AddOne("A"), AddOne("B")], name="inner")
    Pipeline([inner, AddOne("C")]).run(contexts(1), before_step=record)
    assert seen == ["inner", "A", "B", "C"]


async def test_a_pipeline_can_be_awaited_directly_on_one_context() -> None:
    inner = Pipeline([AddOne(), AsyncDouble()])
    output = await inner(contexts(1)[0])
    assert (output.x, output.y) == (1, 2)


def test_nested_pipeline_may_follow_the_outer_async_boundary() -> None:
    learn = GatedStep("Learn", async_boundary=True)
    learn.gate.set()
    tail = Pipeline([AddOne("T1"), AddOne("T2")], name="tail")
    pipeline = Pipeline([AddOne("Act"), learn, tail])
    results = pipeline.run(contexts(2))
    pipeline.wait_for_background()
    assert [r.output.log for r in results] == [("Act", "T1", "T2")] * 2
