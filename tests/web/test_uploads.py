"""Upload backends (`web/uploads.py`): the S3 signature against AWS's published example, an upload to an
S3-compatible server on 127.0.0.1, the `TOOLSIGHT_UPLOAD` spec, and crop → reverse image search in live
mode with an uploader: the API gets the crop's public URL (issue 25: the reference uploads its crops)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from webkit import FakeWeb, call, opened, picture, png, toolbox

from toolsight.web import WebSession
from toolsight.web.live import LiveBackend
from toolsight.web.types import WebCallError, WebError
from toolsight.web.uploads import S3Uploader, sigv4_headers, uploader_from_env

KEY, SECRET = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def test_sigv4_matches_the_published_s3_put_example() -> None:
    # AWS S3 API reference, "Signature Calculations for the Authorization Header", example PUT Object
    h = sigv4_headers("PUT", "https://examplebucket.s3.amazonaws.com/test%24file.text",
                      {"date": "Fri, 24 May 2013 00:00:00 GMT", "x-amz-storage-class": "REDUCED_REDUNDANCY"},
                      b"Welcome to Amazon S3.", KEY, SECRET, "us-east-1", dt.datetime(2013, 5, 24, tzinfo=dt.UTC))
    assert h["x-amz-content-sha256"] == "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
    assert h["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
        "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
        "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd")


class S3StandIn:
    """An S3-compatible server on 127.0.0.1 (path-style, as MinIO): stores PUT objects, serves GETs,
    answers `status` to every PUT when set."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.objects: dict[str, bytes] = {}
        self.puts: list[dict[str, str]] = []
        self.base = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()

    async def _put(self, req: web.Request) -> web.Response:
        self.puts.append(dict(req.headers))
        if self.status != 200:
            return web.Response(status=self.status, text="<Error><Code>AccessDenied</Code></Error>")
        self.objects[req.path] = await req.read()
        return web.Response(status=200)

    async def _get(self, req: web.Request) -> web.Response:
        data = self.objects.get(req.path)
        return web.Response(body=data, content_type="image/jpeg") if data is not None else web.Response(status=404)

    def __enter__(self) -> S3StandIn:
        app = web.Application()
        app.router.add_put("/{tail:.*}", self._put)
        app.router.add_get("/{tail:.*}", self._get)

        async def start() -> None:
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.base = f"http://127.0.0.1:{port}"
            self._ready.set()

        threading.Thread(target=self._loop.run_forever, daemon=True).start()
        asyncio.run_coroutine_threadsafe(start(), self._loop)
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)


@pytest.fixture
def s3() -> Iterator[S3StandIn]:
    with S3StandIn() as srv:
        yield srv


def _env(base: str, **extra: str) -> dict[str, str]:
    return {"TOOLSIGHT_UPLOAD": "s3://crops-bucket/run7", "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": "eu-west-1", "AWS_ENDPOINT_URL": base, **extra}


def test_s3_upload_puts_the_signed_bytes_and_returns_a_url_that_serves_them(s3: S3StandIn) -> None:
    up = uploader_from_env(_env(s3.base))
    assert isinstance(up, S3Uploader)
    data = png(picture(1))
    url = asyncio.run(up.upload(data, ".jpg"))
    name = hashlib.sha256(data).hexdigest()[:32]
    assert url == f"{s3.base}/crops-bucket/run7/crops/{name}.jpg"
    (hdr,) = s3.puts
    assert hdr["Authorization"].startswith(f"AWS4-HMAC-SHA256 Credential={KEY}/")
    assert "/eu-west-1/s3/aws4_request" in hdr["Authorization"]
    assert hdr["x-amz-content-sha256"] == hashlib.sha256(data).hexdigest()
    assert s3.objects[f"/crops-bucket/run7/crops/{name}.jpg"] == data
    assert asyncio.run(up.upload(data, ".jpg")) == url  # same bytes, same URL: a recording replays

    public = uploader_from_env(_env(s3.base, TOOLSIGHT_UPLOAD_URL="https://cdn.example.test/"))
    assert asyncio.run(public.upload(data, ".jpg")) == f"https://cdn.example.test/run7/crops/{name}.jpg"  # type: ignore[union-attr]


def test_a_refused_upload_is_a_web_call_error_naming_the_bucket() -> None:
    with S3StandIn(status=403) as srv, pytest.raises(WebCallError, match=r"s3://crops-bucket: HTTP 403"):
        asyncio.run(uploader_from_env(_env(srv.base)).upload(b"x", ".jpg"))  # type: ignore[union-attr]


@pytest.mark.parametrize(("env", "says"), [
    ({"TOOLSIGHT_UPLOAD": "ftp://x"}, "use hf:OWNER/REPO"),
    ({"TOOLSIGHT_UPLOAD": "hf:just-a-name"}, "hf:OWNER/REPO"),
    ({"TOOLSIGHT_UPLOAD": "s3://b"}, "needs AWS_ACCESS_KEY_ID"),
])
def test_a_bad_upload_spec_names_the_fix(env: dict[str, str], says: str) -> None:
    with pytest.raises(WebError, match=says):
        uploader_from_env(env)
    assert uploader_from_env({}) is None


def test_live_crop_is_uploaded_and_its_public_url_reverse_searched(s3: S3StandIn, tmp_path: Path) -> None:
    dataset_url = "https://raw.example.org/repo/images/1.png"

    async def go(fw: FakeWeb) -> tuple[Any, Any]:
        backend = LiveBackend(env=fw.env(), allowed_origins=(fw.base,))
        # the bucket's public address (a CDN in front of it): the search API is only ever given public URLs
        up = uploader_from_env(_env(s3.base, TOOLSIGHT_UPLOAD_URL="https://crops.example.org"))
        async with opened(WebSession("live", backend, uploader=up)) as s:
            s.alias(dataset_url, png(picture(3)))
            box = toolbox(tmp_path)
            crop = await call(box, "image_crop", image_url=dataset_url, bbox=[0.1, 0.1, 0.6, 0.6])
            url = crop.text.removeprefix("The url of cropped image: ")
            return url, await call(box, "reverse_image_search", image_url=url)

    with FakeWeb(lens=[{"title": "Hit", "link": "https://p.example/h", "imageUrl": "https://i.example/h.jpg"}]) as fw:
        url, found = asyncio.run(go(fw))
        lens = [q.body for q in fw.seen if q.path == "/lens"]
    assert url.startswith("https://crops.example.org/run7/crops/") and len(s3.objects) == 1
    assert lens == [{"url": url}]  # the API searched the uploaded crop, as the reference's pipeline does
    assert found.ok and found.text.startswith("```\nImage: https://i.example/h.jpg")
