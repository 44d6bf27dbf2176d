"""Model strings: pydantic-ai's `provider:name` and litellm's `provider/name`, mapped one to the other.

No dependencies, so the credential preflight and the command lines can read a model string without
loading the LLM clients.
"""

from __future__ import annotations

__all__ = ["PYDANTIC_AI_PROVIDERS", "litellm_model_name"]

PYDANTIC_AI_PROVIDERS: dict[str, str] = {
    "google-gla": "gemini",
    "google": "gemini",
    "google-vertex": "vertex_ai",
    "grok": "xai",
    "together": "together_ai",
    "fireworks": "fireworks_ai",
    "moonshotai": "moonshot",
    "openai-chat": "openai",
    "openai-responses": "openai",
    "vercel": "vercel_ai_gateway",
}
"""pydantic-ai provider prefixes whose litellm provider has another name; every other prefix is the
same in both (`openai`, `anthropic`, `bedrock`, `groq`, `mistral`, `ollama`, `openrouter`, ...)."""


def litellm_model_name(model: str) -> str:
    """`model` as a litellm model string: the one place where the two conventions meet.

    pydantic-ai's `"provider:name"` (the colon before any slash) becomes `"provider/name"`, with the
    provider renamed where litellm spells it differently (`PYDANTIC_AI_PROVIDERS`, e.g.
    `google-gla:gemini-2.5-flash` -> `gemini/gemini-2.5-flash`); a litellm string
    (`bedrock/...-v1:0`, whose colon follows a slash) and a bare name are returned stripped.
    """
    name = model.strip()
    colon, slash = name.find(":"), name.find("/")
    if colon <= 0 or (0 <= slash < colon):
        return name
    provider, rest = name[:colon], name[colon + 1 :]
    return f"{PYDANTIC_AI_PROVIDERS.get(provider, provider)}/{rest}"
