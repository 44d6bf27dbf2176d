"""`run_tasks(seed=...)`: each trial's seed reaches both models as the `seed` model setting."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ace_eval.tau2 import load_tasks, run_tasks
from ace_eval.tau2.runner import trial_seeds


async def test_every_request_of_a_trial_carries_that_trials_seed() -> None:
    seen: dict[str, list[int | None]] = {"agent": [], "user": []}

    def agent(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["agent"].append((info.model_settings or {}).get("seed"))
        return ModelResponse(parts=[TextPart("Let me look into that.")])

    def user(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["user"].append((info.model_settings or {}).get("seed"))
        said = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=[TextPart("I need to change my flight." if said == 0 else "###STOP###")])

    run = await run_tasks(
        load_tasks("test")[:1],
        agent_model=FunctionModel(agent),
        user_model=FunctionModel(user),
        trials=2,
        workers=1,
        seed=300,
    )

    expected = trial_seeds(300, 2)
    assert not run.failures
    assert sorted(sim.seed for sim in run.results.simulations) == sorted(expected)
    assert set(seen["agent"]) == set(expected) and set(seen["user"]) == set(expected)
    assert seen["user"].count(expected[0]) == seen["user"].count(expected[1]) == 2


async def test_a_tau2_sample_in_the_ace_loop_sends_its_trials_seed_with_every_request() -> None:
    from ace_eval.tau2.ace_task import Tau2Agent, tau2_samples

    seen: list[int | None] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((info.model_settings or {}).get("seed"))
        said = sum(isinstance(message, ModelResponse) for message in messages)
        return ModelResponse(parts=[TextPart("I need to change my flight." if said == 0 else "###STOP###")])

    (sample,) = tau2_samples(load_tasks("test")[:1], trials=1, seed=300)
    await Tau2Agent(FunctionModel(model), FunctionModel(model)).answer(sample.question, sample=sample)

    assert seen and set(seen) == {trial_seeds(300, 1)[0]}
