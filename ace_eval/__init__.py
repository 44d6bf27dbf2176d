"""ace_eval: evaluation harnesses for ace (tau2-bench airline) and the `ace-eval e2e` runner."""

__all__: list[str] = []
