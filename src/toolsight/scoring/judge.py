"""LLM judges: ordinary toolsight `Model`s asked one prompt at a time, every call recorded.

A `JudgeRunner` wraps the judge model of a `ScoreContext` with the judge settings
(temperature 0 and a fixed seed unless configured otherwise), a retry count and a concurrency
limit (an `asyncio.Semaphore`, shared by every call made through the runner). Each attempt is
recorded as a `JudgeCall` (model, prompt, raw reply, seed, error) so a verdict can be audited
and reproduced. Caching is not done here: the run's cache layer wraps the Model itself; a reply
that `stop` does not accept is dropped from that cache (`Model.forget`), so it is neither replayed
by a later attempt nor by a later `toolsight score`.

The runner does not decide what a reply means. `attempts()` calls the judge until a `stop`
predicate accepts a reply (or the attempts run out) and returns every call; `ask()` adds a
parser on top: a reply that cannot be parsed is retried and, when no attempt parses, the
outcome carries an `error` — callers turn that into `Score.error`, never into a silent fail.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from toolsight.errors import ToolsightError
from toolsight.models.base import GenerateConfig, Message, Model
from toolsight.scoring.base import JudgeCall, ScoreContext
from toolsight.tasks.schema import Task

T = TypeVar("T")

DEFAULT_CONCURRENCY = 8


class JudgeUnavailableError(ToolsightError, ValueError):
    """A scorer needs an LLM judge but none was configured."""


def require_judge(ctx: ScoreContext, scorer: str) -> Model:
    """The judge model of `ctx`, or a clear error naming the flag that sets it."""
    if ctx.judge is None:
        raise JudgeUnavailableError(
            f"scorer {scorer!r} needs an LLM judge: pass --judge MODEL (e.g. --judge openai/gpt-4o) "
            "or set ScoreContext.judge"
        )
    return ctx.judge


def judge_need(scorer: object, tasks: Sequence[Task]) -> str | None:
    """Why `scorer` needs an LLM judge to score `tasks` (a scorer says so with a `judge_need(tasks)`
    method), or None when it scores them without one. A run checks this before it starts."""
    need = getattr(scorer, "judge_need", None)
    return need(tasks) if callable(need) else None


@dataclass
class JudgeOutcome(Generic[T]):
    """What came of asking a judge one question: the parsed value (None on failure) and every call."""

    value: T | None
    calls: list[JudgeCall] = field(default_factory=list)
    error: str | None = None

    @property
    def reply(self) -> str | None:
        """The last reply received (None when every attempt raised)."""
        for call in reversed(self.calls):
            if call.error is None:
                return call.reply
        return None


class JudgeRunner:
    """Calls one judge model under a concurrency limit, with retries, recording every call."""

    def __init__(self, model: Model, config: GenerateConfig | None = None, *,
                 concurrency: int = DEFAULT_CONCURRENCY, retries: int = 3) -> None:
        if concurrency < 1:
            raise ValueError(f"judge concurrency must be >= 1, got {concurrency}")
        if retries < 1:
            raise ValueError(f"judge retries (attempts per question) must be >= 1, got {retries}")
        self.model = model
        self.config = config if config is not None else GenerateConfig(temperature=0.0, seed=0)
        self.retries = retries
        self.semaphore = asyncio.Semaphore(concurrency)

    @classmethod
    def from_context(cls, ctx: ScoreContext, scorer: str, *,
                     concurrency: int = DEFAULT_CONCURRENCY) -> JudgeRunner:
        """A runner for `ctx.judge` with `ctx.judge_config` and `ctx.judge_retries`."""
        return cls(require_judge(ctx, scorer), ctx.judge_config, concurrency=concurrency,
                   retries=max(1, ctx.judge_retries))

    async def call(self, prompt: str) -> JudgeCall:
        """One judge call. A raised exception is recorded in `JudgeCall.error`, never propagated."""
        record = JudgeCall(model=self.model.name, prompt=prompt, seed=self.config.seed,
                           temperature=self.config.temperature)
        async with self.semaphore:
            try:
                out = await self.model.generate([Message.user(prompt)], [], self.config)
            except Exception as exc:  # any provider failure is one failed attempt
                record.error = f"{type(exc).__name__}: {exc}"
                return record
        record.reply = out.text
        record.cached = out.cached
        record.usage = out.usage
        record.batch = out.batch
        return record

    async def attempts(self, prompt: str, stop: Callable[[str], bool],
                       max_attempts: int | None = None) -> list[JudgeCall]:
        """Call the judge until `stop(reply)` is true or the attempts run out; every call, in order."""
        calls: list[JudgeCall] = []
        for _ in range(max_attempts or self.retries):
            call = await self.call(prompt)
            calls.append(call)
            if call.error is None and stop(call.reply or ""):
                break
            if call.error is None:  # a reply that does not do: never kept, so the next attempt asks again
                self.model.forget([Message.user(prompt)], [], self.config)
        return calls

    async def ask(self, prompt: str, parse: Callable[[str], T | None],
                  max_attempts: int | None = None) -> JudgeOutcome[T]:
        """Ask until a reply parses. No parse after all attempts -> `error` set, `value` None."""
        parsed: list[T] = []

        def stop(reply: str) -> bool:
            value = parse(reply)
            if value is None:
                return False
            parsed.append(value)
            return True

        calls = await self.attempts(prompt, stop, max_attempts)
        if parsed:
            return JudgeOutcome(parsed[-1], calls)
        last = calls[-1]
        if last.error is not None:
            why = f"judge call failed {len(calls)} time(s); last error: {last.error}"
        else:
            why = f"judge reply could not be parsed after {len(calls)} attempt(s); last reply: {_clip(last.reply)}"
        return JudgeOutcome(None, calls, why)


_SHARED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                   weakref.WeakKeyDictionary[Model, dict[tuple[str, int, int], JudgeRunner]]]
_SHARED = weakref.WeakKeyDictionary()


def shared_runner(ctx: ScoreContext, scorer: str, *, concurrency: int = DEFAULT_CONCURRENCY) -> JudgeRunner:
    """The runner for `ctx.judge` shared by every task scored in this event loop with the same settings.

    Sharing the runner shares its semaphore, so the concurrency limit holds across all tasks being
    scored at once, not per task. Must be called from a running event loop.
    """
    judge = require_judge(ctx, scorer)
    concurrency = max(concurrency, ctx.judge_width or 0)
    loop = asyncio.get_running_loop()
    per_loop = _SHARED.setdefault(loop, weakref.WeakKeyDictionary())
    per_model = per_loop.setdefault(judge, {})
    key = (ctx.judge_config.model_dump_json(), max(1, ctx.judge_retries), concurrency)
    if key not in per_model:
        per_model[key] = JudgeRunner.from_context(ctx, scorer, concurrency=concurrency)
    return per_model[key]


def _clip(text: str | None, limit: int = 200) -> str:
    if text is None:
        return "None"
    return repr(text if len(text) <= limit else text[:limit] + "...")
