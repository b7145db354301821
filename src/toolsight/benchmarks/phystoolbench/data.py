"""PhysToolBench data: the Hugging Face parquet release, the older GitHub layout, dataset folders.

Data (`--data PATH`, or the Hugging Face dataset `zhangzixin02/PhysToolBench` downloaded when online):
- the Hugging Face layout: parquet files (`data/train-*.parquet`) with columns `id` ('Easy_0001'),
  `difficulty`, `task_id`, `image` ({bytes, path}), `correct_tool`, `cot_prompt`, `no_cot_prompt`; the
  images are written once into toolsight's cache (`$TOOLSIGHT_CACHE/phystoolbench/images-<hash>/`);
- the older GitHub layout: `dataset/image-task/<level>/tasks.json` (`id, image_path, correct_tool,
  cot_prompt, no_cot_prompt, category`) with `annotated/<id>_0.png`; it adds the scene category;
- a toolsight dataset folder (`tasks.jsonl`), e.g. generated scenes (`toolsight generate phystool`).
Tags: `difficulty` (Easy, Medium-M1/M2/M3, Hard), `category` (as stored), `scene` (the paper's four:
Professional, Industrial, Outdoor, Daily; only the older layout has it).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight.benchmarks.base import BenchmarkError
from toolsight.models.base import GenerateConfig
from toolsight.tasks.schema import ImageRef, Task, Turn

BENCHMARK = "phystoolbench"
HF_REPO = "zhangzixin02/PhysToolBench"
LEVELS = ["Easy", "Medium-M1", "Medium-M2", "Medium-M3", "Hard"]
SCENES = ["Professional", "Industrial", "Outdoor", "Daily"]
SUFFIX_MARK = "\nNoted that"
#: paper Table 1: the human testers' accuracy (%), per difficulty, scene and overall
HUMAN_ROWS: dict[str, dict[str, float]] = {
    "HUMAN(BEST)": {"Easy": 96.19, "Medium-M1": 93.61, "Medium-M2": 90.78, "Medium-M3": 93.97, "Hard": 89.10,
                    "Professional": 87.5, "Industrial": 93.52, "Outdoor": 91.17, "Daily": 96.71, "Overall": 93.19},
    "HUMAN(WORST)": {"Easy": 91.74, "Medium-M1": 87.77, "Medium-M2": 85.11, "Medium-M3": 90.36, "Hard": 81.68,
                     "Professional": 80.5, "Industrial": 85.02, "Outdoor": 87.65, "Daily": 93.42, "Overall": 87.85},
}
OFFICIAL_GENERATE = GenerateConfig(temperature=0.0, max_tokens=8192)
PROMPTS = {"cot": "cot_prompt", "no-cot": "no_cot_prompt"}


class PhysToolBenchError(BenchmarkError):
    """A user-fixable problem with PhysToolBench data (names the file, record and fix)."""


# --------------------------------------------------------------------------- tags


#: scene words in the stored categories ("Daily Life Scene-Kitchen", "Manufacturing & Repair", "Outdoor
#: Activities", "Professional Scenarios"), checked in this order
_SCENE_WORDS = (("professional", "Professional"), ("manufactur", "Industrial"), ("repair", "Industrial"),
                ("industr", "Industrial"), ("outdoor", "Outdoor"), ("daily", "Daily"))
#: categories that name only a sub-scene (Hard's "Office", "Art Creation", "Gardening/Agriculture",
#: "Construction/Renovation"; Easy 0315's "Life"): the scene the Easy level files file that sub-scene under
#: ("Daily Life Scene-Office", "Professional Scene-Art Creation", ...). Audited against all five
#: `dataset/image-task/<level>/tasks.json` of PhysToolBench/PhysToolBench @ 103d82d (1,012 items).
SUB_SCENES: dict[str, str] = {
    **dict.fromkeys(("life", "kitchen", "living room/bedroom", "bathroom", "laundry room/storage room", "office"),
                    "Daily"),
    **dict.fromkeys(("construction/renovation", "plumbing repair", "garage/workshop", "furniture making/woodworking",
                     "electronic repair", "car repair"), "Industrial"),
    **dict.fromkeys(("gardening/agriculture", "outdoor sports/camping", "mountaineering/hiking",
                     "fishing/water sports", "outdoor barbecue/party", "outdoor cleaning/maintenance"), "Outdoor"),
    **dict.fromkeys(("medical/laboratory", "smart home/iot", "digital office equipment", "photography/videography",
                     "music production", "art creation", "phone/tablet maintenance", "classroom/training room",
                     "restaurant/hotel"), "Professional"),
}


def scene_of(category: str) -> str | None:
    """The paper's scene (Professional, Industrial, Outdoor, Daily) for a stored category string: by its
    scene word, else by the sub-scene it names alone; None for a string that names neither."""
    c = " ".join(category.lower().split())
    for word, scene in _SCENE_WORDS:
        if word in c:
            return scene
    return SUB_SCENES.get(c.strip(" '\""))


def question_of(prompt: str) -> str:
    """The question part of a stored prompt (everything before the fixed suffix)."""
    i = prompt.find(SUFFIX_MARK)
    return prompt[:i] if i >= 0 else prompt


def make_task(tid: str, level: str, image: str, correct_tool: str, cot: str, no_cot: str,
              category: str = "", extra: dict[str, Any] | None = None) -> Task:
    tags = {"difficulty": level}
    if category:
        tags["category"] = category
        scene = scene_of(category)
        if scene:
            tags["scene"] = scene
    meta: dict[str, Any] = {"question": question_of(cot), "cot_prompt": cot, "no_cot_prompt": no_cot, **(extra or {})}
    turn = Turn(prompt=cot, images=[ImageRef(path=image)], answer=correct_tool, answer_type="set", meta=meta)
    return Task(id=tid, benchmark=BENCHMARK, turns=[turn], tags=tags)


def _str_field(rec: Any, key: str, where: str) -> str:
    if not isinstance(rec, dict) or not isinstance(rec.get(key), str):
        raise PhysToolBenchError(f"{where}: field {key!r} is missing or not a string; expected the official "
                                 "fields id, image_path, correct_tool, cot_prompt, no_cot_prompt")
    return str(rec[key])


# --------------------------------------------------------------------------- older GitHub layout


def find_image_task(root: Path) -> Path | None:
    """The `image-task` folder under `root` (the repo, its `dataset/`, or the folder itself)."""
    for cand in (root / "dataset" / "image-task", root / "image-task", root):
        if cand.is_dir() and any((cand / lv).is_dir() for lv in LEVELS):
            return cand
    return None


def _tasks_file(level_dir: Path) -> Path | None:
    for name in ("tasks.json", "tasks.sample.json"):
        if (level_dir / name).is_file():
            return level_dir / name
    return None


def load_image_task(root: Path, check_images: bool = True) -> tuple[Path, list[Task]]:
    """Tasks from `dataset/image-task/<level>/tasks.json`; image paths stay relative to the repo root."""
    it = find_image_task(root)
    if it is None:
        raise PhysToolBenchError(f"{root}: no dataset/image-task/<level>/ folders ({', '.join(LEVELS)})")
    repo = it.parent.parent if it.parent.name == "dataset" else it.parent
    tasks: list[Task] = []
    missing: list[str] = []
    for level in LEVELS:
        f = _tasks_file(it / level)
        if f is None:
            continue
        try:
            records = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PhysToolBenchError(f"{f}: not readable JSON ({exc}); re-download it") from None
        if not isinstance(records, list):
            raise PhysToolBenchError(f"{f}: expected a JSON list of task records")
        for i, rec in enumerate(records):
            where = f"{f} record {i}"
            rid = _str_field(rec, "id", where)
            rel = _str_field(rec, "image_path", where).replace("\\", "/").removeprefix("./")
            img = repo / rel
            if not img.is_file():
                alt = it / level / "annotated" / Path(rel).name  # a copy without the repo prefix
                if alt.is_file():
                    rel = alt.relative_to(repo).as_posix()
                elif check_images:
                    missing.append(rel)
            tasks.append(make_task(
                f"{level}_{rid}", level, rel, _str_field(rec, "correct_tool", where).strip(),
                _str_field(rec, "cot_prompt", where), _str_field(rec, "no_cot_prompt", where),
                str(rec.get("category") or ""), {"record_id": rid, "source_file": f"{level}/{f.name}"},
            ))
    if not tasks:
        raise PhysToolBenchError(f"{it}: no tasks.json in any level folder ({', '.join(LEVELS)})")
    if missing:
        raise PhysToolBenchError(
            f"{len(missing)} image(s) missing under {repo} (e.g. {', '.join(missing[:3])}); the annotated/ "
            f"folders must sit beside each tasks.json, or use the Hugging Face dataset {HF_REPO}")
    return repo, tasks


# --------------------------------------------------------------------------- Hugging Face layout

HF_COLUMNS = ("id", "difficulty", "image", "correct_tool", "cot_prompt", "no_cot_prompt")


def _parquet_files(root: Path) -> list[Path]:
    if root.is_file() and root.suffix == ".parquet":
        return [root]
    return sorted(p for p in root.rglob("*.parquet") if "test" not in p.name and "validation" not in p.name)


def load_hf(root: Path, cache: Path | None = None) -> tuple[Path, list[Task]]:
    """Tasks from the HF parquet files under `root`; images are extracted once into a cache folder."""
    files = _parquet_files(root)
    if not files:
        raise PhysToolBenchError(f"{root}: no .parquet files (the Hugging Face layout of {HF_REPO})")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise PhysToolBenchError("reading the Hugging Face parquet files needs pyarrow: pip install 'toolsight[hf]'") from None
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode())
        digest.update(str(f.stat().st_size).encode())
        digest.update(str(int(f.stat().st_mtime)).encode())
    if cache is None:
        from toolsight.tasks.dataset import cache_root

        cache = cache_root() / "phystoolbench"
    out = cache / f"images-{digest.hexdigest()[:16]}"
    tasks: list[Task] = []
    seen: set[str] = set()
    for f in files:
        try:
            table = pq.read_table(f)
        except Exception as exc:  # pyarrow raises several types for a damaged file
            raise PhysToolBenchError(f"{f}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
        cols = set(table.column_names)
        lacking = [c for c in HF_COLUMNS if c not in cols]
        if lacking:
            raise PhysToolBenchError(f"{f}: missing column(s) {', '.join(lacking)}; expected {', '.join(HF_COLUMNS)}")
        for i, row in enumerate(table.to_pylist()):
            where = f"{f.name} row {i}"
            tid = _str_field(row, "id", where)
            if tid in seen:
                raise PhysToolBenchError(f"{where}: duplicate id {tid!r}")
            seen.add(tid)
            level = _str_field(row, "difficulty", where)
            img = row.get("image")
            data = img.get("bytes") if isinstance(img, dict) else img if isinstance(img, bytes) else None
            if not isinstance(data, bytes | bytearray) or not data:
                raise PhysToolBenchError(f"{where} ({tid}): no image bytes in the 'image' column")
            rel = f"images/{tid}.png"
            dest = out / rel
            if not dest.is_file():
                dest.parent.mkdir(parents=True, exist_ok=True)
                with Image.open(io.BytesIO(bytes(data))) as im:  # keep the decoded pixels as PNG
                    im.save(dest, format="PNG")
            category = str(row.get("category") or "")
            tasks.append(make_task(tid, level, rel, str(row["correct_tool"]).strip(),
                                   _str_field(row, "cot_prompt", where), _str_field(row, "no_cot_prompt", where),
                                   category, {"task_id": str(row.get("task_id") or "")}))
    return out, tasks


def download(cache: Path) -> Path:
    """Fetch the HF dataset into `cache` (needs huggingface_hub and a connection)."""
    if _parquet_files(cache) if cache.is_dir() else False:
        return cache
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise PhysToolBenchError(
            f"PhysToolBench data is not available locally and huggingface_hub is not installed. Pass --data PATH "
            f"(the {HF_REPO} parquet files, or the GitHub dataset/image-task folders) or `pip install "
            "'toolsight[hf]'` while online") from None
    try:
        snapshot_download(repo_id=HF_REPO, repo_type="dataset", local_dir=str(cache))
    except Exception as exc:  # network, auth, disk: one message
        raise PhysToolBenchError(f"could not download {HF_REPO} ({type(exc).__name__}: {exc}); check the "
                                 "connection or pass --data PATH") from None
    return cache


def load_any(data: Path) -> tuple[Path, Sequence[Task], str]:
    """(image root, tasks, layout name) for any supported layout at `data`."""
    if not data.exists():
        raise PhysToolBenchError(f"PhysToolBench data not found: {data} does not exist")
    if (data / "tasks.jsonl").is_file():
        from toolsight.tasks.dataset import DatasetError, load_dataset

        try:
            ds = load_dataset(data)
        except DatasetError as exc:
            raise PhysToolBenchError(str(exc)) from None
        return ds.root, ds.tasks, "toolsight"
    if find_image_task(data) is not None:
        root, tasks = load_image_task(data)
        return root, tasks, "image-task"
    if _parquet_files(data):
        root, tasks = load_hf(data)
        return root, tasks, "huggingface"
    raise PhysToolBenchError(
        f"{data}: not PhysToolBench data: expected the {HF_REPO} parquet files, the GitHub "
        "dataset/image-task/<level>/tasks.json folders, or a toolsight dataset folder (tasks.jsonl)")
