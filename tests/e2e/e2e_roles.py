"""FunctionModel roles for the e2e tests: stateless, each decides from the messages it is sent.

- agent: reads the first catalog skill when it has `read_skill`, looks the user up, then refuses
  (never writes), and says in its last message which skill ids its system prompt listed - so a test
  can compare what the prompt held with what the Results file records;
- reflector: a fixed analysis that quotes the feedback;
- skill manager: tags every injected skill by the outcome (helpful on reward 1, harmful otherwise);
  in epoch 1 it adds a skill whose issue is the task's question, later it adds nothing.
"""

from __future__ import annotations

import re

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.scripted import between, first_user_prompt, last_user_text, system_prompt, tool_returns

PROMPT_SKILLS = re.compile(r"prompt skills: \[(.*?)\]")
"""How the test agent reports the skill ids its system prompt listed."""

_SKILL_LINE = re.compile(r"^- \[((?:context|harness)-\d+)\]", re.M)
_USER_ID = re.compile(r"\b[a-z]+_[a-z]+_\d{3,5}\b")


def echo_agent(*, fail_with_skills: bool = False) -> FunctionModel:
    """The airline agent described in the module docstring; with `fail_with_skills` it raises
    whenever its prompt lists a skill."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        system = system_prompt(messages)
        called = {part.tool_name for part in tool_returns(messages)}
        listed = _SKILL_LINE.findall(system.partition("# Learned skills")[2])
        if fail_with_skills and listed:
            raise RuntimeError("agent failed on purpose: its prompt held skills")
        if "read_skill" in {tool.name for tool in info.function_tools} and listed and "read_skill" not in called:
            return ModelResponse(parts=[ToolCallPart("read_skill", {"skill_id": listed[0]})])
        user_id = _USER_ID.search(last_user_text(messages))
        if user_id is not None and "get_user_details" not in called:
            return ModelResponse(parts=[ToolCallPart("get_user_details", {"user_id": user_id.group(0)})])
        return ModelResponse(parts=[TextPart(f"I cannot complete this request. prompt skills: [{', '.join(listed)}]")])

    return FunctionModel(respond, model_name="test-echo-agent")


def analysing_reflector() -> FunctionModel:
    """A one-pass reflection naming the feedback it was given."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        feedback = between(first_user_prompt(messages), "<feedback>", "</feedback>").strip()
        analysis = {
            "reasoning": f"feedback was: {feedback}",
            "error_identification": "the agent refused",
            "root_cause_analysis": "it never acted",
            "correct_approach": "act within the policy",
            "key_insight": "act within the policy",
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, analysis)])

    return FunctionModel(respond, model_name="test-reflector")


def tagging_skill_manager() -> FunctionModel:
    """The skill manager described in the module docstring."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if tool_returns(messages):
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "tagged by outcome"})])
        prompt = first_user_prompt(messages)
        reward = re.search(r"reward[ =]([0-9.]+)", between(prompt, "<outcome>", "</outcome>"))
        delta = 1 if reward is not None and float(reward.group(1)) == 1.0 else -1
        injected = _SKILL_LINE.findall(between(prompt, "<injected_skills>", "</injected_skills>"))
        calls = [ToolCallPart("tag_skill", {"skill_id": skill_id, "delta": delta}) for skill_id in injected]
        if "epoch 1/" in between(prompt, "<progress>", "</progress>"):
            question = re.search(r"question: (.*)", prompt)
            issue = f"Customers calling because: {question.group(1) if question else 'unknown'}"
            calls.append(
                ToolCallPart(
                    "add_skill",
                    {
                        "section": "context",
                        "issue": issue,
                        "keywords": ["airline"],
                        "insight": "Act within the policy.",
                    },
                )
            )
        if not calls:
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "nothing to change"})])
        return ModelResponse(parts=calls)

    return FunctionModel(respond, model_name="test-skill-manager")
