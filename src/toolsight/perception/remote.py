"""Remote open-vocabulary detectors over HTTP: DINO-X (the detector the PhysToolBench authors used) and
a Grounding-DINO inference server.

`dinox` follows the DINO-X cloud API v2: `POST {base}/v2/task/dinox/detection` with the `Token` header
and `{model, image (data URI), prompt: {type: text, text: "a.b.c"}, targets: [bbox], bbox_threshold,
iou_threshold}` returns `{code: 0, data: {task_uuid}}`; `GET {base}/v2/task_status/{uuid}` is polled
until `data.status` is `success` (`data.result.objects: [{bbox, score, category}]`) or `failed`.
No terms sends the prompt-free mode (`<prompt_free>`).
`grounding-dino` follows the Roboflow Inference server route: `POST {base}/grounding_dino/infer` with
`{api_key, image: {type: base64, value}, text: [terms], box_threshold}` returns `{predictions: [{x, y,
width, height, class, confidence}]}` (centre boxes).

Both are async (httpx), with a request timeout and a poll limit; every failure becomes one
`PerceptionError` naming the endpoint, which the tool turns into a message the model can read.
"""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any

import cv2
import httpx

from toolsight.perception.types import Detection, DetectionResult, ImageInput, PerceptionError

DINOX_URL = "https://api.deepdataspace.com"
DINOX_MODEL = "DINO-X-1.0"


def _png_b64(image: ImageInput) -> str:
    ok, buf = cv2.imencode(".png", image.pixels)
    if not ok:
        raise PerceptionError("could not encode the image as PNG for the detection API")
    return base64.b64encode(buf.tobytes()).decode("ascii")


def _box(raw: Any, where: str) -> tuple[float, float, float, float]:
    if not isinstance(raw, list | tuple) or len(raw) != 4 or not all(isinstance(v, int | float) for v in raw):
        raise PerceptionError(f"{where}: bbox must be [x1, y1, x2, y2] numbers, got {raw!r}")
    return (float(raw[0]), float(raw[1]), float(raw[2]), float(raw[3]))


class DinoXDetector:
    """The DINO-X cloud API (or any server speaking its v2 task protocol)."""

    name = "dinox"
    semantic = True

    def __init__(self, token: str, base_url: str = DINOX_URL, *, model: str = DINOX_MODEL,
                 bbox_threshold: float = 0.25, iou_threshold: float = 0.8, timeout: float = 60.0,
                 poll_interval: float = 0.5) -> None:
        if not token:
            raise PerceptionError("DINO-X needs an API token: set DDS_CLOUDAPI_TOKEN")
        self.token = token
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.bbox_threshold = bbox_threshold
        self.iou_threshold = iou_threshold
        self.timeout = timeout
        self.poll_interval = poll_interval

    def body(self, image: ImageInput, terms: list[str]) -> dict[str, Any]:
        text = ".".join(t.strip() for t in terms if t.strip()) or "<prompt_free>"
        return {"model": self.model, "image": f"data:image/png;base64,{_png_b64(image)}",
                "prompt": {"type": "text", "text": text}, "targets": ["bbox"],
                "bbox_threshold": self.bbox_threshold, "iou_threshold": self.iou_threshold}

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        url = f"{self.base_url}/v2/task/dinox/detection"
        headers = {"Token": self.token}
        deadline = time.monotonic() + self.timeout
        try:
            async with httpx.AsyncClient(timeout=min(30.0, self.timeout)) as client:
                r = await client.post(url, json=self.body(image, terms), headers=headers)
                data = self._json(r, url)
                uuid = (data.get("data") or {}).get("task_uuid")
                if not isinstance(uuid, str) or not uuid:
                    raise PerceptionError(f"DINO-X {url}: no task_uuid in the reply")
                status_url = f"{self.base_url}/v2/task_status/{uuid}"
                while True:
                    r = await client.get(status_url, headers=headers)
                    task = self._json(r, status_url).get("data") or {}
                    status = task.get("status")
                    if status == "success":
                        return self._result(task.get("result") or {}, image, terms)
                    if status == "failed":
                        raise PerceptionError(f"DINO-X task {uuid} failed: {task.get('error')}")
                    if time.monotonic() > deadline:
                        raise PerceptionError(f"DINO-X task {uuid} still {status!r} after {self.timeout:.0f} s")
                    await asyncio.sleep(self.poll_interval)
        except httpx.HTTPError as exc:
            raise PerceptionError(f"DINO-X {self.base_url}: {type(exc).__name__}: {exc}") from None

    @staticmethod
    def _json(r: httpx.Response, url: str) -> dict[str, Any]:
        if r.status_code != 200:
            raise PerceptionError(f"DINO-X {url}: HTTP {r.status_code}: {r.text[:200]}")
        try:
            data = r.json()
        except ValueError:
            raise PerceptionError(f"DINO-X {url}: reply is not JSON") from None
        if not isinstance(data, dict) or data.get("code", 0) != 0:
            msg = data.get("msg") if isinstance(data, dict) else data
            raise PerceptionError(f"DINO-X {url}: error {msg!r}")
        return data

    def _result(self, result: dict[str, Any], image: ImageInput, terms: list[str]) -> DetectionResult:
        dets: list[Detection] = []
        for i, o in enumerate(result.get("objects") or []):
            where = f"DINO-X object {i}"
            if not isinstance(o, dict):
                raise PerceptionError(f"{where}: not an object")
            score = float(o.get("score", 1.0))
            dets.append(Detection(label=str(o.get("category") or "object"), score=min(1.0, max(0.0, score)),
                                  box=_box(o.get("bbox"), where)))
        dets.sort(key=lambda d: -d.score)
        return DetectionResult(detections=dets, backend=self.name, semantic=True, terms=list(terms),
                               width=image.width, height=image.height)

    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "semantic": True, "url": self.base_url, "model": self.model,
                "bbox_threshold": self.bbox_threshold, "iou_threshold": self.iou_threshold}


