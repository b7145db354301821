"""Fixtures for the PhysToolBench tests: the 40 real sample records (shared/data, read in place) laid
out in both official layouts around generated images."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from sharedfiles import shared_dir, shared_file

SAMPLE = shared_dir() / "data" / "phystoolbench" / "dataset" / "image-task"
LEVELS = ["Easy", "Medium-M1", "Medium-M2", "Medium-M3", "Hard"]


def sample_records() -> dict[str, list[dict[str, str]]]:
    return {lv: json.loads(shared_file(f"data/phystoolbench/dataset/image-task/{lv}/tasks.sample.json")
                           .read_text(encoding="utf-8")) for lv in LEVELS}


def scene_png(seed: int, mode: str = "RGB") -> bytes:
    rng = np.random.default_rng(seed)
    arr = np.full((96, 128, 3), 230, np.uint8)
    for _ in range(3):
        x, y = (int(v) for v in rng.integers(5, 80, 2))
        arr[y:y + 14, x:x + 20] = rng.integers(0, 255, 3)
    img = Image.fromarray(arr)
    if mode == "RGBA":
        img = img.convert("RGBA")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def image_task_layout(root: Path) -> Path:
    """`dataset/image-task/<level>/tasks.json` + `annotated/<id>_0.png` with the real records."""
    for i, (lv, recs) in enumerate(sample_records().items()):
        folder = root / "dataset" / "image-task" / lv
        (folder / "annotated").mkdir(parents=True)
        (folder / "tasks.json").write_text(json.dumps(recs, indent=4), encoding="utf-8")
        for j, r in enumerate(recs):
            (root / r["image_path"].removeprefix("./")).write_bytes(scene_png(100 * i + j))
    return root


def hf_layout(root: Path) -> Path:
    """`data/train-00000-of-00001.parquet` with the HF columns (image as {bytes, path})."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = []
    for i, (lv, recs) in enumerate(sample_records().items()):
        for j, r in enumerate(recs):
            rows.append({"id": f"{lv}_{r['id']}", "difficulty": lv, "task_id": r["id"],
                         "image": {"bytes": scene_png(100 * i + j, "RGBA" if j == 0 else "RGB"),
                                   "path": f"{r['id']}_0.png"},
                         "correct_tool": r["correct_tool"], "cot_prompt": r["cot_prompt"],
                         "no_cot_prompt": r["no_cot_prompt"]})
    (root / "data").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), root / "data" / "train-00000-of-00001.parquet")
    return root
