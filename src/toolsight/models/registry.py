"""Model specs -> Model objects, chosen by prefix (`openai/`, `anthropic/`, `google/`, `mock/`, ...).

Extensible: `register_provider(prefix, factory, description)` adds a prefix; a factory is called as
`factory(spec, base_url=..., **opts)` with the full spec (e.g. "reference" or "openai/gpt-4o").
A spec without "/" is looked up whole (baselines such as `reference`, `random`). Built-in providers
are registered once, below, by plain import inside their factories (so the SDKs load only when
used); third-party packages add prefixes through the `toolsight.models` entry-point group.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import ConfigurationError, GenerateConfig, Message, Model, ModelOutput

ModelFactory = Callable[..., Model]
SCRIPT_ENV = "TOOLSIGHT_SCRIPT"


@dataclass(frozen=True)
class Provider:
    prefix: str
    factory: ModelFactory
    description: str


PROVIDERS: dict[str, Provider] = {}
_entry_points_loaded = False


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="toolsight.models"):
        register_provider(ep.name, ep.load(), f"from {ep.value}")


def register_provider(prefix: str, factory: ModelFactory, description: str = "") -> None:
    """Add (or replace) a provider prefix, e.g. `register_provider("random", make_random, "...")`."""
    PROVIDERS[prefix] = Provider(prefix, factory, description)


def list_providers() -> list[tuple[str, str]]:
    """(prefix, description) for `toolsight list models`, in registration order."""
    _load_entry_points()
    return [(p.prefix, p.description) for p in PROVIDERS.values()]


#: the usual model-name beginnings of the hosted providers, for `-m gpt-4o` → did you mean openai/gpt-4o?
_FAMILIES = {"gpt": "openai", "o1": "openai", "o3": "openai", "o4": "openai", "chatgpt": "openai",
             "claude": "anthropic", "gemini": "google"}


def _suggest(spec: str) -> str:
    """`did you mean …? ` for a spec whose prefix is misspelt, that lacks its provider prefix, or that is
    a misspelt baseline; empty when nothing is close."""
    import difflib

    prefix, rest = _split(spec)
    close = difflib.get_close_matches(prefix, list(PROVIDERS), n=1, cutoff=0.6)
    if rest and close:
        return f"did you mean '{close[0]}/{rest}'? "
    if not rest:
        family = _FAMILIES.get(spec.lower().split("-")[0].split(".")[0])
        if family is not None:
            return f"did you mean '{family}/{spec}'? "
        if close and close[0] not in _NEEDS_NAME:
            return f"did you mean {close[0]!r}? "
    return ""


def _split(spec: str) -> tuple[str, str]:
    prefix, _, rest = spec.partition("/")
    return prefix, rest


def get_model(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    """Build the model for `spec`. Unknown prefix or missing key -> ConfigurationError."""
    _load_entry_points()
    prefix, rest = _split(spec.strip())
    provider = PROVIDERS.get(prefix)
    if provider is None:
        known = ", ".join(f"{p}/" if p in _NEEDS_NAME else p for p in PROVIDERS)
        what = f"the prefix {prefix!r} is not a provider" if rest else "not a provider prefix or a baseline"
        raise ConfigurationError(f"unknown model {spec!r}: {what}; {_suggest(spec.strip())}known: {known}")
    if prefix in _NEEDS_NAME and not rest:
        raise ConfigurationError(f"model {spec!r} needs a name after the prefix, e.g. '{prefix}/NAME'")
    return provider.factory(spec, base_url=base_url, **opts)


# --- built-in providers ---------------------------------------------------------------------------

_NEEDS_NAME = {"openai", "anthropic", "google", "mock", "scripted"}


def _openai(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.openai_provider import OpenAIModel

    return OpenAIModel(spec, _split(spec)[1], base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
                       api_key_value=opts.get("api_key"), default_headers=opts.get("headers"))


def _anthropic(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.anthropic_provider import AnthropicModel

    return AnthropicModel(spec, _split(spec)[1], base_url=base_url, api_key_value=opts.get("api_key"))


def _google(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.google_provider import GoogleModel

    return GoogleModel(spec, _split(spec)[1], base_url=base_url, api_key_value=opts.get("api_key"))


def _script(opts: dict[str, Any]) -> Any:
    from toolsight.models.scripted.script import Script

    src = opts.get("script") or os.environ.get(SCRIPT_ENV)
    if src is None:
        return Script.answer("mock answer")
    if isinstance(src, Script):
        return src
    if isinstance(src, dict):
        return Script.model_validate(src)
    return Script.load(Path(str(src)))


def _mock(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.scripted.inproc import ScriptedModel

    return ScriptedModel(spec, _script(opts))


class ServedModel(Model):
    """`scripted/PROVIDER`: starts a ScriptedServer and talks to it through that provider's SDK."""

    def __init__(self, spec: str, inner_prefix: str, script: Any) -> None:
        super().__init__(spec)
        from toolsight.models.scripted.server import ScriptedServer

        if inner_prefix not in ("openai", "anthropic", "google"):
            raise ConfigurationError(f"model {spec!r}: use scripted/openai, scripted/anthropic or scripted/google")
        self.server = ScriptedServer(script, record=False)
        url = self.server.start()
        self.inner = get_model(f"{inner_prefix}/scripted", base_url=url + "/v1" if inner_prefix == "openai" else url,
                               api_key="scripted")
        self.tool_image_mode = self.inner.tool_image_mode

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        return await self.inner.generate(messages, tools, config)

    async def aclose(self) -> None:
        await self.inner.aclose()
        self.server.stop()


def _served(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    return ServedModel(spec, _split(spec)[1].split("/")[0], _script(opts))


register_provider("openai", _openai, "OpenAI Chat Completions (OPENAI_API_KEY); vLLM/SGLang/Ollama via --base-url")
register_provider("anthropic", _anthropic, "Anthropic Messages API (ANTHROPIC_API_KEY)")
register_provider("google", _google, "Gemini via google-genai (GEMINI_API_KEY or GOOGLE_API_KEY)")
register_provider("mock", _mock, f"in-process scripted model (JSON script file in ${SCRIPT_ENV})")
register_provider("scripted", _served, "scripted/openai|anthropic|google: local scripted server behind that SDK")


def _reference(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.baselines import ReferenceModel

    return ReferenceModel(spec)


def _random(spec: str, base_url: str | None = None, **opts: Any) -> Model:
    from toolsight.models.baselines import make_random

    return make_random(spec)


register_provider("reference", _reference,
                  "baseline: runs each generated task's reference solution through the real tools")
register_provider("random", _random, "baseline: uniform random choice over the options (random/SEED)")
