"""Cancellation: a token checked before each step; cancelled samples end with PipelineCancelled."""

from __future__ import annotations

from pipeline_helpers import AddOne, GatedStep, NumberContext, contexts

from ace.pipeline import Branch, CancellationToken, Pipeline, PipelineCancelled


class CancelOn:
    """Sync step that cancels the token when it sees the given sample."""

    requires = frozenset()
    provides = frozenset()

    def __init__(self, token: CancellationToken, sample: int) -> None:
        self.token = token
        self.sample = sample

    def __call__(self, ctx: NumberContext) -> NumberContext:
        if ctx.sample == self.sample:
            self.token.cancel()
        return ctx


def test_cancelling_before_the_run_cancels_every_sample_at_its_first_step() -> None:
    token = CancellationToken()
    token.cancel()
    results = Pipeline([AddOne("First"), AddOne("Second")]).run(contexts(3), cancel=token)
    assert all(isinstance(r.error, PipelineCancelled) and r.failed_at == "First" for r in results)


def test_cancelling_mid_run_stops_samples_before_their_next_step() -> None:
    token = CancellationToken()
    after = AddOne("After")
    results = Pipeline([CancelOn(token, sample=1), after]).run(contexts(4), workers=1, cancel=token)
    assert results[0].ok
    assert (type(results[1].error), results[1].failed_at) == (PipelineCancelled, "After")
    assert all(isinstance(r.error, PipelineCancelled) and r.failed_at == "CancelOn" for r in results[2:])


def test_cancellation_reaches_background_steps() -> None:
    token = CancellationToken()
    learn = GatedStep("Learn", async_boundary=True)
    pipeline = Pipeline([AddOne(), learn, AddOne("Update")])
    results = pipeline.run(contexts(2), cancel=token)
    assert all(learn.entered.acquire(timeout=10) for _ in results)
    token.cancel()
    learn.gate.set()
    pipeline.wait_for_background()
    assert all(r.failed_at == "Update" and isinstance(r.error, PipelineCancelled) for r in results)


def test_cancellation_inside_a_branch_is_reported_as_cancellation_not_a_branch_error() -> None:
    token = CancellationToken()
    branch = Branch(CancelOn(token, sample=0), AddOne("Sibling"))
    results = Pipeline([branch, AddOne("Next")]).run(contexts(1), cancel=token)
    assert isinstance(results[0].error, PipelineCancelled)
