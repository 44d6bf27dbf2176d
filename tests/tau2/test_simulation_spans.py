"""Every model request of a tau2 simulation - the agent's and the simulated user's - is a `chat`
span, so span queries (`ace-eval spans`) count them like the learning roles' requests."""

from __future__ import annotations

from collections import Counter

from logfire.testing import CaptureLogfire
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.tau2 import LLMAgent, Task, UserSimulator, run_simulation


async def test_agent_and_user_requests_are_chat_spans(capfire: CaptureLogfire, airline_tasks: dict[str, Task]) -> None:
    requests: Counter[str] = Counter()

    def model(name: str, replies: list[str]) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            requests[name] += 1
            return ModelResponse(parts=[TextPart(replies[min(requests[name], len(replies)) - 1])])

        return FunctionModel(respond, model_name=name)

    task = next(iter(airline_tasks.values()))
    agent = LLMAgent(model("agent-model", ["Which booking?", "Done, anything else?"]))
    user = UserSimulator(model("user-model", ["I need help with a booking.", "Thanks. ###STOP###"]), task.user_scenario)

    await run_simulation(task, agent=agent, user=user)

    chats = Counter(
        span["attributes"]["gen_ai.request.model"]
        for span in capfire.exporter.exported_spans_as_dict()
        if span["name"].startswith("chat ")
    )
    assert requests["agent-model"] >= 1 and requests["user-model"] >= 1
    assert chats == requests
