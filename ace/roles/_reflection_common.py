"""What the Reflector and the Recursive Reflector share: the analysis schema and the task inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ace.roles._schema_bounds import schema_bounds
from ace.roles.outputs import ReflectorOutput
from ace.skillbook import Skill, render_prompt
from ace.untrusted import valid_unicode

__all__ = ["Analysis", "final_answer", "render_task_inputs"]


_SENTENCES = schema_bounds(max_length=500)
"""The bound of a one-or-two-sentence field."""


class Analysis(BaseModel):
    """The fields the model fills in; becomes a ReflectorOutput."""

    reasoning: str = Field(
        description="Your analysis of the trace, quoting the turns that matter (at most 150 words).",
        json_schema_extra=schema_bounds(max_length=1200),
    )
    error_identification: str = Field(
        description=(
            "What went wrong, precisely (one or two sentences); when the feedback says the answer was wrong, "
            "how it differs from the expected one."
        ),
        json_schema_extra=_SENTENCES,
    )
    root_cause_analysis: str = Field(
        description="Why it went wrong (one or two sentences).", json_schema_extra=_SENTENCES
    )
    correct_approach: str = Field(
        description="What the agent should have done instead (one or two sentences).",
        json_schema_extra=_SENTENCES,
    )
    key_insight: str = Field(
        description=(
            "The single reusable lesson (one sentence): the rule for tasks of this kind, with this task as its example."
        ),
        json_schema_extra=_SENTENCES,
    )

    def to_output(self) -> ReflectorOutput:
        """The reflection, as valid Unicode (lone surrogates replaced): it goes on into prompts and skills."""
        return ReflectorOutput(
            reasoning=valid_unicode(self.reasoning),
            error_identification=valid_unicode(self.error_identification),
            root_cause_analysis=valid_unicode(self.root_cause_analysis),
            correct_approach=valid_unicode(self.correct_approach),
            key_insight=valid_unicode(self.key_insight),
        )


def final_answer(trace: Any) -> str | None:
    """The agent's final answer when the trace states one (a mapping with a string `answer`, as
    `EvaluateStep` records a one-shot agent's run), else None."""
    answer = trace.get("answer") if isinstance(trace, Mapping) else None
    return answer if isinstance(answer, str) else None


def render_task_inputs(
    *,
    question: str,
    ground_truth: str | None,
    feedback: str | None,
    injected_skills: Sequence[Skill],
    answer: str | None = None,
) -> str:
    """The question, the agent's final answer beside the ground truth (when both are known), the
    feedback and the injected skills as tagged prompt blocks."""
    parts = [f"<question>\n{question or '(not given)'}\n</question>"]
    if ground_truth is not None:
        if answer is not None:
            parts.append(f"<agent_answer>\n{answer}\n</agent_answer>")
        parts.append(f"<ground_truth>\n{ground_truth}\n</ground_truth>")
    if feedback is not None:
        parts.append(f"<feedback>\n{feedback}\n</feedback>")
    skills_text = render_prompt(list(injected_skills)) or "(no skills were injected)"
    parts.append(f"<injected_skills>\n{skills_text}\n</injected_skills>")
    return "\n\n".join(parts)
