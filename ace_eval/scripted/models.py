"""The offline scripted models `ace-eval e2e` and `ace-eval tau2 run` use by default (model name "scripted").

They exist so the whole loop — tau2 simulation, reflection, skill curation, benchmark — runs on a
machine with no model and no key. They are deterministic rule-based pydantic-ai `FunctionModel`s,
not language models: they do not read or follow learned skills, so a benchmark run on them
measures the plumbing, never learning. Use real model strings for real results.

- user: states the task's reason for call and known info, then ends with ###STOP###;
- agent: looks up the user profile when the user gives a user id, then says it cannot complete
  the request (it never writes to the database). Given a `read_skill` tool, it first reads the
  first skill of its catalog - which changes nothing it then does: its behaviour never depends on
  its skills, so a benchmark with and without skills scores the same;
- reflector / recursive reflector: an analysis built from the reward feedback and the trace
  (the recursive one first runs code over `traces`);
- skill manager: tags every injected skill by the run's outcome (helpful on reward 1, harmful
  otherwise: the rule the real SkillManager is told), searches by the task's category keyword,
  updates the matching skill or adds one, then finalizes.
"""

from __future__ import annotations

import json
import re

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.scripted.messages import (
    between,
    first_user_prompt,
    last_user_text,
    line_after,
    structured_response,
    system_prompt,
    text_response,
    tool_returns,
)

__all__ = [
    "scripted_agent",
    "scripted_recursive_reflector",
    "scripted_reflector",
    "scripted_skill_manager",
    "scripted_user",
]


_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")
_CATALOG_ID = re.compile(r"^- \[([a-z]+-\d+)\]", re.M)
_REWARD = re.compile(r"\breward[ =:]*(-?[0-9.]+)")
_CATEGORIES = (
    ("cancel", "cancellation"),
    ("refund", "refund"),
    ("compensat", "compensation"),
    ("baggage", "baggage"),
    ("bag", "baggage"),
    ("upgrade", "cabin_change"),
    ("cabin", "cabin_change"),
    ("change", "flight_change"),
    ("modify", "flight_change"),
    ("book", "booking"),
    ("passenger", "passengers"),
    ("insurance", "insurance"),
)


def scripted_user() -> FunctionModel:
    """The simulated user: first its request, then ###STOP###."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if any(isinstance(m, ModelResponse) for m in messages):
            return text_response("Thanks, that is all. ###STOP###")
        scenario = between(system_prompt(messages, info), "<scenario>", "</scenario>")
        reason = _scenario_field(scenario, "Reason for call") or "I need help with my reservation."
        known = _scenario_field(scenario, "Known info")
        return text_response(" ".join(part for part in (reason, known) if part))

    return FunctionModel(respond, model_name="scripted-user")


def scripted_agent() -> FunctionModel:
    """The airline agent: one profile lookup when a user id is given, then a refusal (after reading
    its first catalog skill when it has a `read_skill` tool)."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = tool_returns(messages)
        if not returns and any(tool.name == "read_skill" for tool in info.function_tools):
            catalog = _CATALOG_ID.search(system_prompt(messages, info))
            if catalog is not None:
                return ModelResponse(parts=[ToolCallPart("read_skill", {"skill_id": catalog.group(1)})])
        if any(part.tool_name != "read_skill" for part in returns):
            return text_response(
                "I have looked up your profile. I am sorry, but I cannot complete this request; "
                "is there anything else I can help you with?"
            )
        user_id = _USER_ID.search(last_user_text(messages))
        if user_id is not None and any(tool.name == "get_user_details" for tool in info.function_tools):
            return ModelResponse(parts=[ToolCallPart("get_user_details", {"user_id": user_id.group(0)})])
        return text_response("Could you give me your user id so that I can look up your profile?")

    return FunctionModel(respond, model_name="scripted-agent")


def scripted_reflector() -> FunctionModel:
    """A one-pass reflection built from the question and the reward feedback."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = first_user_prompt(messages)
        return structured_response(info, _analysis(prompt, evidence=""))

    return FunctionModel(respond, model_name="scripted-reflector")


def scripted_recursive_reflector() -> FunctionModel:
    """Runs code over `traces` once (counting messages and tool calls), then submits the analysis."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("execute_code", {"code": _TRACE_SURVEY})])
        evidence = str(returns[-1].content).strip()
        analysis = _analysis(first_user_prompt(messages), evidence=evidence)
        return ModelResponse(parts=[ToolCallPart("finalize", analysis)])

    return FunctionModel(respond, model_name="scripted-recursive-reflector")


