"""Runners: `ACE` (agent + learning loop) and `TraceAnalyser` (learning from recorded traces)."""

from ace.runners.ace import ACE
from ace.runners.trace_analyser import TraceAnalyser

__all__ = ["ACE", "TraceAnalyser"]
