"""What every task generator needs: a seeded context that writes the task's images into the dataset
folder, and Pillow's bundled font (no system font needed)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageFont

from toolsight.tasks.schema import ImageRef

IMAGES_DIR = "images"


@dataclass
class GenContext:
    """What one generator call gets: where to write, a seeded RNG, the task id and the difficulty."""

    root: Path
    task_id: str
    rng: np.random.Generator
    difficulty: int
    written: list[str] = field(default_factory=list)

    def save(self, img: Image.Image, suffix: str = "") -> ImageRef:
        """Save a PNG under `images/` (file name = task id + suffix, unique in the dataset)."""
        name = f"{self.task_id}{suffix}.png"
        rel = f"{IMAGES_DIR}/{name}"
        (self.root / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
        img.save(self.root / rel, format="PNG", optimize=False, compress_level=6)
        self.written.append(name)
        return ImageRef(path=rel)


def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Pillow's bundled scalable font (Pillow >= 10.1): no system font is needed."""
    return ImageFont.load_default(size=size)
