"""Helpers shared by the provider adapters: API keys, Retry-After parsing, error classification."""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

from toolsight.log.arguments import ArgumentsError, load_arguments
from toolsight.models.base import ConfigurationError, ModelError

T = TypeVar("T")

#: statuses worth retrying: request timeout, conflict, rate limit, and every server error
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


#: what reading a reply raises when the reply is not what the wire promises (not JSON, not UTF-8, a
#: field of the wrong type or missing): the reply is malformed, which is the model endpoint's fault
MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


async def read_reply(name: str, work: Awaitable[T]) -> T:
    """`await work`, with a reply that cannot be read turned into a retryable ModelError that says
    why (a malformed reply counts as a model error, retried per --retries, never a harness error)."""
    try:
        return await work
    except ModelError:
        raise
    except MALFORMED as exc:
        raise ModelError(f"{name}: malformed reply ({type(exc).__name__}: {_clip(str(exc))})",
                         retryable=True, kind="response") from None


def _clip(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def api_key(spec: str, env_vars: tuple[str, ...], explicit: str | None, base_url: str | None) -> str:
    """The API key from `explicit` or the first set env var; optional when a base URL is given."""
    if explicit:
        return explicit
    for var in env_vars:
        val = os.environ.get(var)
        if val:
            return val
    if base_url:
        return "EMPTY"  # OpenAI-compatible servers (vLLM, SGLang, Ollama) usually ignore the key
    names = " or ".join(env_vars)
    raise ConfigurationError(
        f"{spec}: no API key: set the environment variable {names} (e.g. `export {env_vars[0]}=...`)"
    )


def retry_after_seconds(headers: Mapping[str, str] | Any | None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `Retry-After` (delta seconds or an HTTP date)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        val = headers.get("retry-after")
    except (AttributeError, ValueError):
        return None
    if val is None:
        return None
    try:
        return max(0.0, float(val))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(val))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(spec: str, status: int, detail: str, headers: Any = None, key_var: str | None = None) -> ModelError:
    """A ModelError for an HTTP error status, retryable for 408/409/429/5xx."""
    detail = " ".join(detail.split())[:500]
    hint = ""
    if status in (401, 403) and key_var:
        hint = f" (check {key_var})"
    return ModelError(
        f"{spec}: HTTP {status}: {detail}{hint}",
        retryable=is_retryable_status(status),
        retry_after=retry_after_seconds(headers),
        status=status,
    )


def timeout_error(spec: str, timeout: float) -> ModelError:
    return ModelError(f"{spec}: no response within {timeout:g} s (timeout)", retryable=True, kind="timeout")


def connection_error(spec: str, detail: str) -> ModelError:
    detail = " ".join(detail.split())[:300]
    return ModelError(f"{spec}: connection failed: {detail}", retryable=True, kind="connection")


def object_arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments as the JSON object the Anthropic and Gemini wires need; malformed or
    non-object arguments are wrapped as {"_raw": ...}, not dropped, so they survive the round trip.

    Every request re-sends the whole history, so a task of n tool calls decodes n(n+1)/2 argument
    strings; short ones (nearly all) are decoded once and kept (`_ARGS_CACHE`). The object is shared
    between requests: the wire builders put it into a body and never change it."""
    if len(raw) > _ARGS_CACHE_CHARS:
        return _object_arguments(raw)
    val = _ARGS_CACHE.get(raw)
    if val is None:
        if len(_ARGS_CACHE) >= _ARGS_CACHE_SIZE:
            _ARGS_CACHE.clear()  # one step, safe from any thread; refilled by the tasks in flight
        val = _ARGS_CACHE[raw] = _object_arguments(raw)
    return val


#: decoded arguments by their raw string: at most this many, of at most this many characters each
_ARGS_CACHE_SIZE = 2048
_ARGS_CACHE_CHARS = 2048
_ARGS_CACHE: dict[str, dict[str, Any]] = {}


def _object_arguments(raw: str) -> dict[str, Any]:
    try:
        val = load_arguments(raw) if raw.strip() else {}
    except ArgumentsError:
        return {"_raw": raw}
    return val if isinstance(val, dict) else {"_raw": raw}


async def stainless_call(spec: str, sdk: Any, request: Awaitable[Any], timeout: float, key_var: str) -> Any:
    """Await a request of a Stainless-generated SDK (openai, anthropic: the same exception classes)
    and turn its errors into ModelErrors the runner knows how to retry."""
    try:
        return await request
    except sdk.APIStatusError as exc:
        raise status_error(spec, exc.status_code, exc.message, exc.response.headers, key_var) from None
    except sdk.APITimeoutError:
        raise timeout_error(spec, timeout) from None
    except sdk.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        raise connection_error(spec, f"{type(cause).__name__}: {cause}") from None
    except sdk.APIResponseValidationError as exc:
        raise ModelError(f"{spec}: malformed response: {exc}", retryable=True) from None