def scripted_skill_manager() -> FunctionModel:
    """Tag the injected skills by outcome and search by category; then update the skill found
    (adding provenance) or add one; then finalize."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = first_user_prompt(messages)
        question = line_after(prompt, "question:")
        category = _category(question)
        returns = tool_returns(messages)
        if not returns:
            delta = 1 if _succeeded(between(prompt, "<outcome>", "</outcome>")) else -1
            injected = _CATALOG_ID.findall(between(prompt, "<injected_skills>", "</injected_skills>"))
            tags = [ToolCallPart("tag_skill", {"skill_id": skill_id, "delta": delta}) for skill_id in injected]
            search = {"query": question or category, "top_k": 1, "keywords": [category]}
            return ModelResponse(parts=[*tags, ToolCallPart("search_skills", search)])
        if not any(part.tool_name in ("add_skill", "update_skill") for part in returns):
            search_return = next(part for part in returns if part.tool_name == "search_skills")
            found = search_return.content if isinstance(search_return.content, list) else []
            insight = _key_insight(prompt)
            if found:
                update = {"skill_id": found[0]["id"], "issue": found[0]["issue"], "insight": insight}
                return ModelResponse(parts=[ToolCallPart("update_skill", update)])
            add = {
                "section": "context",
                "issue": f"In tau2 airline, {category.replace('_', ' ')} requests were not completed: {question[:160]}",
                "keywords": ["airline", category],
                "insight": insight,
            }
            return ModelResponse(parts=[ToolCallPart("add_skill", add)])
        return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": f"curated the {category} skill"})])

    return FunctionModel(respond, model_name="scripted-skill-manager")


def _succeeded(outcome: str) -> bool:
    match = _REWARD.search(outcome)
    return match is not None and abs(float(match.group(1)) - 1.0) <= 1e-6


_TRACE_SURVEY = """\
simulation = traces.get("simulation", traces) if isinstance(traces, dict) else {}
messages = simulation.get("messages", []) if isinstance(simulation, dict) else []
tool_calls = [c["name"] for m in messages for c in (m.get("tool_calls") or [])]
print(f"{len(messages)} messages, tool calls: {tool_calls}")
"""


def _analysis(prompt: str, *, evidence: str) -> dict[str, str]:
    question = between(prompt, "<question>", "</question>").strip() or "the task"
    feedback = between(prompt, "<feedback>", "</feedback>").strip() or "no feedback"
    succeeded = _succeeded(feedback)
    seen = f" The trace shows: {evidence}." if evidence else ""
    return {
        "reasoning": f"Feedback: {feedback}.{seen}",
        "error_identification": "none; the task was completed"
        if succeeded
        else f"the request was not completed ({feedback})",
        "root_cause_analysis": "n/a" if succeeded else "the agent stopped before taking the actions the policy allows",
        "correct_approach": "keep doing the same" if succeeded else "verify the user, check the policy, then act",
        "key_insight": (
            f"For '{question[:80]}': verify the user's identity, check the policy conditions, then "
            "complete the change with the write tools and confirm it to the user."
        ),
    }


def _key_insight(prompt: str) -> str:
    match = re.search(r'"key_insight":\s*"((?:[^"\\]|\\.)*)"', prompt)
    return json.loads(f'"{match.group(1)}"') if match else "Verify the user, check the policy, then act."


def _category(question: str) -> str:
    lowered = question.lower()
    return next((category for stem, category in _CATEGORIES if stem in lowered), "general_request")


def _scenario_field(scenario: str, label: str) -> str:
    """One section of the rendered scenario (upstream layout: a tab-indented `Label:` line followed
    by lines indented two tabs), joined into one line; "" when absent."""
    match = re.search(rf"^\t{re.escape(label)}:\n((?:\t\t.*\n?|[ \t]*\n)*)", scenario, re.M)
    if match is None:
        return ""
    return " ".join(line.strip() for line in match.group(1).splitlines() if line.strip())
