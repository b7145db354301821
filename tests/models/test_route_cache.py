"""Routes kept across runs (models/_routes.py): a later process sends its first request without
importing the SDK, and sends exactly what the SDK sent; the key never reaches the disk."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from wirekit import PROVIDERS

from toolsight.models.scripted import Script, ScriptedServer, Step

SDK_MODULE = {"openai": "openai", "anthropic": "anthropic", "google": "google.genai"}
KEY = "sk-test-9f8e7d6c5b4a"

# one process = one run: a call, then which SDK modules it had to import
RUN = """
import asyncio, json, sys
from toolsight.models.registry import get_model
from toolsight.models.base import GenerateConfig, Message, ModelError
provider, url, key = sys.argv[1:4]
async def go():
    m = get_model(provider + "/test-model", base_url=url, api_key=key)
    try:
        out = await m.generate([Message.system("Be brief."), Message.user("hi")], [], GenerateConfig(timeout=30))
    except ModelError as exc:
        return {"error": exc.status}
    finally:
        await m.aclose()
    return {"text": out.text}
print(json.dumps({**asyncio.run(go()), "sdk": sys.argv[4] in sys.modules}))
"""


def _run(provider: str, url: str, cache: Path, **env: str) -> dict[str, object]:
    full = {**os.environ, "TOOLSIGHT_CACHE": str(cache), "TOOLSIGHT_ROUTE_CACHE": "1", **env}
    r = subprocess.run([sys.executable, "-c", RUN, provider, url, KEY, SDK_MODULE[provider]],
                       capture_output=True, text=True, env=full, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    out: dict[str, object] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


def _headers(h: dict[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in h.items() if k.lower() not in ("host", "content-length")}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_later_run_sends_the_same_request_without_the_sdk(provider: str, tmp_path: Path) -> None:
    with ScriptedServer(Script.answer("ok")) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        first = _run(provider, url, tmp_path)
        second = _run(provider, url, tmp_path)
    assert first == {"text": "ok", "sdk": True}  # learned from the SDK
    assert second == {"text": "ok", "sdk": False}  # the SDK was never imported
    a, b = srv.requests
    assert (a.path, a.body, _headers(a.headers)) == (b.path, b.body, _headers(b.headers))
    store = tmp_path / "routes.json"
    text = store.read_text()
    assert KEY not in text and url in text
    assert stat.S_IMODE(store.stat().st_mode) == 0o600


def test_no_route_is_kept_when_the_environment_can_shape_the_headers(tmp_path: Path) -> None:
    with ScriptedServer(Script.answer("ok")) as srv:
        # the SDK reads OPENAI_ORG_ID into a header: such a run learns its route every time
        first = _run("openai", srv.openai_base_url, tmp_path, OPENAI_ORG_ID="org-1")
        second = _run("openai", srv.openai_base_url, tmp_path, OPENAI_ORG_ID="org-1")
        assert first["sdk"] and second["sdk"]
        assert all(_headers(r.headers).get("openai-organization") == "org-1" for r in srv.requests)
        assert not (tmp_path / "routes.json").exists()
        off = _run("openai", srv.openai_base_url, tmp_path, TOOLSIGHT_ROUTE_CACHE="0")
        assert off["sdk"] and not (tmp_path / "routes.json").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_failed_first_call_is_not_kept_as_a_route(provider: str, tmp_path: Path) -> None:
    """Issue 24 item 7: a route is kept only once a request on it succeeded. A first run whose only
    call fails (HTTP 500) keeps nothing, so the next run learns its route from the SDK again; only a
    run whose call succeeded lets the one after it go without the SDK. (Google's route comes from
    the SDK's request builder, before any request: it was kept even when the request failed.)"""
    with ScriptedServer(Script(steps=[Step(fault="status", status=500), Step(text="ok")])) as srv:
        url = srv.openai_base_url if provider == "openai" else srv.base_url
        failed = _run(provider, url, tmp_path)
        assert failed == {"error": 500, "sdk": True}
        assert not (tmp_path / "routes.json").exists(), "the route of a failed call was kept"
        learned = _run(provider, url, tmp_path)
        reused = _run(provider, url, tmp_path)
    assert learned == {"text": "ok", "sdk": True}  # nothing was kept: the SDK made the route again
    assert reused == {"text": "ok", "sdk": False}
    assert KEY not in (tmp_path / "routes.json").read_text()
    assert len(srv.requests) == 3
