"""Helpers for the engine tests: a step model, reply builders and PNG writing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.tools.base import ToolSpec

Step = Callable[[list[Message], list[ToolSpec]], Any]  # policies return ModelOutput (some are typed `object`)


class StepModel(Model):
    """Replies by calling `policy(messages, tools)`; records what it was sent."""

    def __init__(self, policy: Step, name: str = "test/step", tool_image_mode: str = "user",
                 native_tools: bool = True) -> None:
        super().__init__(name)
        self.policy = policy
        self.tool_image_mode = tool_image_mode  # type: ignore[assignment]
        self.native_tools = native_tools
        self.seen: list[list[Message]] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.seen.append(messages)
        out: ModelOutput = self.policy(messages, tools)
        return out


def say(text: str) -> ModelOutput:
    return ModelOutput(message=Message(role="assistant", content=[TextPart(text=text)]),
                       usage=Usage(input_tokens=10, output_tokens=5))


def call(name: str, args: dict[str, object] | str, cid: str = "c1") -> ModelOutput:
    raw = args if isinstance(args, str) else json.dumps(args)
    return ModelOutput(message=Message(role="assistant", tool_calls=[ToolCall(id=cid, name=name, arguments=raw)]),
                       usage=Usage(input_tokens=10, output_tokens=5), finish_reason="tool_calls")


def write_png(path: Path, w: int = 64, h: int = 48, value: int = 0) -> None:
    img = np.full((h, w, 3), value, np.uint8)
    img[h // 4: h // 2, w // 4: w // 2] = (0, 0, 255)
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), img)




def imread(path: Path | str) -> np.ndarray:
    """`cv2.imread` that fails the test (instead of returning None) when the file cannot be read."""
    img = cv2.imread(str(path))
    assert img is not None, f"cannot read image {path}"
    return img
def write_png_bomb(path: Path, width: int = 50_000, height: int = 50_000, level: int = 9) -> None:
    """A real decompression bomb: a valid 1-bit PNG of width x height (2.5 Gpx by default) whose
    all-zero pixels compress to a few hundred KB. Decoding it would take gigabytes."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    comp = zlib.compressobj(level)
    row = b"\0" * (1 + (width + 7) // 8)  # filter byte + packed 1-bit pixels
    parts = [comp.compress(row * 1000) for _ in range(height // 1000)]
    parts.append(comp.compress(row * (height % 1000)))
    parts.append(comp.flush())
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b""))
