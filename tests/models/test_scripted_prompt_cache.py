"""The scripted server's prompt cache (models/scripted/prompt_cache.py), read back through the official SDKs.

Each test sends a conversation, then the same conversation with one more exchange, and checks the
cached tokens each provider would report for the second request against the first request's own
input token count (the whole of it is the prefix the second one repeats).
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from wirekit import calls, make_model

from toolsight.models.base import GenerateConfig, Message, TextPart
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.prompt_cache import MIN_CACHED_TOKENS, OPENAI_STEP
from toolsight.models.scripted.script import Script, Step

LONG = "alpha " * 1500  # 1500 tokens: above every provider's minimum
SHORT = "alpha " * 100


def _conversations(system: str) -> list[list[Message]]:
    first = [Message.system(system), Message.user("What is in the picture?")]
    second = [*first, Message(role="assistant", content=[TextPart(text="A cat.")]), Message.user("And its colour?")]
    return [first, second]


def _run(provider: str, system: str, config: GenerateConfig | None = None,
         script: Script | None = None) -> tuple[list[Any], ScriptedServer]:
    srv = ScriptedServer(script or Script(steps=[Step(text="ok")]))
    with srv:
        outs = calls(make_model(provider, srv), _conversations(system), config)
    for o in outs:
        assert not isinstance(o, Exception), o
    return outs, srv


def test_openai_caches_the_longest_earlier_prefix_in_128_token_steps() -> None:
    (a, b), srv = _run("openai", LONG)
    first = a.usage.input_tokens
    assert a.usage.cache_read_tokens == 0
    assert b.usage.cache_read_tokens == first // OPENAI_STEP * OPENAI_STEP
    assert b.usage.cache_read_tokens >= MIN_CACHED_TOKENS and first % OPENAI_STEP != 0  # the rounding was needed
    assert srv.requests[1].body["messages"][:2] == srv.requests[0].body["messages"]


def test_openai_caches_nothing_below_1024_tokens() -> None:
    (a, b), _ = _run("openai", SHORT)
    assert a.usage.input_tokens < MIN_CACHED_TOKENS
    assert (a.usage.cache_read_tokens, b.usage.cache_read_tokens) == (0, 0)


def test_gemini_caches_the_earlier_prefix_unrounded() -> None:
    (a, b), _ = _run("google", LONG)
    assert a.usage.cache_read_tokens == 0
    assert b.usage.cache_read_tokens == a.usage.input_tokens


def test_anthropic_caches_only_at_breakpoints() -> None:
    (a, b), srv = _run("anthropic", LONG)  # no prompt_cache: no breakpoints, nothing cached
    assert "cache_control" not in json.dumps(srv.requests[1].body)
    assert (a.usage.cache_read_tokens, a.usage.cache_write_tokens, b.usage.cache_read_tokens) == (0, 0, 0)


def test_anthropic_writes_then_reads_the_prefix_at_its_breakpoints() -> None:
    (a, b), _ = _run("anthropic", LONG, GenerateConfig(timeout=10, prompt_cache="write"))
    # first request: the whole prompt is written (its last block carries the last breakpoint)
    assert (a.usage.cache_read_tokens, a.usage.cache_write_tokens) == (0, a.usage.input_tokens)
    # second: the first request's prompt is read; what it added is written
    assert b.usage.cache_read_tokens == a.usage.input_tokens
    assert b.usage.cache_write_tokens == b.usage.input_tokens - a.usage.input_tokens > 0


def test_anthropic_read_marks_read_the_prefix_and_write_nothing_new() -> None:
    srv = ScriptedServer(Script(steps=[Step(text="ok")]))
    first, second = _conversations(LONG)
    with srv:
        model = make_model("anthropic", srv)
        a, = calls(model, [first], GenerateConfig(timeout=10, prompt_cache="write"))
        model = make_model("anthropic", srv)
        b, = calls(model, [second], GenerateConfig(timeout=10, prompt_cache="read"))
        marks = [m for m in srv.requests[1].body["messages"] if "cache_control" in json.dumps(m)]
    assert len(marks) == 1 and marks[0]["content"][0]["text"] == "What is in the picture?"
    assert b.usage.cache_read_tokens == a.usage.input_tokens
    assert b.usage.cache_write_tokens == 0  # the rest is billed as plain input: no round follows to read it


def test_anthropic_input_tokens_on_the_wire_are_the_uncached_rest() -> None:
    srv = ScriptedServer(Script(steps=[Step(text="ok")]))
    with srv:
        calls(make_model("anthropic", srv), _conversations(LONG), GenerateConfig(timeout=10, prompt_cache="write"))
        body = srv.requests[1].body
        req = urllib.request.Request(srv.base_url + "/v1/messages", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:  # the same request again: all read, nothing new
            usage = json.loads(r.read())["usage"]
    assert usage["cache_creation_input_tokens"] == 0
    assert usage["cache_read_input_tokens"] > MIN_CACHED_TOKENS
    assert usage["input_tokens"] == 0


def test_anthropic_short_prefixes_are_not_cached() -> None:
    (a, b), _ = _run("anthropic", SHORT, GenerateConfig(timeout=10, prompt_cache="write"))
    assert (a.usage.cache_write_tokens, b.usage.cache_read_tokens, b.usage.cache_write_tokens) == (0, 0, 0)


def test_responses_api_reports_cached_input_tokens() -> None:
    body: dict[str, Any] = {"model": "gpt-x", "instructions": LONG, "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "What is in the picture?"}]}]}
    more = {**body, "input": [*body["input"], {"role": "user", "content": [{"type": "input_text", "text": "More?"}]}]}
    got = []
    with ScriptedServer(Script(steps=[Step(text="ok")])) as srv:
        for b in (body, more):
            req = urllib.request.Request(srv.base_url + "/v1/responses", data=json.dumps(b).encode(),
                                         headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                got.append(json.loads(r.read())["usage"])
    assert got[0]["input_tokens_details"]["cached_tokens"] == 0
    assert got[1]["input_tokens_details"]["cached_tokens"] == got[0]["input_tokens"] // OPENAI_STEP * OPENAI_STEP


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_the_cache_can_be_switched_off_and_totals_do_not_change(provider: str) -> None:
    config = GenerateConfig(timeout=10, prompt_cache="write")
    (_, on), _ = _run(provider, LONG, config)
    (_, off), _ = _run(provider, LONG, config, Script(steps=[Step(text="ok")], prompt_cache=False))
    assert on.usage.cache_read_tokens > 0
    assert (off.usage.cache_read_tokens, off.usage.cache_write_tokens) == (0, 0)
    assert off.usage.input_tokens == on.usage.input_tokens



def _anthropic_usage(srv: ScriptedServer, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(srv.base_url + "/v1/messages", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        usage: dict[str, Any] = json.loads(r.read())["usage"]
    return usage


def test_anthropic_a_new_tool_choice_reads_the_tools_and_system_prompt_but_not_the_messages() -> None:
    """Anthropic: changing `tool_choice` invalidates the cached message blocks, not the tools and
    system prompt before them (the toolsight loop's forbidden last round sends `tool_choice: none`)."""
    mark = {"type": "ephemeral"}
    body: dict[str, Any] = {
        "model": "claude-x", "max_tokens": 10,
        "tools": [{"name": "crop", "description": "Crop. " * 50, "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": LONG, "cache_control": mark}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": SHORT, "cache_control": mark}]}]}
    with ScriptedServer(Script(steps=[Step(text="ok")])) as srv:
        first = _anthropic_usage(srv, body)
        auto = _anthropic_usage(srv, {**body, "tool_choice": {"type": "auto"}})  # the default, said aloud
        none = _anthropic_usage(srv, {**body, "tool_choice": {"type": "none"}})
    total = first["cache_creation_input_tokens"]
    assert first["cache_read_input_tokens"] == 0 and total > 2 * MIN_CACHED_TOKENS
    assert (auto["cache_read_input_tokens"], auto["input_tokens"]) == (total, 0)
    assert MIN_CACHED_TOKENS < none["cache_read_input_tokens"] < total  # the tools and the system prompt
    assert none["cache_read_input_tokens"] + none["cache_creation_input_tokens"] == total  # the messages again
