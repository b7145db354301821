"""The calls of one task, and completions for the layers below: the `generate` an agent gets (`TaskCalls`: the run's `ModelCaller`, or a
baseline's own generate, with every call's finish reason, retries and timing logged for the
trajectory) and `CallerModel` (a `Model` whose generate goes through a `ModelCaller`, for judges) and
`model_completer` (a prompt-in, text-out call on a model, for the web layer's page summariser)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from toolsight.calls.retry import CallFailed, CallInfo, ModelCaller
from toolsight.calls.sent import SentLog
from toolsight.log.messages import Usage
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import ModelCallRecord
from toolsight.models.base import Generate, GenerateConfig, Message, Model, ModelError, ModelOutput
from toolsight.models.wire import WireProfile

T = TypeVar("T")


class CallerModel(Model):
    """A Model whose generate goes through a ModelCaller (limit, retries, cache) — for judges."""

    def __init__(self, caller: ModelCaller) -> None:
        super().__init__(caller.model.name)
        self.caller = caller

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await self.caller(messages, tools, config)

    def forget(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> None:
        self.caller.forget(messages, tools, config)

    def endpoint_id(self) -> str:
        return self.caller.model.endpoint_id()


@dataclass(frozen=True)
class RawBatch(Generic[T]):
    """How a raw call goes through a batch (`TaskCalls.call_raw`): `body`, the JSON request body for the
    provider's batch endpoint, and `parse`, turning the batch reply body into what the on-line raw
    call returns (a `ModelError` from it: the reply cannot be used, the call goes on-line);
    `endpoint`, the provider path the body is for when not the model's own (e.g. OpenAI's
    `/v1/responses`; its items go up in batches of their own)."""

    body: dict[str, Any]
    parse: Callable[[dict[str, Any]], T]
    endpoint: str | None = None


class TaskCalls:
    """The `generate` one task's agent gets: the run's ModelCaller (or a baseline's own generate),
    with every call's finish reason, retries and timing logged for the trajectory, and every request's
    tools and prompts noted in the run's `sent` log (`prompts`: the task's own, for the templates)."""

    def __init__(self, caller: ModelCaller | None, generate: Generate, cache_salt: str = "",
                 sent: SentLog | None = None, prompts: Sequence[str] = ()) -> None:
        self.caller = caller
        self.generate = generate
        self.log: list[ModelCallRecord] = []
        self.sent = sent
        self.prompts = tuple(prompts)
        # epoch N > 1 of a task must not replay epoch 1's cached replies (that would hide the variance
        # epochs measure); a resumed epoch still finds its own
        self.cache_salt = cache_salt

    async def call_raw(self, fn: Callable[[], Awaitable[T]], usage: Callable[[T], Usage | None] | None = None, *,
                       request: dict[str, Any] | None = None, batch: RawBatch[T] | None = None) -> T:
        """A raw provider call an official loop built itself, under the run's limit, retries and breaker,
        logged like every other call: `usage` reads its token usage from the reply (None: the reply
        reported none, logged as `usage_missing`); `request` is the body it sends (noted in the run's
        `sent` log). In batch mode, `batch` says how the call goes through a batch instead (the item
        failed or expired: on-line as usual); without it the call is counted as not batchable."""
        t0 = time.monotonic()
        index = len(self.log)
        if self.sent is not None and request is not None:
            self.sent.note_wire(request, self.prompts)
        route = self.caller.batch if self.caller is not None else None
        if route is not None and batch is None:  # batch mode cannot carry it: counted
            route.stats.unbatchable += 1
        elif route is not None and batch is not None:
            got = await route.raw(batch.body, batch.parse, endpoint=batch.endpoint)
            if got is not None:
                (parsed,) = got
                self._log_raw(index, t0, CallInfo(), usage(parsed) if usage is not None else None, batch=True)
                return parsed
        try:
            if self.caller is None:
                out, info = await fn(), CallInfo()
            else:
                out, info = await self.caller.call_raw(fn)
        except ModelError as exc:
            failed = exc.info if isinstance(exc, CallFailed) else CallInfo()
            self.log.append(ModelCallRecord(index=index, retries=failed.retries, waited_s=round(failed.waited_s, 3),
                                            duration_s=round(time.monotonic() - t0, 4), error=str(exc)))
            raise
        self._log_raw(index, t0, info, usage(out) if usage is not None else None)
        return out

    def _log_raw(self, index: int, t0: float, info: CallInfo, used: Usage | None, batch: bool = False) -> None:
        self.log.append(ModelCallRecord(
            index=index, retries=info.retries, duration_s=round(time.monotonic() - t0, 4),
            waited_s=round(info.waited_s, 3), input_tokens=used.input_tokens if used else 0,
            output_tokens=used.output_tokens if used else 0, cache_read_tokens=used.cache_read_tokens if used else 0,
            cache_write_tokens=used.cache_write_tokens if used else 0, usage_missing=used is None, batch=batch))

    async def __call__(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        t0 = time.monotonic()
        index = len(self.log)
        if self.sent is not None:
            self.sent.note(messages, tools, self.prompts)
        try:
            if self.caller is not None:
                out, info = (await self.caller.call(messages, tools, config, cache_salt=self.cache_salt)
                             if self.cache_salt else await self.caller.call(messages, tools, config))
            else:
                out, info = await self.generate(messages, tools, config), CallInfo()
        except ModelError as exc:
            failed = exc.info if isinstance(exc, CallFailed) else CallInfo()
            self.log.append(ModelCallRecord(index=index, retries=failed.retries, waited_s=round(failed.waited_s, 3),
                                            duration_s=round(time.monotonic() - t0, 4), error=str(exc)))
            raise
        self.log.append(ModelCallRecord(
            index=index, finish_reason=out.finish_reason, retries=info.retries, cached=out.cached or info.cached,
            duration_s=round(time.monotonic() - t0, 4), waited_s=round(info.waited_s, 3),
            input_tokens=out.usage.input_tokens, output_tokens=out.usage.output_tokens,
            cache_read_tokens=out.usage.cache_read_tokens, cache_write_tokens=out.usage.cache_write_tokens,
            batch=out.batch,
        ))
        return out


#: the page summariser's temperature (VisBrowse-Bench's `readpage`)
SUMMARY_TEMPERATURE = 0.6


class Completer(Protocol):
    """(prompt, attempt, parts) -> reply text: the shape of the web layer's `summarise.Complete`."""

    def __call__(self, prompt: str, attempt: int, parts: bool = False) -> Awaitable[str]: ...


#: a prompt sent as a one-part content list (`[{"type": "text", "text": …}]`), not a string
ONE_PART = WireProfile(name="prompt as one text part", text_content={"user": "parts"})


def model_completer(model: Model, temperature: float = SUMMARY_TEMPERATURE,
                    generate: Callable[[list[Message], list[Any], GenerateConfig], Awaitable[Any]] | None = None
                    ) -> Completer:
    """A prompt-in, text-out call (the web layer's `Complete`, e.g. its page summariser) that asks
    `model` (through `generate`, e.g. the runner's retrying caller); `parts` sends the prompt as a
    one-part content list on OpenAI-protocol models (the reference summariser's first request)."""
    gen = generate or model.generate
    config = GenerateConfig(temperature=temperature)
    as_parts = config.model_copy(update={"wire": ONE_PART})

    async def complete(prompt: str, attempt: int, parts: bool = False) -> str:
        try:
            out = await gen([Message.user(prompt)], [], as_parts if parts else config)
        except ModelError:
            return ""
        return str(out.message.text)

    return complete
