"""Helpers for the OpenCV tool tests: a real workspace + Toolbox, and INFO parsing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from toolsight.tools.base import ArtifactStore, Toolbox, ToolResult
from toolsight.tools.opencv import opencv_tools

_TOOLS = opencv_tools()


class Bench:
    """An artifact store on a tmp dir with the 35 tools, called exactly as the agent does."""

    def __init__(self, tmp: Path) -> None:
        self.store = ArtifactStore(tmp / "ws")
        self.box = Toolbox(_TOOLS, self.store, "t")
        self._n = 0

    def add(self, arr: np.ndarray, name: str | None = None) -> str:
        """Write a BGR image as an input artifact; returns its id."""
        self._n += 1
        path = self.store.workspace.parent / (name or f"in{self._n}.png")
        assert cv2.imwrite(str(path), arr)
        return self.store.add_file(path, source="input").id

    def call(self, tool: str, args: dict[str, Any] | str) -> ToolResult:
        raw = args if isinstance(args, str) else json.dumps(args)
        return asyncio.run(self.box.call(tool, raw))

    def ok(self, tool: str, image: str, **param: Any) -> tuple[ToolResult, np.ndarray, dict[str, Any]]:
        r = self.call(tool, {"image": image, "param": param})
        assert r.ok, r.error
        assert len(r.artifacts) == 1
        arr = cv2.imread(str(self.store.path(r.artifacts[0])))
        assert arr is not None
        return r, arr, info_of(r)


def info_of(r: ToolResult) -> dict[str, Any]:
    text = r.text
    if " INFO: " not in text:
        return {}
    body = text.split(" INFO: ", 1)[1].split("\n", 1)[0]
    out: dict[str, Any] = json.loads(body)
    return out


def canvas(w: int = 400, h: int = 300, value: int = 0) -> np.ndarray:
    return np.full((h, w, 3), value, np.uint8)
