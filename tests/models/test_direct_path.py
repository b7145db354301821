"""The adapters' direct path (models/_direct.py) sends exactly what the SDK path sends — URL, headers,
JSON body byte for byte — reads the replies the same way, and fails the same way."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from wirekit import CROP, PROVIDERS, write_png

from toolsight.models.anthropic_provider import AnthropicModel
from toolsight.models.base import GenerateConfig, ImagePart, Message, Model, ModelError, ModelOutput, TextPart
from toolsight.models.google_provider import GoogleModel
from toolsight.models.openai_provider import OpenAIModel
from toolsight.models.scripted import Script, ScriptedCall, ScriptedServer, Step

CONFIGS = [
    GenerateConfig(temperature=0.5, top_p=0.9, max_tokens=100, seed=3, stop=["X"], reasoning_effort="low",
                   timeout=20, extra_body={"custom": {"a": 1}}),
    GenerateConfig(thinking_budget=1000, temperature=0, timeout=20),
    GenerateConfig(timeout=20),
    GenerateConfig(timeout=20, tool_choice="none"),
]


def _model(provider: str, srv: ScriptedServer, direct: bool) -> Model:
    name = f"{provider}/test-model"
    if provider == "openai":
        return OpenAIModel(name, "test-model", base_url=srv.openai_base_url, api_key_value="k", direct=direct)
    if provider == "anthropic":
        return AnthropicModel(name, "test-model", base_url=srv.base_url, api_key_value="k", direct=direct)
    return GoogleModel(name, "test-model", base_url=srv.base_url, api_key_value="k", direct=direct)


def _script() -> Script:
    crop = ScriptedCall(name="crop", arguments={"x": 3}, id="c1")
    again = ScriptedCall(name="crop", arguments={"x": 4}, id="c2")
    return Script(steps=[
        Step(text="Zooming.", reasoning="look closer", tool_calls=[crop], input_tokens=5, output_tokens=2),
        Step(tool_calls=[again], input_tokens=7, output_tokens=3),  # fixed: the server would count bytes
        Step(text="<answer>7</answer>", input_tokens=9, output_tokens=1),
    ])


def _conversation(provider: str, direct: bool, config: GenerateConfig, tmp: Path) -> tuple[list[ModelOutput], Any]:
    """System + user with an image, then two tool rounds with images: three calls on one model."""
    img, crop = write_png(tmp / "in.png", seed=1), write_png(tmp / "crop.png", seed=2)
    with ScriptedServer(_script()) as srv:
        model = _model(provider, srv, direct)

        async def go() -> list[ModelOutput]:
            msgs = [Message.system("Use tools. Ünïcode ✓."), Message.user("How many dots?", images=[ImagePart(path=str(img))])]
            outs: list[ModelOutput] = []
            try:
                for _ in range(3):
                    out = await model.generate(msgs, [CROP], config)
                    outs.append(out)
                    msgs.append(out.message)
                    for c in out.tool_calls:
                        msgs.append(Message(role="tool", tool_call_id=c.id, name=c.name,
                                            content=[TextPart(text="cropped"), ImagePart(path=str(crop))]))
            finally:
                await model.aclose()
            return outs

        outs = asyncio.run(go())
    return outs, (srv.requests, model)


def _headers(provider: str, h: dict[str, str]) -> dict[str, str]:
    # google-genai encodes with `json.dumps` defaults (", " and ": "); the direct path sends the same
    # JSON compactly, so only there the length differs
    skip = {"host", "content-length"} if provider == "google" else {"host"}
    return {k.lower(): v for k, v in h.items() if k.lower() not in skip}


@pytest.mark.parametrize("config", CONFIGS, ids=["all-settings", "thinking", "defaults", "tool-choice-none"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_direct_path_sends_what_the_sdk_sends(provider: str, config: GenerateConfig, tmp_path: Path) -> None:
    sdk_outs, (sdk_reqs, _) = _conversation(provider, False, config, tmp_path)
    outs, (reqs, model) = _conversation(provider, True, config, tmp_path)
    assert len(reqs) == len(sdk_reqs) == 3
    for ours, theirs in zip(reqs, sdk_reqs, strict=True):
        assert ours.path == theirs.path
        assert ours.body == theirs.body
        # same headers, and (openai, anthropic) the same Content-Length: the bytes the SDK would send
        assert _headers(provider, ours.headers) == _headers(provider, theirs.headers)
    assert outs == sdk_outs
    if config.tool_choice == "none":  # each provider's way of forbidding the tools it is offered
        key, value = {"openai": ("tool_choice", "none"), "anthropic": ("tool_choice", {"type": "none"}),
                      "google": ("toolConfig", {"functionCallingConfig": {"mode": "NONE"}})}[provider]
        assert all(r.body[key] == value for r in reqs)
    assert [c.id for o in outs for c in o.tool_calls] == ["c1", "c2"]
    assert outs[0].message.reasoning == "look closer" and outs[2].text == "<answer>7</answer>"
    # openai/anthropic learn the route from the SDK's first request; google's comes from the SDK's
    # request builder, so every request of the conversation went the direct way
    assert model._direct.sent == (3 if provider == "google" else 2)


def _faults(provider: str, direct: bool) -> tuple[list[Any], Any]:  # Any: the adapter's _direct is read
    script = Script(steps=[
        Step(text="warm-up"),
        Step(fault="status", status=429, retry_after=7),
        Step(fault="status", status=500),
        Step(fault="status", status=400),
        Step(fault="drop"),
        Step(fault="stall", seconds=5, text="late"),
        Step(text="fine"),
    ])
    config = GenerateConfig(timeout=1.0)
    with ScriptedServer(script) as srv:
        model = _model(provider, srv, direct)

        async def go() -> list[Any]:
            out: list[Any] = []
            try:
                for _ in range(7):
                    try:
                        out.append(await model.generate([Message.user("q")], [], config))
                    except ModelError as exc:
                        out.append(exc)
            finally:
                await model.aclose()
            return out

        return asyncio.run(go()), model


@pytest.mark.parametrize("provider", PROVIDERS)
def test_direct_path_fails_the_way_the_sdk_path_fails(provider: str) -> None:
    sdk, _ = _faults(provider, False)
    ours, model = _faults(provider, True)
    assert model._direct.sent == (7 if provider == "google" else 6)
    assert [o.text for o in (ours[0], ours[6])] == [s.text for s in (sdk[0], sdk[6])] == ["warm-up", "fine"]
    for mine, theirs in zip(ours[1:4], sdk[1:4], strict=True):  # 429, 500, 400: same error, same message
        assert isinstance(mine, ModelError) and isinstance(theirs, ModelError)
        assert (str(mine), mine.retryable, mine.status, mine.retry_after) == \
            (str(theirs), theirs.retryable, theirs.status, theirs.retry_after)
    assert ours[1].retry_after == 7 and ours[1].retryable and not ours[3].retryable
    dropped, stalled = ours[4], ours[5]
    assert isinstance(dropped, ModelError) and dropped.retryable and dropped.status is None
    assert "connection failed" in str(dropped)
    assert isinstance(stalled, ModelError) and stalled.retryable and "timeout" in str(stalled)


def test_the_proxy_comes_from_the_environment_once_per_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """As the SDKs' httpx clients do: HTTP(S)_PROXY is used unless NO_PROXY names the host."""
    from toolsight.models._direct import DirectPath

    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    proxy, _ = DirectPath()._proxy("http://api.example.invalid/v1/chat/completions")
    assert str(proxy) == "http://proxy.invalid:3128"
    monkeypatch.setenv("NO_PROXY", "api.example.invalid")
    assert DirectPath()._proxy("http://api.example.invalid/v1/chat/completions") == (None, None)


