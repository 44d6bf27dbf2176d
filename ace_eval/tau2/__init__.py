"""tau2-bench airline harness: upstream tools, tasks, LLM orchestrator, grader, Results, metrics."""
