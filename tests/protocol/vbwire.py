"""The VisBrowse-Bench golden-wire replay (`../shared/golden-wire/visbrowse-bench/`, README there).

A transcript's fixture is the repository layout (`data/VisBrowse-Bench.jsonl` with the recorded rows,
`VisBrowse_Bench_images/` with the real PNGs of the shared sample, checked against the recording's
hashes). Its web is the README's stand-in, here on 127.0.0.1 (`WebStandIn`): Serper's `/search`,
`/images`, `/lens` and Jina's `/r/<url>` answering from the transcript's `web.table`, the search-hit
images drawn by the recording's recipe (`/img/<name>`, matched to `web.hit_images` by hash), and the
Hugging Face Hub API the crop upload talks to (`/api/datasets/…/preupload|commit`, files served at
`/datasets/…/resolve/main/…`). toolsight runs its official loop with the live web backend pointed at
the stand-in (`SERPER_BASE_URL`, `JINA_BASE_URL`, `HF_ENDPOINT`; `TOOLSIGHT_UPLOAD=hf:…` as the
recording's `HF_REPO_ID`), the summary model on the same scripted server, and `$crop` resolved from
each request (the newest "The url of cropped image: …", as `scripts/record_vb.py` does).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from PIL import Image, ImageDraw

import toolsight.web.live as live
from goldenwirekit import Normaliser, image_descriptor, load
from sharedfiles import shared_file
from toolsight.benchmarks.registry import get_benchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

FOLDER = "visbrowse-bench"
MODEL_ENV = {"SERPER_API_KEY": "serper-test-key", "JINA_API_KEY": "jina-test-key", "HF_TOKEN": "hf-test-token"}
HF_REPO = "gw-test/visbrowse-crops"  # the recording's HF_REPO_ID (README)
CROP = re.compile(r"The url of cropped image: ([^\s\"\\]+)")
HEX32 = re.compile(r"(?<=crops/)[0-9a-f]{32}(?=\.jpg)")
SHA16 = re.compile(r"(?<=img\.toolsight\.test/)[0-9a-f]{16}(?=\.)")


def pic(w: int, h: int, seed: int, fmt: str) -> bytes:
    """The recording's search-hit picture (`scripts/record_vb.py::pic`)."""
    im = Image.new("RGB", (w, h), (30 + 40 * seed % 200, 90, 160))
    d = ImageDraw.Draw(im)
    d.ellipse([w // 4, h // 4, w // 2, h // 2], fill=(230, 200, 40))
    d.rectangle([w // 2, h // 2, w - 10, h - 10], fill=(200, 30 + 30 * seed % 200, 30))
    buf = io.BytesIO()
    im.save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buf.getvalue()


def hit_images(described: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """Each hit image of the transcript drawn again: the recipe's seed is the one whose bytes hash as recorded."""
    out: dict[str, bytes] = {}
    for name, info in described.items():
        fmt = "JPEG" if info["format"] == "jpeg" else info["format"].upper()
        for seed in range(64):
            data = pic(info["width"], info["height"], seed, fmt)
            if hashlib.sha256(data).hexdigest() == info["sha256"]:
                out[name] = data
                break
        else:
            raise AssertionError(f"hit image {name}: no seed of the recipe gives the recorded bytes")
    return out


class WebStandIn:
    """The loopback web of the README (see the module docstring); `seen` logs what toolsight asked."""

    def __init__(self, table: dict[str, Any], images: dict[str, bytes]) -> None:
        self.table = table
        self.images = images
        self.hf: dict[str, bytes] = {}
        self.seen: list[dict[str, Any]] = []
        self.port = 0
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _serper(self, req: web.Request) -> web.Response:
        body = await req.json()
        kind = req.path.strip("/")
        self.seen.append({"method": "POST", "path": req.path, "body": body, "api_key": req.headers.get("X-API-KEY")})
        t = self.table.get(kind, {})
        hits = t.get(body.get("q") if kind in ("search", "images") else body.get("url"), t.get("*", []))
        return web.json_response({{"search": "organic", "images": "images", "lens": "organic"}[kind]: hits})

    async def _jina(self, req: web.Request) -> web.Response:
        target = req.path_qs.removeprefix("/r/")
        self.seen.append({"method": "GET", "path": "/r/" + target, "auth": req.headers.get("Authorization"),
                          "x_with_generated_alt": req.headers.get("X-With-Generated-Alt")})
        page = self.table.get("pages", {}).get(target)
        return web.Response(text=page) if page is not None else web.Response(status=404, text="not found")

    async def _img(self, req: web.Request) -> web.Response:
        self.seen.append({"method": "GET", "path": req.path})
        data = self.images.get(req.match_info["name"])
        if data is None:
            return web.Response(status=404, text="no such image")
        return web.Response(body=data, content_type="image/png" if data[:4] == b"\x89PNG" else "image/jpeg")

    async def _preupload(self, req: web.Request) -> web.Response:
        files = (await req.json()).get("files", [])
        return web.json_response({"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                            for f in files]})

    async def _commit(self, req: web.Request) -> web.Response:
        repo = f"{req.match_info['owner']}/{req.match_info['repo']}"
        for line in (await req.read()).splitlines():
            item = json.loads(line)
            if item.get("key") == "file":
                data = base64.b64decode(item["value"]["content"])
                self.hf[f"{repo}/{item['value']['path']}"] = data
                with Image.open(io.BytesIO(data)) as im:
                    self.seen.append({"method": "UPLOAD", "path": f"/datasets/{repo}/{item['value']['path']}",
                                      "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                      "format": str(im.format).lower(), "width": im.size[0], "height": im.size[1]})
        return web.json_response({"commitUrl": f"{self.base}/datasets/{repo}/commit/0", "commitOid": "0" * 40})

    async def _resolve(self, req: web.Request) -> web.Response:
        data = self.hf.get(f"{req.match_info['owner']}/{req.match_info['repo']}/{req.match_info['path']}")
        return web.Response(body=data, content_type="image/jpeg") if data else web.Response(status=404)

    def _serve(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        app = web.Application(client_max_size=64 << 20)
        for p in ("/search", "/images", "/lens"):
            app.router.add_post(p, self._serper)
        app.router.add_get("/r/{tail:.*}", self._jina)
        app.router.add_get("/img/{name}", self._img)
        app.router.add_post("/api/datasets/{owner}/{repo}/preupload/{rev}", self._preupload)
        app.router.add_post("/api/datasets/{owner}/{repo}/commit/{rev}", self._commit)
        app.router.add_get("/datasets/{owner}/{repo}/resolve/main/{path:.+}", self._resolve)
        runner = web.AppRunner(app, access_log=None)

        async def start() -> None:
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            self.port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

        loop.run_until_complete(start())
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    def __enter__(self) -> WebStandIn:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def _with_base(o: Any, base: str) -> Any:
    if isinstance(o, str):
        return o.replace("<WEB>", base)
    if isinstance(o, list):
        return [_with_base(x, base) for x in o]
    if isinstance(o, dict):
        return {k: _with_base(v, base) for k, v in o.items()}
    return o


def build_fixture(g: dict[str, Any], root: Path) -> Path:
    """The repository layout: the recorded rows as the JSONL, the sample's real images beside it."""
    images = root / "VisBrowse_Bench_images"
    images.mkdir(parents=True)
    for name, info in g["fixture"]["images"].items():
        data = shared_file(f"data/visbrowse-bench/VisBrowse_Bench_images/{name}").read_bytes()
        assert hashlib.sha256(data).hexdigest() == info["sha256"], f"{name} is not the recorded image"
        (images / name).write_bytes(data)
    jsonl = root / "data" / "VisBrowse-Bench.jsonl"
    jsonl.parent.mkdir(parents=True)
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in g["fixture"]["rows"]), encoding="utf-8")
    return jsonl


def crop_token(body: dict[str, Any]) -> dict[str, str]:
    """`$crop` = the newest "The url of cropped image: <url>" in the request (`scripts/record_vb.py`)."""
    found = CROP.findall(json.dumps(body))
    return {"$crop": found[-1]} if found else {}


def replay(path: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run the transcript's tasks through toolsight's official loop against the stand-ins."""
    g = load(path)
    root, run = tmp / "fx", tmp / "run"
    jsonl = build_fixture(g, root)
    with WebStandIn({}, hit_images(g["web"].get("hit_images") or {})) as stand_in, \
            ScriptedServer(Script.model_validate(g["script"]), tokens=crop_token) as srv:
        stand_in.table = _with_base(g["web"]["table"], stand_in.base)
        for k, v in {**MODEL_ENV, "SERPER_BASE_URL": stand_in.base, "JINA_BASE_URL": stand_in.base + "/r",
                     "HF_ENDPOINT": stand_in.base, "TOOLSIGHT_UPLOAD": f"hf:{HF_REPO}",
                     "TOOLSIGHT_CACHE": str(tmp / "cache"), "NO_PROXY": "127.0.0.1"}.items():
            monkeypatch.setenv(k, v)
        # the stand-in is loopback, which the live URL policy refuses to fetch: trust it by origin, as a
        # test server set in code (search-hit images are on it)
        trusted = live.LiveBackend.__init__

        def init(self: live.LiveBackend, *a: Any, **k: Any) -> None:
            trusted(self, *a, **{**k, "allowed_origins": (*k.get("allowed_origins", ()), stand_in.base)})

        monkeypatch.setattr(live.LiveBackend, "__init__", init)
        opts = RunOptions.of(benchmark="visbrowse-bench", model=f"openai/{g['model']}", setting="+IS",
                             loop="official", data=str(jsonl), base_url=srv.openai_base_url, out=str(run),
                             concurrency=1, score=False, cache=False, retries=0, web="live",
                             summary_model=f"openai/{g['summary_model']}")
        bench = get_benchmark("visbrowse-bench")
        runner = Runner(opts, bench, load_for_run(bench, str(jsonl)),
                        get_model(opts.model.spec, base_url=opts.model.base_url),
                        summarizer=get_model(f"openai/{g['summary_model']}", base_url=srv.openai_base_url))
        asyncio.run(runner.run())
        recorded = [r for r in srv.requests if r.path.endswith("/chat/completions")]
        seen = list(stand_in.seen)
    norm = Normaliser([(stand_in.base, "<WEB>"), (str(root.resolve()), "<FIXTURE>")], {"hex32": HEX32, "sha16": SHA16})
    bodies = [norm(r.body) for r in recorded]
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines() if x.strip()]
    return {"golden": g, "bodies": bodies, "tasks": [r.task for r in recorded], "records": records,
            "web": norm(seen)}


def api_calls(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The web requests that carry the tools' own arguments: searches, page reads (not image downloads)."""
    return [r for r in requests if r["method"] == "POST" or r["path"].startswith("/r/")]


def uploads(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The uploaded crops, as image descriptors (the driver PUTs to its stand-in, toolsight commits)."""
    return [{k: r[k] for k in ("bytes", "sha256", "format", "width", "height")} for r in requests
            if r["method"] in ("PUT", "UPLOAD")]


__all__ = ["FOLDER", "api_calls", "image_descriptor", "replay", "uploads"]