def _two_tasks(provider: str, direct: bool, tmp: Path) -> tuple[list[Any], Any]:
    """One model serving two tasks in turn (ids that need percent-encoding): a route learned during
    the first task's request must not carry that task's id into the second task's requests."""
    from toolsight.models.task_context import set_current_task

    img = write_png(tmp / "in.png", seed=1)
    with ScriptedServer(Script(steps=[Step(text="a"), Step(text="b")])) as srv:
        model = _model(provider, srv, direct)

        async def go() -> None:
            try:
                for tid in ("set/1", "set/2 ü", "set/2 ü"):
                    set_current_task(tid)
                    await model.generate([Message.user("q", images=[ImagePart(path=str(img))])], [CROP],
                                         GenerateConfig(timeout=20))
            finally:
                await model.aclose()

        asyncio.run(go())
    return srv.requests, model


@pytest.mark.parametrize("provider", PROVIDERS)
def test_direct_path_names_each_request_s_own_task(provider: str, tmp_path: Path) -> None:
    sdk_reqs, _ = _two_tasks(provider, False, tmp_path)
    reqs, model = _two_tasks(provider, True, tmp_path)
    assert model._direct.sent == (3 if provider == "google" else 2)
    sent = [{k.lower(): v for k, v in r.headers.items()}.get("x-toolsight-task") for r in reqs]
    assert sent == ["set%2F1", "set%2F2%20%C3%BC", "set%2F2%20%C3%BC"]
    for ours, theirs in zip(reqs, sdk_reqs, strict=True):
        assert _headers(provider, ours.headers) == _headers(provider, theirs.headers)
        assert ours.body == theirs.body
    for route in model._direct.routes.values():  # nor is a task id kept in a route (or across runs)
        assert all(k.lower() != "x-toolsight-task" for k, _ in route.headers)
