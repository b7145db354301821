"""The remote detectors against detection servers started here on 127.0.0.1: the DINO-X v2 task
protocol (trigger, poll while waiting, success / failure) and a Grounding-DINO inference route; and
the backend chosen by environment key."""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from aiohttp import web

from toolsight.perception import ImageInput, PerceptionError, build_detector, configured_backend
from toolsight.perception.remote import DinoXDetector, GroundingDinoDetector


class DetectionServer:
    """A scripted DINO-X / Grounding-DINO server: records requests; `fail` makes the task fail."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.polls = 0
        self.fail = False
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()

    async def _trigger(self, request: web.Request) -> web.Response:
        self.requests.append((request.path, dict(request.headers), await request.json()))
        if request.headers.get("Token") != "tok":
            return web.json_response({"code": 401, "msg": "bad token"})
        return web.json_response({"code": 0, "msg": "ok", "data": {"task_uuid": "u-1"}})

    async def _status(self, request: web.Request) -> web.Response:
        self.polls += 1
        if self.polls < 3:
            return web.json_response({"code": 0, "data": {"status": "running"}})
        if self.fail:
            return web.json_response({"code": 0, "data": {"status": "failed", "error": "quota exceeded"}})
        objs = [{"bbox": [10, 20, 50, 60], "score": 0.9, "category": "wrench"},
                {"bbox": [60, 10, 90, 40], "score": 0.4, "category": "hammer"}]
        return web.json_response({"code": 0, "data": {"status": "success", "result": {"objects": objs}}})

    async def _gdino(self, request: web.Request) -> web.Response:
        self.requests.append((request.path, dict(request.headers), await request.json()))
        return web.json_response({"predictions": [
            {"x": 30, "y": 40, "width": 20, "height": 10, "class": "knife", "confidence": 0.8}]})

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v2/task/dinox/detection", self._trigger)
        app.router.add_get("/v2/task_status/{uuid}", self._status)
        app.router.add_post("/grounding_dino/infer", self._gdino)
        runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(runner.setup())
        site = web.TCPSite(runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._runner = runner
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> DetectionServer:
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def server() -> Iterator[DetectionServer]:
    with DetectionServer() as srv:
        yield srv


def _img() -> ImageInput:
    img = np.zeros((100, 120, 3), np.uint8)
    img[20:60, 10:50] = (0, 0, 255)
    return ImageInput(img)


def test_dinox_protocol(server: DetectionServer) -> None:
    det = DinoXDetector("tok", server.url, poll_interval=0.01)
    res = asyncio.run(det.detect(_img(), ["wrench", " hammer "]))
    assert [(d.label, d.score, d.box) for d in res.detections] == [
        ("wrench", 0.9, (10.0, 20.0, 50.0, 60.0)), ("hammer", 0.4, (60.0, 10.0, 90.0, 40.0))]
    assert res.backend == "dinox" and res.semantic and server.polls == 3
    path, headers, body = server.requests[0]
    assert path == "/v2/task/dinox/detection" and headers["Token"] == "tok"
    assert body["prompt"] == {"type": "text", "text": "wrench.hammer"} and body["targets"] == ["bbox"]
    png = base64.b64decode(body["image"].removeprefix("data:image/png;base64,"))
    sent = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert sent is not None
    assert np.array_equal(sent, _img().pixels)  # the pixels travel losslessly


def test_dinox_prompt_free_and_failures(server: DetectionServer) -> None:
    assert DinoXDetector("tok", server.url).body(_img(), [])["prompt"]["text"] == "<prompt_free>"
    server.fail = True
    with pytest.raises(PerceptionError, match="quota exceeded"):
        asyncio.run(DinoXDetector("tok", server.url, poll_interval=0.01).detect(_img(), ["x"]))
    with pytest.raises(PerceptionError, match="bad token"):
        asyncio.run(DinoXDetector("wrong", server.url).detect(_img(), ["x"]))
    with pytest.raises(PerceptionError, match="DDS_CLOUDAPI_TOKEN"):
        DinoXDetector("", server.url)


def test_grounding_dino_centre_boxes(server: DetectionServer) -> None:
    res = asyncio.run(GroundingDinoDetector(server.url, "key").detect(_img(), ["knife"]))
    assert [(d.label, d.box) for d in res.detections] == [("knife", (20.0, 35.0, 40.0, 45.0))]
    _, _, body = server.requests[0]
    assert body["text"] == ["knife"] and body["api_key"] == "key" and body["image"]["type"] == "base64"


def test_unreachable_server_is_a_clear_error() -> None:
    det = GroundingDinoDetector("http://127.0.0.1:9", timeout=2)
    with pytest.raises(PerceptionError, match="Grounding-DINO"):
        asyncio.run(det.detect(_img(), ["x"]))


def test_backend_chosen_by_environment_key(server: DetectionServer) -> None:
    assert configured_backend({}) == "classical"
    assert configured_backend({"DDS_CLOUDAPI_TOKEN": "t"}) == "dinox"
    assert configured_backend({"TOOLSIGHT_GDINO_URL": "http://x"}) == "grounding-dino"
    assert configured_backend({"TOOLSIGHT_DETECT_ONNX": "m.onnx", "DDS_CLOUDAPI_TOKEN": "t"}) == "onnx"
    assert configured_backend({"TOOLSIGHT_DETECTOR": "classical", "DDS_CLOUDAPI_TOKEN": "t"}) == "classical"
    with pytest.raises(PerceptionError, match="TOOLSIGHT_DETECTOR"):
        configured_backend({"TOOLSIGHT_DETECTOR": "yolo9000"})
    det = build_detector("dinox", {"DDS_CLOUDAPI_TOKEN": "tok", "TOOLSIGHT_DINOX_URL": server.url})
    assert isinstance(det, DinoXDetector) and det.base_url == server.url
