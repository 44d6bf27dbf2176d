"""Offline scripted models: deterministic pydantic-ai `FunctionModel`s for every role, and the
readers of the messages they are sent.

`ace-eval e2e` and `ace-eval tau2 run` use them when a role's model is `"scripted"` (the default),
so the whole loop runs with no model and no key; tests build their own `FunctionModel`s from the
same message readers (`ace_eval.scripted.messages`). Neither `ace_eval.e2e` nor `ace_eval.tau2` is
imported here, so both may import this package.

The names below are imported on first use: `SCRIPTED` is known without loading pydantic-ai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ace.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from ace_eval.scripted.messages import (
        between,
        first_user_prompt,
        last_user_text,
        line_after,
        system_prompt,
        text_response,
        tool_returns,
        user_texts,
    )
    from ace_eval.scripted.models import (
        scripted_agent,
        scripted_recursive_reflector,
        scripted_reflector,
        scripted_skill_manager,
        scripted_user,
    )

__all__ = [
    "SCRIPTED",
    "between",
    "first_user_prompt",
    "last_user_text",
    "line_after",
    "scripted_agent",
    "scripted_recursive_reflector",
    "scripted_reflector",
    "scripted_skill_manager",
    "scripted_user",
    "system_prompt",
    "text_response",
    "tool_returns",
    "user_texts",
]

SCRIPTED = "scripted"
"""The model name that selects the offline scripted models."""

_EXPORTS: dict[str, str] = {
    "between": "ace_eval.scripted.messages",
    "first_user_prompt": "ace_eval.scripted.messages",
    "last_user_text": "ace_eval.scripted.messages",
    "line_after": "ace_eval.scripted.messages",
    "system_prompt": "ace_eval.scripted.messages",
    "text_response": "ace_eval.scripted.messages",
    "tool_returns": "ace_eval.scripted.messages",
    "user_texts": "ace_eval.scripted.messages",
    "scripted_agent": "ace_eval.scripted.models",
    "scripted_recursive_reflector": "ace_eval.scripted.models",
    "scripted_reflector": "ace_eval.scripted.models",
    "scripted_skill_manager": "ace_eval.scripted.models",
    "scripted_user": "ace_eval.scripted.models",
}
"""Where each lazily imported name of `__all__` lives."""

__getattr__ = lazy_getattr(__name__, _EXPORTS)
