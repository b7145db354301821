"""TIR-Bench: loader for the official release (`TIR-Bench.json` + `data/`) and the settings data.

The official release (Hugging Face dataset `Agents-X/TIR-Bench`) is a JSON list of records
`{id, task, prompt, answer, image_1, image_2?, meta_data?}` with image paths relative to the JSON's
folder. `load_tir_bench(path)` turns it into toolsight `Task`s (tags: `task` = official key,
`task_name` = the paper's name). `export_official()` writes tasks back in that format (used for test
fixtures, and to score generated tasks with the official scripts). The three settings (`direct`,
`code`, `function`) and prompt strategies 1-3 are plain data here, worded exactly as paper App. D.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from toolsight.errors import ToolsightError
from toolsight.tasks.schema import AnswerType, ImageRef, Task, Turn

BENCHMARK = "tir-bench"
JSON_FILE = "TIR-Bench.json"
HF_REPO = "Agents-X/TIR-Bench"

# official task key -> the paper's name (Table 1), in the paper's Table 2 column order; counts in the release
TASK_NAMES: dict[str, str] = {
    "color": "Color VQA",  # 100
    "refcoco": "Proportion VQA",  # 120
    "ocr": "Rotated OCR",  # 60
    "symbolic": "Symbolic Reasoning",  # 50
    "maze": "Maze",  # 120
    "math": "Math",  # 120
    "word_search": "Word Search",  # 100
    "contrast": "Low-Light VQA",  # 50
    "instrument": "Instrument Reading",  # 80
    "spot_difference": "Spot the Difference",  # 100
    "jigsaw": "Jigsaw",  # 120
    "visual_search": "Visual Search",  # 120
    "rotation_game": "Rotation Game",  # 75
}


class TirBenchError(ToolsightError):
    """A user-fixable problem with TIR-Bench data (one clear message naming the file and the fix)."""


# --------------------------------------------------------------------------- options and answer types

_LINE_OPT = re.compile(r"^\s*\(?([A-Z])\s*[\.\:\)]\s*(.+?)\s*$", re.M)
_PAREN_OPT = re.compile(r"\(([A-Z])\)\s*(.*?)(?=\s*\([A-Z]\)|$)", re.S)
_DOT_OPT = re.compile(r"(?:^|\s)([A-Z])\.\s*(.*?)(?=\s+[A-Z]\.\s|$)", re.S)


def _consecutive(pairs: list[tuple[str, str]]) -> dict[str, str] | None:
    """Keep the run of options lettered A, B, C, ... (at least two); None if there is none."""
    out: dict[str, str] = {}
    for letter, text in pairs:
        if letter == chr(ord("A") + len(out)):
            out[letter] = text.strip()
        elif letter == "A":  # a second list restarts: keep the last one
            out = {"A": text.strip()}
    return out if len(out) >= 2 else None


def parse_options(prompt: str) -> dict[str, str] | None:
    """Options written in a prompt as lines 'A. x' / 'A: x' / '(A) x', or inline '(A) x (B) y'."""
    for pattern in (_LINE_OPT, _PAREN_OPT, _DOT_OPT):
        found = _consecutive([(m.group(1), m.group(2)) for m in pattern.finditer(prompt)])
        if found:
            return found
    return None


def _is_int(s: str) -> bool:
    return re.fullmatch(r"-?\d+", s) is not None


def _is_float(s: str) -> bool:
    return re.fullmatch(r"-?\d+\.\d+", s) is not None


def answer_type(task: str, answer: str, options: dict[str, str] | None) -> AnswerType:
    """How `calculate_score.py` treats an answer: list, set, choice, integer, number or text."""
    a = answer.strip()
    if task == "jigsaw":
        return "list"
    if task == "spot_difference":
        return "integer" if _is_int(a) else "set"
    if task == "word_search":
        return "integer" if _is_int(a) else "list"
    if task == "ocr":
        return "text"
    if re.fullmatch(r"[A-Z]+", a) and (options or len(a) <= 2):
        return "choice"
    if _is_int(a):
        return "integer"
    if _is_float(a):
        return "number"
    return "text"


# --------------------------------------------------------------------------- loader


def _find_json(path: Path) -> Path:
    if path.is_file():
        return path
    if not path.exists():
        raise TirBenchError(f"TIR-Bench data not found: {path} does not exist (pass --data PATH)")
    cand = path / JSON_FILE
    if cand.is_file():
        return cand
    nested = sorted(path.glob(f"*/{JSON_FILE}"))
    if nested:
        return nested[0]
    raise TirBenchError(
        f"no {JSON_FILE} in {path}; --data must be the folder holding {JSON_FILE} and data/ "
        f"(download it from https://huggingface.co/datasets/{HF_REPO}) or the JSON file itself"
    )


def _record_to_task(rec: dict[str, Any], index: int, root: Path, check_images: bool) -> Task:
    where = f"{JSON_FILE} record {index}"
    for field in ("prompt", "answer", "image_1"):
        if rec.get(field) in (None, ""):
            raise TirBenchError(f"{where}: missing field {field!r}")
    key = rec.get("task") or rec.get("category")
    if not isinstance(key, str) or not key:
        raise TirBenchError(f"{where}: missing field 'task' (the task key, e.g. 'maze')")
    rid = rec.get("id", index)
    prompt = str(rec["prompt"])
    answer = str(rec["answer"]).strip()
    paths = [str(rec["image_1"])] + ([str(rec["image_2"])] if rec.get("image_2") else [])
    images: list[ImageRef] = []
    for i, raw in enumerate(paths):
        p = raw.replace("\\", "/")
        while p.startswith("./"):
            p = p[2:]
        if p.startswith("/") or ".." in p.split("/"):
            raise TirBenchError(f"{where} (id {rid}): image path {raw!r} must be relative to {JSON_FILE}'s folder")
        if check_images and not (root / p).is_file():
            raise TirBenchError(
                f"{where} (id {rid}): image not found: {root / p} — unzip data.zip next to {JSON_FILE} "
                f"so that the paths in image_1/image_2 resolve"
            )
        role = ("left" if i == 0 else "right") if len(paths) == 2 else None
        images.append(ImageRef(path=p, role=role))
    options = parse_options(prompt) if re.fullmatch(r"[A-Z]+", answer) else None
    raw_meta = rec.get("meta_data")
    meta_data: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    turn_meta: dict[str, Any] = {"official_id": rid, "meta_data": meta_data}
    tags = {"task": key, "task_name": TASK_NAMES.get(key, key)}
    if "difficulty" in meta_data:
        turn_meta["difficulty"] = meta_data["difficulty"]
        tags["difficulty"] = str(meta_data["difficulty"])
    turn = Turn(
        prompt=prompt,
        images=images,
        answer=answer,
        options=options,
        answer_type=answer_type(key, answer, options),
        meta=turn_meta,
    )
    return Task(id=f"tir-{rid}", benchmark=BENCHMARK, turns=[turn], tags=tags)


def load_tir_bench(path: Path | str, check_images: bool = True) -> tuple[Path, list[Task]]:
    """Load the official release from a folder (or the JSON file); returns (image root, tasks)."""
    jf = _find_json(Path(path))
    try:
        data = json.loads(jf.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TirBenchError(f"{jf}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    except OSError as exc:
        raise TirBenchError(f"cannot read {jf}: {exc}") from exc
    if isinstance(data, dict):  # result files are objects keyed "0", "1", ...
        data = list(data.values())
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise TirBenchError(f"{jf}: expected a JSON list of records with id, task, prompt, answer, image_1")
    root = jf.parent
    tasks = [_record_to_task(rec, i, root, check_images) for i, rec in enumerate(data)]
    seen: set[str] = set()
    for t in tasks:
        if t.id in seen:
            raise TirBenchError(f"{jf}: duplicate id {t.id.removeprefix('tir-')!r}")
        seen.add(t.id)
    return root, tasks


def download_tir_bench(cache_dir: Path | str) -> Path:
    """Fetch `Agents-X/TIR-Bench` from the Hugging Face Hub into `cache_dir` (optional dependency)."""
    target = Path(cache_dir)
    if (target / JSON_FILE).is_file() and (target / "data").is_dir():
        return target
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:
        raise TirBenchError(
            "TIR-Bench data is not available locally and huggingface_hub is not installed. Either pass "
            f"--data PATH (a folder with {JSON_FILE} and data/, from https://huggingface.co/datasets/"
            f"{HF_REPO}) or run `pip install huggingface_hub` while online"
        ) from exc
    try:
        snapshot_download(repo_id=HF_REPO, repo_type="dataset", local_dir=str(target))
    except Exception as exc:  # network errors, gated repo, disk: all end in one message
        raise TirBenchError(
            f"could not download {HF_REPO} from the Hugging Face Hub ({type(exc).__name__}: {exc}); "
            "check the connection, or download it yourself and pass --data PATH"
        ) from exc
    archive = target / "data.zip"
    if archive.is_file() and not (target / "data").is_dir():
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(target)
    return target


def export_official(tasks: list[Task], src_root: Path | str, out_dir: Path | str) -> Path:
    """Write tasks as an official release folder: `TIR-Bench.json` + `data/<task>/<file>`."""
    src, out = Path(src_root), Path(out_dir)
    records: list[dict[str, Any]] = []
    for i, t in enumerate(tasks, start=1):
        turn = t.turns[0]
        key = t.tags.get("task", "custom")
        rec: dict[str, Any] = {"id": i, "task": key, "prompt": turn.prompt, "answer": str(turn.answer)}
        for j, img in enumerate(turn.images[:2], start=1):
            rel = f"data/{key}/{Path(img.path).name}"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / img.path, out / rel)
            rec[f"image_{j}"] = rel
        if "meta_data" in turn.meta:
            rec["meta_data"] = turn.meta["meta_data"]
        records.append(rec)
    out.mkdir(parents=True, exist_ok=True)
    (out / JSON_FILE).write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    return out


# --------------------------------------------------------------------------- settings (paper App. D)


class PromptStrategy(BaseModel):
    """One prompt strategy: text appended to the user prompt, and the message returned with tool output."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int
    suffix: str
    feedback: str | None


