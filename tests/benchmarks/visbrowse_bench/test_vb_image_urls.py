"""VisBrowse-Bench's official loop sends images by URL, as `infer.py` does (issue 25), end to end against
the scripted server: off the live web (here the generated mini-web's offline corpus) a task's image goes by
the run's image host (`http://HOST:PORT/h/<name>`), which a co-located model server can fetch, or by the
base URL `TOOLSIGHT_IMAGE_HOST_URL` names; `-B inline_images=true` inlines it as a data URL instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer


def _first_image_url(miniweb: Path, tmp: Path, name: str, *extra: str, env: dict[str, str] | None = None) -> str:
    e = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    e.update({"TOOLSIGHT_CACHE": str(tmp / "cache"), **(env or {})})
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>1902</answer>"}]})) as srv:
        p = subprocess.run([sys.executable, "-m", "toolsight", "run", "visbrowse-bench", "--data", str(miniweb),
                            "--model", "openai/vb", "--base-url", srv.openai_base_url, "--limit", "1", "--no-score",
                            "--out", str(tmp / name), "--no-report", *extra], env=e, capture_output=True, text=True,
                           timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        body: dict[str, Any] = srv.requests[0].body
    user = next(m for m in body["messages"] if m["role"] == "user")
    (image,) = [part["image_url"] for part in user["content"] if part["type"] == "image_url"]
    assert "detail" not in image  # the driver sends none
    return str(image["url"])


def test_images_go_by_the_image_host_or_inlined(miniweb: Path, tmp_path: Path) -> None:
    url = _first_image_url(miniweb, tmp_path, "host")
    assert url.startswith("http://127.0.0.1:") and "/h/" in url, url  # not the mini-web's made-up dataset URL

    url = _first_image_url(miniweb, tmp_path, "public", env={"TOOLSIGHT_IMAGE_HOST_URL": "http://gpu-box.example:8765"})
    assert url.startswith("http://gpu-box.example:8765/h/"), url

    url = _first_image_url(miniweb, tmp_path, "inline", "-B", "inline_images=true")
    assert url.startswith("data:image/png;base64,"), url[:60]
