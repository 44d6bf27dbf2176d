"""The agentic core: RecursiveAgent (a pydantic-ai tool loop with budgets, compaction and child
sessions) and, in `ace.agentic.sandbox`, a process sandbox for model-written Python."""

from ace.agentic._compaction import estimate_tokens
from ace.agentic._config import AgenticConfig, BudgetExhausted
from ace.agentic._recursive_agent import RecursiveAgent, RecursiveRun

__all__ = ["AgenticConfig", "BudgetExhausted", "RecursiveAgent", "RecursiveRun", "estimate_tokens"]