class SettingSpec(BaseModel):
    """One TIR-Bench setting: the tool sets it offers and its prompt strategies 1-3."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    tools: list[str]
    strategies: dict[int, PromptStrategy]

    def first_prompt(self, user_prompt: str, strategy: int = 1) -> str:
        """The opening user message for a strategy (App. D `prompt_1` / `prompt_being`)."""
        return user_prompt + self.strategy(strategy).suffix

    def strategy(self, number: int) -> PromptStrategy:
        if number not in self.strategies:
            raise TirBenchError(
                f"prompt strategy {number} does not exist for setting {self.name!r}; "
                f"choose one of: {', '.join(str(k) for k in self.strategies)}"
            )
        return self.strategies[number]


# App. D.1 (write code). Texts are the paper's, joined where the PDF wrapped lines.
CODE_STRATEGIES = {
    1: PromptStrategy(
        number=1,
        suffix="",
        feedback="The returning status and the processed image or text (if any) of the code is attached.",
    ),
    2: PromptStrategy(
        number=2,
        suffix="\nPlease consider to write code to process the image.",
        feedback=(
            "The returning status and the processed image or text (if any) of the code is attached, you can "
            "continue to write code to process the original image for better understanding or proceed to "
            "answer the question."
        ),
    ),
    3: PromptStrategy(
        number=3,
        suffix=(
            "\nPlease try to write code to rotate the original image with the rotation degree in the options "
            "to verify the correctness. You can try as many as you can."
        ),
        feedback=(
            "The returning status and the processed image or text (if any) of the code is attached, you can "
            "continue to write code to rotate the original image with a degree of other difference options "
            "for better understanding or proceed to answer the question if you have meet the correct option."
        ),
    ),
}

# App. D.2 (function calling with the predefined rotation function).
FUNCTION_STRATEGIES = {
    1: PromptStrategy(number=1, suffix="", feedback="The rotated image is attached."),
    2: PromptStrategy(
        number=2,
        suffix="\nPlease consider to call the rotation function.",
        feedback=(
            "The rotated image is attached, you can continue to call the function to rotate the original "
            "image with a difference degree for better understanding or proceed to answer the question."
        ),
    ),
    3: PromptStrategy(
        number=3,
        suffix=(
            "\nPlease try to call the rotation function with the rotation degree in the options to verify "
            "the correctness. You can try as many as you can."
        ),
        feedback=(
            "The rotated image is attached, you can continue to call the function to rotate the original "
            "image with a degree of other difference options for better understanding or proceed to answer "
            "the question if you have meet the correct option."
        ),
    ),
}

# The paper names a "predefined rotation function" but gives no schema; this is ours (clockwise, as
# the Rotation Game question asks for clockwise degrees; always applied to the original image).
ROTATE_IMAGE_TOOL: dict[str, Any] = {
    "name": "rotate_image",
    "description": "Rotate the original image CLOCKWISE by the given number of degrees and return the rotated image.",
    "parameters": {
        "type": "object",
        "properties": {
            "degrees": {"type": "number", "description": "clockwise rotation in degrees, e.g. 90 or 235"}
        },
        "required": ["degrees"],
        "additionalProperties": False,
    },
}

SETTINGS: dict[str, SettingSpec] = {
    "direct": SettingSpec(
        name="direct",
        description="direct answer, no tools (the paper's main table for non-agentic models)",
        tools=[],
        strategies={1: PromptStrategy(number=1, suffix="", feedback=None)},
    ),
    "code": SettingSpec(
        name="code",
        description=("code interpreter (official loop: tir_code, a stateful kernel; toolsight loop: the 'python' "
                     "tool set); prompt strategies 1-3 of App. D.1"),
        tools=["python"],
        strategies=CODE_STRATEGIES,
    ),
    "function": SettingSpec(
        name="function",
        description="function calling with the predefined rotate_image(degrees) tool; strategies 1-3 of App. D.2",
        tools=["rotate_image"],
        strategies=FUNCTION_STRATEGIES,
    ),
}


__all__ = [
    "BENCHMARK",
    "HF_REPO",
    "JSON_FILE",
    "ROTATE_IMAGE_TOOL",
    "SETTINGS",
    "TASK_NAMES",
    "PromptStrategy",
    "SettingSpec",
    "TirBenchError",
    "answer_type",
    "download_tir_bench",
    "export_official",
    "load_tir_bench",
    "parse_options",
]
