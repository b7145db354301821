"""Image handling for the loop: the per-image pixel cap and the in-context image budget.

`apply_image_budget` keeps the newest images of every request (a sliding window: once over the
budget, each new image rewrites an older message). `ImageBudget` is the toolsight loop's: it decides
once per image — an image dropped stays dropped, and when the budget is exceeded it drops the oldest
images down to half the budget at once — so a request repeats the previous one's messages unchanged
for several rounds and providers' prompt caches can serve them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from toolsight import imaging
from toolsight.models.base import ImagePart, Message, TextPart


def fit_pixels(path: Path, max_pixels: int | None, cache_dir: Path | Callable[[], Path],
               size: tuple[int, int] | None = None) -> Path:
    """A copy of the image scaled down (aspect kept) to at most `max_pixels`, or the original.
    `size` (width, height), when the caller knows it (an artifact does), spares opening the file.
    `cache_dir` may be a function giving the folder, called only when a copy is made (a task's
    workspace is made only when something needs it)."""
    if not max_pixels:
        return path
    if size is not None and size[0] * size[1] <= max_pixels:
        return path
    pil_image = imaging.pil()  # only for an image over the cap: most runs never import Pillow
    with pil_image.open(path) as im:
        w, h = im.size
        if w * h <= max_pixels:
            return path
        scale = math.sqrt(max_pixels / (w * h))
        size = (max(1, int(w * scale)), max(1, int(h * scale)))
        if callable(cache_dir):
            cache_dir = cache_dir()
        out = cache_dir / f"{path.stem}.max{max_pixels}.png"
        if not out.exists():
            cache_dir.mkdir(parents=True, exist_ok=True)
            im.convert("RGB").resize(size, pil_image.Resampling.LANCZOS).save(out)
    return out


def apply_image_budget(messages: list[Message], max_images: int | None) -> list[Message]:
    """Keep only the newest `max_images` images; older ones become a text stub with their id."""
    if max_images is None:
        return messages
    total = sum(1 for m in messages for p in m.content if isinstance(p, ImagePart))
    drop = total - max_images
    if drop <= 0:
        return messages
    out: list[Message] = []
    for m in messages:
        if drop > 0 and any(isinstance(p, ImagePart) for p in m.content):
            parts: list[TextPart | ImagePart] = []
            for p in m.content:
                if isinstance(p, ImagePart) and drop > 0:
                    drop -= 1
                    parts.append(_stub(p))
                else:
                    parts.append(p)
            out.append(m.model_copy(update={"content": parts}))
        else:
            out.append(m)
    return out


def _image_key(p: ImagePart) -> str:
    return p.artifact_id or p.path


def _stub(p: ImagePart) -> TextPart:
    return TextPart(text=f"[image {p.artifact_id or Path(p.path).name} omitted: image budget]")


class ImageBudget:
    """At most `max_images` images per request, each image's fate decided once (see the module
    docstring). One per turn: it remembers which images it has dropped."""

    def __init__(self, max_images: int | None) -> None:
        self.max_images = max_images
        self.dropped: set[str] = set()

    def apply(self, messages: list[Message]) -> list[Message]:
        if self.max_images is None:
            return messages
        kept = [k for m in messages for p in m.content if isinstance(p, ImagePart)
                if (k := _image_key(p)) not in self.dropped]
        if len(kept) > self.max_images:
            distinct = list(dict.fromkeys(kept))  # oldest first; an image shown twice counts once here
            keep = max(1, self.max_images // 2)
            while len(distinct) > 1 and sum(1 for k in kept if k not in self.dropped) > keep:
                self.dropped.add(distinct.pop(0))
        if not self.dropped:
            return messages
        out: list[Message] = []
        for m in messages:
            if any(isinstance(p, ImagePart) and _image_key(p) in self.dropped for p in m.content):
                parts: list[TextPart | ImagePart] = [
                    _stub(p) if isinstance(p, ImagePart) and _image_key(p) in self.dropped else p for p in m.content]
                out.append(m.model_copy(update={"content": parts}))
            else:
                out.append(m)
        return out
