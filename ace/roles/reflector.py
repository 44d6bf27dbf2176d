"""The Reflector role: one pass of analysis over a whole trace rendered into the prompt."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models import Model

from ace import tracing
from ace.errors import UsageError
from ace.models import RecoveryEvent, RequestSettings, recovering, resolve_model
from ace.roles._reflection_common import Analysis, final_answer, render_task_inputs
from ace.roles.outputs import ReflectorOutput
from ace.roles.prompts import REFLECTOR_INSTRUCTIONS
from ace.skillbook import Skill
from ace.traces.rendering import DEFAULT_TRACE_CHAR_LIMIT, render_trace

__all__ = ["Reflector"]


def _last_word(answer: str | None, ground_truth: str | None) -> str:
    """What the prompt ends with: the comparison that decides the lesson, where a small model looks."""
    if answer is not None and ground_truth is not None and answer.strip() != ground_truth.strip():
        # A question, not a sentence to fill in: small models copy imperative prompt text into their fields.
        return (
            f"Answered: `{answer.strip()}`. Expected: `{ground_truth.strip()}`. "
            "What does the expected answer do differently?"
        )
    return "Judge the run by the feedback, not by the trace's own account of it."


class Reflector:
    """Reflects on a trace in a single model call; pure analysis, no decision about skills.

    The trace is always in the prompt: a string as is, chat messages (including a tau2
    simulation's "messages") one block per message, anything else as JSON. A rendering longer than
    `max_trace_chars` keeps its head and tail with a marker stating how many characters were cut.
    """

    DEFAULT_SETTINGS = RequestSettings(max_output_tokens=1024, temperature=0.0, timeout_seconds=300.0)
    """Every request's settings unless `settings` is given: room for the five-part analysis (about
    300-600 tokens), not for a runaway."""

    def __init__(
        self,
        model: str | Model,
        *,
        max_trace_chars: int = DEFAULT_TRACE_CHAR_LIMIT,
        instructions: str = REFLECTOR_INSTRUCTIONS,
        settings: RequestSettings | None = None,
    ) -> None:
        """`model` is a model string (see `ace.models.resolve_model`) or a pydantic-ai Model;
        `settings` go with every request (default `DEFAULT_SETTINGS`).

        Raises ValueError when `max_trace_chars` is not positive.
        """
        if max_trace_chars <= 0:
            raise UsageError(f"max_trace_chars must be positive, got {max_trace_chars}")
        self._max_trace_chars = max_trace_chars
        self.settings = settings or self.DEFAULT_SETTINGS
        """What every request carries (output cap, temperature, timeout)."""
        self._model = recovering(resolve_model(model))
        self._agent = PydanticAgent(
            self._model,
            output_type=self.settings.output_type(Analysis),
            instructions=instructions,
            name="ace-reflector",
            model_settings=self.settings.model_settings(),
        )
        self._agent.instrument = tracing.instrumentation()  # model-request spans, like the RecursiveAgent roles

    def build_prompt(
        self,
        *,
        trace: Any,
        question: str = "",
        ground_truth: str | None = None,
        feedback: str | None = None,
        injected_skills: Sequence[Skill] = (),
    ) -> str:
        """The user prompt `reflect` sends for these inputs."""
        inputs = render_task_inputs(
            question=question,
            ground_truth=ground_truth,
            feedback=feedback,
            injected_skills=injected_skills,
            answer=final_answer(trace),
        )
        trace_text = render_trace(trace, max_chars=self._max_trace_chars)
        # The verdict comes last, nearest the answer: small models otherwise echo the trace's own
        # account ("the agent answered correctly") over the feedback that says it did not.
        return f"<trace>\n{trace_text}\n</trace>\n\n{inputs}\n\n{_last_word(final_answer(trace), ground_truth)}"

    @property
    def recoveries(self) -> Counter[RecoveryEvent]:
        """How often this role's model responses were repaired (see `ace.models.recovering`)."""
        return self._model.recoveries

    async def reflect(
        self,
        *,
        trace: Any,
        question: str = "",
        ground_truth: str | None = None,
        feedback: str | None = None,
        injected_skills: Sequence[Skill] = (),
    ) -> ReflectorOutput:
        """Analyse `trace` against the question, ground truth and feedback when given.

        Model errors propagate unchanged (a single pass has nothing partial to report).
        """
        prompt = self.build_prompt(
            trace=trace,
            question=question,
            ground_truth=ground_truth,
            feedback=feedback,
            injected_skills=injected_skills,
        )
        with tracing.span("reflector.reflect", prompt_chars=len(prompt)):
            result = await self._agent.run(prompt)
        return result.output.to_output()
