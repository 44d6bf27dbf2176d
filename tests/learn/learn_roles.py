"""Models and span files for the `ace learn` tests (imported as `learn_roles`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from ace_eval.scripted import tool_returns, user_texts


def record_weather_run(
    path: Path, *, question: str = "What is the weather in Paris?", include_content: bool = True
) -> None:
    """Run a pydantic-ai agent with a tool under OpenTelemetry; append its spans to `path` (OTLP JSON lines)."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()  # never the global one: each test records into its own file
    with path.open("a", encoding="utf-8") as stream:
        provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(stream=stream)))

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            if tool_returns(messages):
                return ModelResponse(parts=[TextPart(f"It is {tool_returns(messages)[0].content}.")])
            city = question.rstrip("?").split()[-1]
            return ModelResponse(parts=[ToolCallPart("get_weather", {"city": city})])

        agent = Agent(FunctionModel(respond), name="weather_agent", instructions="You answer weather questions.")
        agent.instrument = InstrumentationSettings(include_content=include_content, tracer_provider=provider)

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather of a city."""
            return f"sunny in {city}"

        agent.run_sync(question)
        provider.shutdown()


def reflector_model() -> FunctionModel:
    """Reflects that the agent should have said where its answer came from, naming the trace's city."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        city = re.search(r"weather in (\w+)", "\n".join(user_texts(messages)))
        args = {
            "reasoning": "the agent answered from the get_weather tool",
            "error_identification": "the answer did not name its source",
            "root_cause_analysis": "no habit of citing tools",
            "correct_approach": "say which tool the answer came from",
            "key_insight": f"cite the weather tool when asked about the weather in {city.group(1) if city else 'unknown'}",
        }
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])

    return FunctionModel(respond)


def skill_manager_model() -> FunctionModel:
    """Adds one skill naming the city of the reflection's insight, then finalizes."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if tool_returns(messages):
            return ModelResponse(parts=[ToolCallPart("finalize", {"reasoning": "added one skill"})])
        city = re.search(r"weather in (\w+)", "\n".join(user_texts(messages)))
        topic = city.group(1) if city else "unknown"
        return ModelResponse(
            parts=[
                ToolCallPart(
                    "add_skill",
                    {
                        "section": "context",
                        "issue": f"Weather questions about {topic}.",
                        "keywords": ["weather", topic.lower()],
                        "insight": "Name the weather tool the answer came from.",
                    },
                )
            ]
        )

    return FunctionModel(respond)


def spans_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
