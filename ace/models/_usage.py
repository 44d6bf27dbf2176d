"""Metering model calls: `metered(model, meter)` sums requests, tokens and cost in a `UsageMeter`.

Use one meter per role; `meter.snapshot()` after a phase minus the one before gives the phase's figures.
"""

from __future__ import annotations

import threading
import warnings
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings

__all__ = ["UsageMeter", "UsageTotals", "metered"]


@dataclass(frozen=True)
class UsageTotals:
    """Model usage summed over some requests; `after - before` gives the usage between two snapshots,
    `a + b` the usage of both."""

    requests: int = 0
    """Requests that returned a response (a stream counts when it closes without an error)."""
    failed_requests: int = 0
    """Requests that raised or were cancelled instead of returning a response; not in `requests`."""
    input_tokens: int = 0
    """Input tokens as the provider reported them (pydantic-ai `RequestUsage.input_tokens`, cache reads included)."""
    output_tokens: int = 0
    """Output tokens as the provider reported them."""
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (a part of `input_tokens`)."""
    cost_usd: float | None = None
    """Summed cost in USD of the responses with a known cost; None when no response had one."""
    unknown_cost_responses: int = 0
    """Responses neither the provider nor genai-prices could price; not in `cost_usd`."""
    truncated_responses: int = 0
    """Responses cut at the output-token cap (`finish_reason == "length"`): runaways, or a cap too low."""

    def __add__(self, other: UsageTotals) -> UsageTotals:
        counts = {name: getattr(self, name) + getattr(other, name) for name in _COUNTS}
        costs = [cost for cost in (self.cost_usd, other.cost_usd) if cost is not None]
        return UsageTotals(**counts, cost_usd=sum(costs) if costs else None)

    def __sub__(self, other: UsageTotals) -> UsageTotals:
        counts = {name: getattr(self, name) - getattr(other, name) for name in _COUNTS}
        priced = counts["requests"] - counts["unknown_cost_responses"]
        cost = None if priced == 0 else (self.cost_usd or 0.0) - (other.cost_usd or 0.0)
        return UsageTotals(**counts, cost_usd=cost)

    def to_dict(self) -> dict[str, int | float | None]:
        """The fields by name, JSON-ready."""
        return asdict(self)


_COUNTS = tuple(field.name for field in fields(UsageTotals) if field.name != "cost_usd")


_SENT_SETTINGS = ("max_tokens", "temperature", "timeout")
"""The request settings a meter records as sent (see `UsageMeter.settings_sent`)."""


class UsageMeter:
    """Running usage totals; safe to record into from several asyncio tasks and threads at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(_COUNTS, 0)
        self._cost: Decimal | None = None
        self._sent: Counter[tuple[Any, ...]] = Counter()

    def record(self, response: ModelResponse, settings: ModelSettings | None = None) -> None:
        """Add one response's tokens and cost (`usage.cost` if reported, else genai-prices'
        `response.cost()`), and the `settings` its request carried."""
        cost = _cost(response)
        usage = response.usage
        sent = tuple((settings or {}).get(name) for name in _SENT_SETTINGS)
        with self._lock:
            self._sent[sent] += 1
            self._counts["requests"] += 1
            self._counts["input_tokens"] += usage.input_tokens
            self._counts["output_tokens"] += usage.output_tokens
            self._counts["cache_read_tokens"] += usage.cache_read_tokens
            self._counts["truncated_responses"] += response.finish_reason == "length"
            if cost is None:
                self._counts["unknown_cost_responses"] += 1
            else:
                self._cost = cost if self._cost is None else self._cost + cost

    def record_failure(self) -> None:
        """Add one request that raised instead of returning a response."""
        with self._lock:
            self._counts["failed_requests"] += 1

    def settings_sent(self) -> list[dict[str, Any]]:
        """Each distinct combination of max_tokens, temperature and timeout that requests carried
        (None: not set), with the number of requests that carried it, most frequent first."""
        with self._lock:
            counted = self._sent.most_common()
        return [{**dict(zip(_SENT_SETTINGS, values)), "requests": count} for values, count in counted]

    def snapshot(self) -> UsageTotals:
        """The totals recorded so far."""
        with self._lock:
            cost = None if self._cost is None else float(self._cost)
            return UsageTotals(**self._counts, cost_usd=cost)


def _cost(response: ModelResponse) -> Decimal | None:
    if response.usage.cost is not None or not response.model_name:  # a reported cost wins, as in pydantic-ai
        return response.usage.cost
    try:
        return response.cost().total_price
    except (LookupError, ValueError):  # unknown model or provider, or usage the provider omitted
        return None
    except Exception as error:  # a pricing bug must not fail a paid-for request; the warning shows it
        warnings.warn(f"pricing {response.model_name!r} failed: {error!r}", RuntimeWarning, stacklevel=3)
        return None


class _MeteredModel(WrapperModel):
    """`wrapped`, with every `request` and `request_stream` recorded in `meter`."""

    def __init__(self, wrapped: Model, meter: UsageMeter) -> None:
        super().__init__(wrapped)
        self.meter = meter

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except BaseException:
            self.meter.record_failure()
            raise
        self.meter.record(response, model_settings)
        return response

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        try:
            async with self.wrapped.request_stream(
                messages, model_settings, model_request_parameters, run_context
            ) as stream:
                yield stream
        except BaseException:  # includes an error raised by the code consuming the stream
            self.meter.record_failure()
            raise
        self.meter.record(stream.get(), model_settings)


def metered(model: Model, meter: UsageMeter) -> Model:
    """`model`, recording each response of `request` and `request_stream` in `meter`.

    Everything else, `model_name` and `system` included, is forwarded to `model`. A request that raises
    counts as failed and the exception propagates unchanged. `compact_messages` and batches are not metered.
    """
    return _MeteredModel(model, meter)
