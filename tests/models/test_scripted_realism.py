"""The scripted server as a realistic stand-in (issue 17 items 9 and 10).

- Every model request says which task it belongs to (`X-Toolsight-Task`, through each SDK's
  per-request headers), so the docs' recipe — `toolsight run` against the scripted server — plays
  one script position per task on generated data, which has no `[task:ID]` marker.
- Usage is counted the way providers count it: an image by its pixels (OpenAI tiles, Anthropic
  w·h/750, Gemini 258 per tile), text by a tokenizer approximation — not request bytes / 4.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from toolsight.models import get_model
from toolsight.models.base import GenerateConfig, ImagePart, Message
from toolsight.models.scripted import Script, ScriptedServer
from toolsight.models.scripted.tokens import (
    anthropic_image_tokens,
    gemini_image_tokens,
    openai_image_tokens,
    request_tokens,
    text_tokens,
)
from toolsight.models.task_context import TASK_HEADER, set_current_task, task_headers
from toolsight.tasks.schema import Task, Turn


def test_provider_image_rules_match_their_published_examples() -> None:
    # OpenAI's worked examples: 1024² high = 765, 2048×4096 high = 1105, any size low = 85
    assert openai_image_tokens(1024, 1024) == 765
    assert openai_image_tokens(2048, 4096) == 1105
    assert openai_image_tokens(4096, 8192, detail="low") == 85
    assert openai_image_tokens(480, 360) == 255  # small images are not scaled up: one tile
    assert openai_image_tokens(1024, 1024, model="gpt-4.1-mini") == 1659  # 1024 patches × 1.62
    # Anthropic: w·h/750 (1000×1000 ≈ 1334), long side capped at 1568
    assert anthropic_image_tokens(1000, 1000) == 1334
    assert anthropic_image_tokens(3136, 1568) == anthropic_image_tokens(1568, 784)
    # Gemini: 258 up to 384×384, else 258 per 768×768 tile
    assert gemini_image_tokens(384, 300) == 258
    assert gemini_image_tokens(1000, 800) == 258 * 4
    assert text_tokens("The quick brown fox jumps over the lazy dog.") in range(9, 15)
    assert text_tokens("") == 0


def _png_b64(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 30, 30)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_request_tokens_read_the_image_size_from_each_wire_format() -> None:
    b64 = _png_b64(480, 360)
    openai = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Which colour?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{b64}"}}]}]}
    anthropic = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "Which colour?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}}]}]}
    google = {"contents": [{"role": "user", "parts": [
        {"text": "Which colour?"}, {"inlineData": {"mimeType": "image/png", "data": b64}}]}]}
    text = text_tokens("Which colour?") + 4
    assert request_tokens(openai, "openai") == 255 + text
    assert request_tokens(anthropic, "anthropic") == 231 + text
    assert request_tokens(google, "google") == 258 * 1 + text


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_server_usage_is_realistic_through_each_sdk(provider: str, tmp_path: Path) -> None:
    img = tmp_path / "chart.png"
    Image.new("RGB", (480, 360), (10, 120, 10)).save(img)
    msg = Message.user("What is the tallest bar? Answer with a letter.", images=[ImagePart(path=str(img))])
    expect = {"openai": 255, "anthropic": 231, "google": 258}[provider]

    async def go() -> tuple[int, int]:
        with ScriptedServer(Script.answer("<answer>B</answer>")) as srv:
            base = srv.openai_base_url if provider == "openai" else srv.base_url
            model = get_model(f"{provider}/demo", base_url=base)
            try:
                out = await model.generate([msg], [], GenerateConfig(timeout=20))
            finally:
                await model.aclose()
            return out.usage.input_tokens, out.usage.output_tokens

    inp, outp = asyncio.run(go())
    # the image dominates; text adds a few tokens (bytes/4 gave ~150,000 here)
    assert expect < inp < expect + 40, inp
    assert 1 <= outp <= 10, outp


def test_task_headers_follow_the_current_task_per_asyncio_task() -> None:
    async def one(tid: str) -> dict[str, str]:
        set_current_task(tid)
        await asyncio.sleep(0.01)  # another task sets its own id meanwhile
        return task_headers()

    async def main() -> list[dict[str, str]]:
        return list(await asyncio.gather(one("a"), one("b/ü c")))

    assert asyncio.run(main()) == [{TASK_HEADER: "a"}, {TASK_HEADER: "b%2F%C3%BC%20c"}]
    assert task_headers() == {}  # nothing leaks into the caller's context


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_each_sdk_sends_the_task_header(provider: str) -> None:
    async def go(srv: ScriptedServer) -> None:
        base = srv.openai_base_url if provider == "openai" else srv.base_url
        model = get_model(f"{provider}/demo", base_url=base)
        task = Task(id="vtc bars/7", turns=[Turn(prompt="q")])
        try:
            assert model.for_task(task) is model  # the runner's per-task hook marks the task
            await model.generate([Message.user("no marker here")], [], GenerateConfig(timeout=20))
        finally:
            await model.aclose()

    script = Script.model_validate({"steps": [{"text": "default"}], "tasks": {"vtc bars/7": [{"text": "mine"}]}})
    with ScriptedServer(script) as srv:
        asyncio.run(go(srv))
    (req,) = srv.requests
    assert {k.lower(): v for k, v in req.headers.items()}[TASK_HEADER.lower()] == "vtc%20bars%2F7"
    assert req.task == "vtc bars/7" and req.step["text"] == "mine"


def test_marker_in_the_prompt_wins_over_the_header() -> None:
    import urllib.request

    script = Script.model_validate({"steps": [{"text": "default"}],
                                    "tasks": {"m1": [{"text": "by marker"}], "h1": [{"text": "by header"}]}})
    with ScriptedServer(script) as srv:
        for prompt, want in (("[task:m1] q", "by marker"), ("plain q", "by header")):
            body = json.dumps({"model": "x", "messages": [{"role": "user", "content": prompt}]}).encode()
            req = urllib.request.Request(srv.openai_base_url + "/chat/completions", data=body,
                                         headers={"Content-Type": "application/json", TASK_HEADER: "h1"})
            reply = json.loads(urllib.request.urlopen(req, timeout=10).read())
            assert reply["choices"][0]["message"]["content"] == want


@pytest.mark.parametrize("provider", ["openai", "anthropic", "google"])
def test_docs_recipe_runs_generated_data_one_script_position_per_task(provider: str, tmp_path: Path) -> None:
    """`toolsight generate`, then `toolsight run DATA --model P/demo --base-url URL` against the
    scripted server (docs/models.md): generated prompts carry no [task:ID], so without the header
    concurrent tasks would share one position and skip each other's tool call."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"COLUMNS": "200"}
    data = tmp_path / "gen"
    subprocess.run([sys.executable, "-m", "toolsight", "generate", "vtc-bars", "--n", "4", "--out", str(data)],
                   check=True, capture_output=True, env=env, timeout=300)
    prompts = [json.loads(x)["turns"][0]["prompt"] for x in (data / "tasks.jsonl").read_text().splitlines()]
    assert not any("[task:" in p for p in prompts)
    script = Script.model_validate({"steps": [
        {"text": "Let me crop.", "tool_calls": [{"name": "crop", "arguments": {"image": "$prev",
                                                                              "bbox": [0, 0, 0.5, 0.5]}}]},
        {"text": "<answer>C</answer>"},
    ]})
    run = tmp_path / "run"
    with ScriptedServer(script) as srv:
        base = srv.openai_base_url if provider == "openai" else srv.base_url
        proc = subprocess.run(
            [sys.executable, "-m", "toolsight", "run", str(data), "--model", f"{provider}/demo", "--base-url", base,
             "--setting", "crop", "--out", str(run), "--concurrency", "4", "--no-report"],
            capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4
    for r in records:
        assert r["error"] is None
        assert len(r["trajectory"]["tool_calls"]) == 1, r["task_id"]  # each task played step 1, then step 2
        assert r["trajectory"]["turns"][0]["answer"] == "C"
        assert r["trajectory"]["usage"]["input_tokens"] < 20_000  # two requests with one small image each
    by_task: dict[str, int] = {}
    for req in srv.requests:
        assert req.task is not None
        by_task[req.task] = by_task.get(req.task, 0) + 1
    assert by_task == {r["task_id"]: 2 for r in records}