class GroundingDinoDetector:
    """A Grounding-DINO inference server (Roboflow Inference's `/grounding_dino/infer` route)."""

    name = "grounding-dino"
    semantic = True

    def __init__(self, base_url: str, api_key: str = "", *, box_threshold: float = 0.3, timeout: float = 60.0) -> None:
        if not base_url:
            raise PerceptionError("the Grounding-DINO backend needs a server URL: set TOOLSIGHT_GDINO_URL")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.box_threshold = box_threshold
        self.timeout = timeout

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult:
        url = f"{self.base_url}/grounding_dino/infer"
        body = {"api_key": self.api_key, "image": {"type": "base64", "value": _png_b64(image)},
                "text": [t for t in terms if t.strip()] or ["object"], "box_threshold": self.box_threshold}
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                r = await client.post(url, json=body)
        except httpx.HTTPError as exc:
            raise PerceptionError(f"Grounding-DINO {url}: {type(exc).__name__}: {exc}") from None
        if r.status_code != 200:
            raise PerceptionError(f"Grounding-DINO {url}: HTTP {r.status_code}: {r.text[:200]}")
        try:
            preds = r.json().get("predictions") or []
        except (ValueError, AttributeError):
            raise PerceptionError(f"Grounding-DINO {url}: reply is not a JSON object with 'predictions'") from None
        dets: list[Detection] = []
        for i, p in enumerate(preds):
            try:
                x, y, w, h = (float(p[k]) for k in ("x", "y", "width", "height"))
            except (KeyError, TypeError, ValueError):
                raise PerceptionError(f"Grounding-DINO prediction {i}: needs numeric x, y, width, height") from None
            score = float(p.get("confidence", 1.0))
            dets.append(Detection(label=str(p.get("class") or "object"), score=min(1.0, max(0.0, score)),
                                  box=(x - w / 2, y - h / 2, x + w / 2, y + h / 2)))
        dets.sort(key=lambda d: -d.score)
        return DetectionResult(detections=dets, backend=self.name, semantic=True, terms=list(terms),
                               width=image.width, height=image.height)

    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "semantic": True, "url": self.base_url, "box_threshold": self.box_threshold}
