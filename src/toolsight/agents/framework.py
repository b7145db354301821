"""What the agent frameworks (`pyvision`, `deepeyes`) share: reading a turn, and asking the model.

Both are text-protocol agents that bring their own prompt templates and their own tool, so they
read a benchmark's turn through its `QuestionView` (`question_text`, `question_only`,
`option_texts`), never through the setting's `user_template`.

`ask` makes one model call. In the `official` loop, with a model that offers a raw Chat Completions
call (`chat_completions_raw`: the OpenAI provider, and any OpenAI-compatible server such as vLLM),
the messages go out as the framework's own wire dicts with its own parameters through the same
SDK call the original makes, so the request body is the original's byte for byte; the call still
goes through the run's connection limit, retries and outage breaker (`generate.call_raw`), never
the response cache; in batch mode (`--batch rounds`) it goes as a batch item with the same JSON
body (`chat_batch_body`), each round of every task waiting for its batch. Other providers, and the
`toolsight` loop, get the same messages as toolsight messages through the run's `generate` (retries, cache), with the same parameters.

Both agents only ever append to their conversation, so in the `toolsight` loop each request repeats
the previous one and asks for prompt caching (`prompt_cache`, as the toolsight agent loop does:
`write` while another call may follow, `read` on a turn's last allowed call); the official loop
asks for none, so its requests stay the driver's.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.calls.task import RawBatch
from toolsight.errors import ToolsightError
from toolsight.log.trajectory import Trajectory
from toolsight.models.base import (
    Generate,
    GenerateConfig,
    Message,
    Model,
    ModelError,
    ModelOutput,
    TextPart,
    Usage,
)
from toolsight.models.batch.sdk_body import chat_batch_body
from toolsight.tasks.schema import Turn
from toolsight.tools.base import Toolbox

#: a framework's generation parameters, in the order its original passes them to the SDK
Params = Mapping[str, Any]
#: messages -> the framework's own wire dicts (content shapes, image labels)
Wire = Callable[[list[Message]], list[dict[str, Any]]]
#: `GenerateConfig.prompt_cache`
PromptCache = Literal["off", "read", "write"]


class QuestionViewError(ToolsightError):
    """A `question_view` template names a field the turn does not have."""


_HEADER = re.compile(r"\s*(?:options|choices)\s*[:：]?\s*", re.IGNORECASE)


def strip_options(prompt: str, options: Mapping[str, str] | None) -> str:
    """`prompt` without the lines that list `options` ("A. x", "A: x", "(A) x", "A) x"), the blank lines
    among them and an "Options:" line just above them; unchanged unless every option has its line."""
    if not options:
        return prompt
    lines = prompt.split("\n")
    drop: set[int] = set()
    for letter, text in options.items():
        pat = re.compile(rf"^\s*\(?{re.escape(letter)}\s*[.:)]\s*{re.escape(text.strip())}\s*$")
        found = [i for i, line in enumerate(lines) if pat.match(line)]
        if not found:
            return prompt
        drop.add(found[-1])  # the last listing: the one a prompt ends with
    first, last = min(drop), max(drop)
    drop.update(i for i in range(first, last + 1) if not lines[i].strip())
    above = first - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and _HEADER.fullmatch(lines[above]):
        drop.update(range(above, first))
    return "\n".join(line for i, line in enumerate(lines) if i not in drop).rstrip()


def option_texts(turn: Turn) -> list[str]:
    """The turn's options in letter order (the texts only: a framework letters them itself)."""
    return [str(v) for v in (turn.options or {}).values()]


def _render(template: str, turn: Turn) -> str:
    fields: dict[str, Any] = {k: v for k, v in turn.meta.items() if isinstance(v, str | int | float)}
    fields.update(prompt=turn.prompt,
                  options="\n".join(f"{k}. {v}" for k, v in (turn.options or {}).items()),
                  prompt_without_options=strip_options(turn.prompt, turn.options))
    try:
        return template.format(**fields)
    except (KeyError, IndexError) as exc:
        raise QuestionViewError(
            f"question_view template {template!r} names {exc} which this turn does not have; use {{prompt}}, "
            f"{{options}}, {{prompt_without_options}} or one of the turn's meta fields ({', '.join(sorted(fields))}), "
            "e.g. --cap 'question_view={\"text\": \"{prompt}\"}'") from None


def view_of(settings: AgentSettings) -> QuestionView:
    return settings.question_view or QuestionView()


def question_text(settings: AgentSettings, turn: Turn) -> str:
    """The question as one text, options included where the benchmark writes them."""
    return _render(view_of(settings).text, turn)


