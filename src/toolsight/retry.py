"""Model calls with a connection limit, finite retries (exponential backoff, jitter, Retry-After)
and the response cache. Used for the evaluated model and for judges alike."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from toolsight.cache import ResponseCache, request_key
from toolsight.models.base import GenerateConfig, Message, Model, ModelError, ModelOutput
from toolsight.tools.base import ToolSpec

T = TypeVar("T")


@dataclass
class CallStats:
    calls: int = 0
    retries: int = 0
    retrying_now: int = 0
    cache_hits: int = 0
    tokens: int = 0
    errors: int = 0


@dataclass
class ModelCaller:
    """Wraps a Model: `await caller(messages, tools, config)` with limit, retries and cache."""

    model: Model
    max_connections: int = 32
    retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    max_identical: int = 3
    cache: ResponseCache | None = None
    stats: CallStats = field(default_factory=CallStats)

    def __post_init__(self) -> None:
        self._sem = asyncio.Semaphore(self.max_connections)

    async def call_raw(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run a raw provider call (one the agent built itself) under the same connection limit and
        retry policy as `__call__`; never cached (such calls are for exact protocol replays)."""
        return await self._retrying(fn)

    async def __call__(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        key = None
        if self.cache is not None and config.is_deterministic():
            key = request_key(self.model.name, messages, tools, config)
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        out = await self._retrying(lambda: self.model.generate(messages, tools, config))
        self.stats.tokens += out.usage.total_tokens
        if key is not None and self.cache is not None and out.finish_reason != "error":
            self.cache.put(key, out)
        return out

    async def _retrying(self, fn: Callable[[], Awaitable[T]]) -> T:
        last: str | None = None
        identical = 0
        attempt = 0
        while True:
            try:
                async with self._sem:
                    self.stats.calls += 1
                    out = await fn()
                return out
            except ModelError as exc:
                msg = str(exc)
                identical = identical + 1 if msg == last else 1
                last = msg
                repeated = exc.status != 429 and identical >= self.max_identical
                if not exc.retryable or attempt >= self.retries or repeated:
                    self.stats.errors += 1
                    raise
                attempt += 1
                self.stats.retries += 1
                delay = exc.retry_after if exc.retry_after is not None else min(
                    self.backoff_max, self.backoff_base * (2 ** (attempt - 1))
                )
                delay = delay * (1 + random.uniform(0, 0.25)) if exc.retry_after is None else delay
                self.stats.retrying_now += 1
                try:
                    await asyncio.sleep(delay)
                finally:
                    self.stats.retrying_now -= 1
