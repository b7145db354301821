"""Image parts as providers send them: base64 of the file, encoded once per image and cached.

An image is re-sent in every later request of its task; `image_b64` encodes it once and keeps it
in a cache bounded by entries and bytes. The run tells the cache about image bytes it has just
written (`remember_image_bytes`, wired into each task's artifact store), so sending a fresh tool
image reads nothing from disk.
"""

from __future__ import annotations

import base64
import threading
from collections import OrderedDict
from pathlib import Path

from toolsight.log.messages import ImagePart


class _B64Cache:
    """Base64 of image files by path, newest kept: an image is re-sent in every later request of
    its task, and is encoded once. Bounded by entries and by bytes, so memory stays flat however
    many tasks a run has and however large its images are."""

    def __init__(self, max_entries: int = 256, max_bytes: int = 64 << 20) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        # a file's bytes until it is first sent, then their base64
        self._data: OrderedDict[str, str | bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, path: str) -> str:
        with self._lock:
            hit = self._data.get(path)
            if hit is not None:
                self._data.move_to_end(path)
                if isinstance(hit, str):
                    return hit
        raw = hit if hit is not None else Path(path).read_bytes()
        value = base64.b64encode(raw).decode("ascii")
        self._put(path, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    def remember(self, path: str, data: bytes) -> None:
        """`data` was just written to `path`: the first `get` encodes it without reading the file."""
        self._put(path, data)

    def _put(self, path: str, value: str | bytes) -> None:
        with self._lock:
            old = self._data.pop(path, None)
            if old is not None:
                self._bytes -= len(old)
            self._data[path] = value
            self._bytes += len(value)
            while self._data and (len(self._data) > self.max_entries or self._bytes > self.max_bytes):
                _, dropped = self._data.popitem(last=False)
                self._bytes -= len(dropped)


_b64_cache = _B64Cache()


def remember_image_bytes(path: str, data: bytes) -> None:
    """Tell the encoder that `path` now holds `data` (just written), so sending it reads nothing."""
    _b64_cache.remember(path, data)


def forget_image_bytes() -> None:
    """Empty the cache (a run ends: its images are not sent again; up to 64 MB held otherwise)."""
    _b64_cache.clear()


def image_b64(part: ImagePart) -> str:
    """The image file's bytes in base64 (cached)."""
    return _b64_cache.get(part.path)


def data_url(part: ImagePart) -> str:
    """The image as a `data:` URL."""
    return f"data:{part.media_type()};base64,{image_b64(part)}"