def question_only(settings: AgentSettings, turn: Turn) -> str:
    """The question without its options (they are listed apart: `option_texts`)."""
    return _render(view_of(settings).question, turn)


def generate_config(params: Params, prompt_cache: PromptCache = "off") -> GenerateConfig:
    """The framework's parameters as toolsight generation settings (for `generate`)."""
    keys = ("temperature", "top_p", "max_tokens", "stop", "timeout")
    return GenerateConfig(**{k: params[k] for k in keys if params.get(k) is not None}, prompt_cache=prompt_cache)


def prompt_cache(official: bool, last: bool) -> PromptCache:
    """What a framework's call asks of the provider's prompt cache: nothing in the official loop;
    in the toolsight loop `write` (another call may read it), or `read` on the last call allowed."""
    return "off" if official else "read" if last else "write"


def _usage(resp: Mapping[str, Any]) -> Usage:
    u = resp.get("usage") or {}
    return Usage(input_tokens=int(u.get("prompt_tokens") or 0), output_tokens=int(u.get("completion_tokens") or 0))


def _parse(model: Model, resp: dict[str, Any]) -> ModelOutput:
    parse = getattr(model, "parse_dict", None)
    if callable(parse):
        out: ModelOutput = parse(resp)
        return out
    choice = (resp.get("choices") or [{}])[0]
    text = (choice.get("message") or {}).get("content")
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)] if text else []),
                       usage=_usage(resp), finish_reason="stop")


async def ask(model: Model, generate: Generate, messages: list[Message], wire: Wire, params: Params, *,
              official: bool, traj: Trajectory, cache: PromptCache = "off") -> tuple[str | None, ModelOutput]:
    """One model call (see the module docstring). Returns the reply's content as the original reads it
    (`None` when the server sent none) and the parsed output; counts the call and its usage. `cache`:
    the request's `GenerateConfig.prompt_cache` when it goes through `generate` (`prompt_cache()`)."""
    raw = getattr(model, "chat_completions_raw", None)
    traj.model_calls += 1
    if official and raw is not None:
        kwargs: dict[str, Any] = {"model": str(getattr(model, "model_id", model.name)), "messages": wire(messages)}
        kwargs.update({k: v for k, v in params.items() if k != "timeout"})
        timeout = float(params.get("timeout") or 600.0)

        async def once() -> list[dict[str, Any]]:
            assert raw is not None
            got: list[dict[str, Any]] = await raw(kwargs, timeout)
            return got

        call_raw = getattr(generate, "call_raw", None)
        # batch mode (`--batch rounds`): the same body as a batch item, its reply what the unstreamed
        # on-line call returns (one response dict)
        batch = None if kwargs.get("stream") else RawBatch(chat_batch_body(kwargs), lambda reply: [reply])
        # logged with its usage (None when the reply has none); the provider adds the task header
        chunks = await (call_raw(once, lambda cs: _usage(cs[0]) if cs and cs[0].get("usage") else None,
                                 request=kwargs, batch=batch)
                        if call_raw is not None else once())
        if not chunks:
            raise ModelError(f"{model.name}: empty response")
        resp = chunks[0]
        out = _parse(model, resp)
        choice = (resp.get("choices") or [{}])[0]
        content = (choice.get("message") or {}).get("content")
        text = content if isinstance(content, str) else None
    else:
        out = await generate(messages, [], generate_config(params, cache))
        text = out.message.text if out.message.content else None
        if out.cached:
            traj.cache_hits += 1
    traj.usage = traj.usage + out.usage
    return text, out


@asynccontextmanager
async def finishing(traj: Trajectory, msgs: list[Message], box: Toolbox, own: Toolbox | None,
                    t0: float) -> AsyncIterator[None]:
    """Around a framework agent's turns: however they end, the trajectory gets the messages, the
    artifacts and the duration; a model error becomes the task's `TaskFailed` (with the trajectory);
    a toolbox the agent opened itself (`own`) is closed."""

    def finish() -> None:
        traj.messages = list(msgs)
        traj.artifacts = box.store.all()
        traj.duration_s = round(time.monotonic() - t0, 4)

    try:
        yield
    except ModelError as exc:
        traj.stop_reason = "model_error"
        finish()
        raise TaskFailed(f"model error: {exc}", traj) from exc
    except TaskFailed as exc:
        finish()
        exc.trajectory = traj
        raise
    finally:
        if own is not None:
            await own.aclose()
    finish()


__all__ = [
    "Params",
    "QuestionViewError",
    "Wire",
    "ask",
    "finishing",
    "generate_config",
    "option_texts",
    "prompt_cache",
    "question_only",
    "question_text",
    "strip_options",
    "view_of",
]
