"""Fixtures in VisualToolBench's official formats, built from generated images.

`official_rows()` are Hugging Face rows (`ScaleAI/VisualToolBench` test split: JSON-string fields, images as
parquet image structs). `write_converted(rows, root)` writes them the way the reference repo's
`download_dataset.py` does (written here independently of toolsight's converter, so the loader and the
converter are both checked against it). No official record is available offline.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image


def png(value: int, w: int = 96, h: int = 64, mark: tuple[int, int, int] = (0, 0, 255)) -> bytes:
    img = np.full((h, w, 3), value, np.uint8)
    img[h // 4: h // 2, w // 4: w // 2] = mark
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return bytes(buf.tobytes())


def _img(b: bytes) -> dict[str, Any]:
    return {"bytes": b, "path": None}


ST_RUBRICS = {
    "r1": {"description": "States that the speed is 12 m/s.", "weight": 5, "objective/subjective": "objective",
           "explicit/implicit": "explicit", "category": ["truthfulness", "visual understanding"], "critical": "yes",
           "final_answer": "yes"},
    "r2": {"description": "Explains the steps.", "weight": 4, "objective/subjective": "subjective",
           "explicit/implicit": "implicit", "category": ["reasoning"], "critical": "no", "final_answer": "no"},
    "r3": {"description": "Is concise.", "weight": 1, "objective/subjective": "subjective",
           "explicit/implicit": "explicit", "category": "presentation", "critical": "no", "final_answer": "no"},
}
MT_RUBRICS = [
    {"a1": {"description": "Names the fracture site.", "weight": 5, "objective/subjective": "objective",
            "explicit/implicit": "explicit", "category": ["visual understanding"], "critical": "yes",
            "final_answer": "yes"}},
    {"b1": {"description": "Finds no infection.", "weight": 3, "objective/subjective": "objective",
            "explicit/implicit": "explicit", "category": ["truthfulness"], "critical": "no", "final_answer": "yes"}},
]
ST_TRAJECTORY = ("1. `python_image_processing`: Crop the speedometer.\n2. `calculator`: Convert km/h to m/s.\n"
                 "3. `web_search`: Look up the conversion factor.")


def official_rows() -> list[dict[str, Any]]:
    """One single-turn STEM task with two images and one two-turn medical task (one image per turn)."""
    st_imgs = [_img(png(30)), _img(png(200, mark=(0, 255, 0)))]
    mt_turns = [[_img(png(60))], [_img(png(120, mark=(255, 0, 0))), _img(png(90))]]
    return [
        {
            "id": "st-1", "turncase": "single-turn", "num_turns": 1, "prompt_category": "physics",
            "eval_focus": "region_switch_qa", "turn_prompts": ["[task:st-1] How fast is the car in m/s?"],
            "turn_golden_answers": ["The car drives at 12 m/s."],
            "turn_tool_trajectories": [json.dumps(ST_TRAJECTORY)],
            "rubrics_by_turn": [json.dumps(ST_RUBRICS)], "images": st_imgs, "images_by_turn": [st_imgs],
            "num_images": 2,
        },
        {
            "id": "mt-1", "turncase": "multi-turn", "num_turns": 2, "prompt_category": "Medical",
            "eval_focus": "temporal_sequential_reasoning",
            "turn_prompts": ["[task:mt-1] Where is the fracture?", "[task:mt-1] Any sign of infection now?"],
            "turn_golden_answers": ["GOLD-ONE: the proximal humerus.", "GOLD-TWO: no infection."],
            "turn_tool_trajectories": [json.dumps([{"tool": "python_image_processing", "description": "Flip it."}]),
                                       json.dumps("")],
            "rubrics_by_turn": [json.dumps(r) for r in MT_RUBRICS],
            "images": [i for t in mt_turns for i in t], "images_by_turn": mt_turns, "num_images": 3,
        },
    ]


def write_converted(rows: list[dict[str, Any]], root: Path) -> Path:
    """The reference's download_dataset.py layout: data/{single,multi}_turn/dataset.json + images."""
    out: dict[str, list[dict[str, Any]]] = {"single_turn": [], "multi_turn": []}
    for row in rows:
        split = "single_turn" if len(row["turn_prompts"]) == 1 else "multi_turn"
        k = len(out[split])
        rel = f"data/{split}/images/sample_{k}"
        (root / rel).mkdir(parents=True, exist_ok=True)
        rec = {key: v for key, v in row.items() if key not in ("images", "images_by_turn")}
        rec["image_paths"] = []
        for i, img in enumerate(row["images"]):
            Image.open(io.BytesIO(img["bytes"])).save(root / rel / f"image_{i}.png")
            rec["image_paths"].append(f"{rel}/image_{i}.png")
        rec["images_by_turn_paths"] = []
        for t, imgs in enumerate(row["images_by_turn"]):
            paths = []
            for i, img in enumerate(imgs):
                Image.open(io.BytesIO(img["bytes"])).save(root / rel / f"turn_{t}_image_{i}.png")
                paths.append(f"{rel}/turn_{t}_image_{i}.png")
            rec["images_by_turn_paths"].append(paths)
        out[split].append(rec)
    for split, recs in out.items():
        (root / "data" / split).mkdir(parents=True, exist_ok=True)
        (root / "data" / split / "dataset.json").write_text(json.dumps(recs, indent=2))
    return root


def write_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path
