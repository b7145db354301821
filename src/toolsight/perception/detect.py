"""Which detector runs: chosen by name or by environment variables, built once per process.

`get_detector(None)` reads `TOOLSIGHT_DETECTOR` (`classical`, `onnx`, `replay`, `dinox`,
`grounding-dino`); without it the first configured backend wins: `TOOLSIGHT_DETECT_REPLAY` (folder of
released detection files), `TOOLSIGHT_DETECT_ONNX` (weights; `TOOLSIGHT_DETECT_ONNX_NAMES` optional),
`DDS_CLOUDAPI_TOKEN` (DINO-X; `TOOLSIGHT_DINOX_URL` overrides the endpoint), `TOOLSIGHT_GDINO_URL`
(Grounding-DINO server; `ROBOFLOW_API_KEY` optional), else the offline classical fallback.
"""

from __future__ import annotations

import os
import threading
from typing import Protocol

from toolsight.perception.types import DetectionResult, ImageInput, PerceptionError


class Detector(Protocol):
    """`detect(image, terms) -> boxes, labels, scores` behind one interface."""

    name: str
    semantic: bool

    async def detect(self, image: ImageInput, terms: list[str]) -> DetectionResult: ...

    def describe(self) -> dict[str, object]: ...


BACKENDS = ("classical", "onnx", "replay", "dinox", "grounding-dino")
_CACHE: dict[tuple[str, ...], Detector] = {}
_LOCK = threading.Lock()


def configured_backend(env: dict[str, str] | None = None) -> str:
    """The backend the environment selects (see the module docstring)."""
    e = os.environ if env is None else env
    explicit = e.get("TOOLSIGHT_DETECTOR", "").strip()
    if explicit:
        if explicit not in BACKENDS:
            raise PerceptionError(f"TOOLSIGHT_DETECTOR={explicit!r}: use one of {', '.join(BACKENDS)}")
        return explicit
    if e.get("TOOLSIGHT_DETECT_REPLAY"):
        return "replay"
    if e.get("TOOLSIGHT_DETECT_ONNX"):
        return "onnx"
    if e.get("DDS_CLOUDAPI_TOKEN"):
        return "dinox"
    if e.get("TOOLSIGHT_GDINO_URL"):
        return "grounding-dino"
    return "classical"


def build_detector(name: str, env: dict[str, str] | None = None) -> Detector:
    """A new detector `name`, configured from the environment."""
    e = os.environ if env is None else env
    if name == "classical":
        from toolsight.perception.classical import ClassicalDetector

        return ClassicalDetector()
    if name == "onnx":
        from toolsight.perception.onnx_yolo import OnnxDetector

        path = e.get("TOOLSIGHT_DETECT_ONNX", "")
        if not path:
            raise PerceptionError("the onnx detector needs TOOLSIGHT_DETECT_ONNX=/path/to/model.onnx")
        conf = float(e.get("TOOLSIGHT_DETECT_CONF", "0.25"))
        return OnnxDetector(path, e.get("TOOLSIGHT_DETECT_ONNX_NAMES") or None, conf=conf)
    if name == "replay":
        from toolsight.perception.replay import ReplayDetector

        root = e.get("TOOLSIGHT_DETECT_REPLAY", "")
        if not root:
            raise PerceptionError("the replay detector needs TOOLSIGHT_DETECT_REPLAY=/folder/with/DINOX/results")
        return ReplayDetector(root)
    if name == "dinox":
        from toolsight.perception.remote import DINOX_URL, DinoXDetector

        return DinoXDetector(e.get("DDS_CLOUDAPI_TOKEN", ""), e.get("TOOLSIGHT_DINOX_URL") or DINOX_URL)
    if name == "grounding-dino":
        from toolsight.perception.remote import GroundingDinoDetector

        return GroundingDinoDetector(e.get("TOOLSIGHT_GDINO_URL", ""), e.get("ROBOFLOW_API_KEY", ""))
    raise PerceptionError(f"unknown detector {name!r}: use one of {', '.join(BACKENDS)}")


_ENV_KEYS = ("TOOLSIGHT_DETECTOR", "TOOLSIGHT_DETECT_REPLAY", "TOOLSIGHT_DETECT_ONNX", "TOOLSIGHT_DETECT_ONNX_NAMES",
             "TOOLSIGHT_DETECT_CONF", "DDS_CLOUDAPI_TOKEN", "TOOLSIGHT_DINOX_URL", "TOOLSIGHT_GDINO_URL")


def get_detector(name: str | None = None) -> Detector:
    """The detector `name` (default: the one the environment selects), shared within the process."""
    backend = name or configured_backend()
    key = (backend, *(os.environ.get(k, "") for k in _ENV_KEYS))
    with _LOCK:
        det = _CACHE.get(key)
        if det is None:
            det = build_detector(backend)
            _CACHE[key] = det
        return det
