"""VisualToolBench data: the repo's converted layout, the Hugging Face parquet release, and the download.

Layouts read (both official):

- converted (`download_dataset.py` of `xi1ngang/VisualToolBench`): `data/single_turn/dataset.json`,
  `data/multi_turn/dataset.json`, images under `data/{single,multi}_turn/images/sample_k/` and paths in the
  records relative to the folder that holds `data/` (`image_paths`, `images_by_turn_paths`);
- Hugging Face `ScaleAI/VisualToolBench`, split `test`, as parquet (`turn_prompts`, `turn_golden_answers`,
  `turn_tool_trajectories` and `rubrics_by_turn` as JSON strings, `images`, `images_by_turn`). It is
  converted once into the converted layout (as `download_dataset.py` does, images re-saved as PNG) in
  the toolsight cache, then read as above. Reading parquet needs `pyarrow`; downloading needs
  `huggingface_hub` (both optional).

A record becomes a `Task`: one turn per prompt, each with its gold answer, rubrics (weight, critical,
objective/subjective, explicit/implicit, categories), reference steps parsed from the tool trajectory,
and images (single-turn: `image_paths`, of which the reference sends the first; multi-turn: that turn's
`images_by_turn_paths`). Tags: `turncase`, `domain` (chemistry/maths/biology/engineering/physics → STEM),
`prompt_category`, `eval_focus` and `task_category` (the paper's name for the eval focus).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.visualtoolbench.scorer import (
    STEM_CATEGORIES,
    VisualToolBenchFormatError,
    rubrics_from_official,
)
from toolsight.tasks.dataset import cache_root as dataset_cache_root
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

BENCHMARK = "visualtoolbench"
HF_REPO = "ScaleAI/VisualToolBench"
SPLITS = ("single_turn", "multi_turn")
DOMAINS = ("STEM", "Medical", "Finance", "Sports", "Generalist")
TURNCASES = ("single-turn", "multi-turn")
TASK_CATEGORIES = ("Region-Switch Q&A", "Hybrid Tool Reasoning", "Follow-up Test", "Temporal Visual Reasoning",
                   "Progressive Visual Reasoning")
_CATEGORY_WORDS = (("region", TASK_CATEGORIES[0]), ("hybrid", TASK_CATEGORIES[1]), ("follow", TASK_CATEGORIES[2]),
                   ("temporal", TASK_CATEGORIES[3]), ("progressive", TASK_CATEGORIES[4]))
_DOMAIN_WORDS = (("medic", "Medical"), ("financ", "Finance"), ("sport", "Sports"), ("general", "Generalist"))
#: known tool names a reference trajectory may mention (`web_image_processing` is a typo in the paper's App. E)
TOOL_NAMES = ("python_image_processing", "python_interpreter", "web_search", "google_search",
              "browser_get_page_text", "historical_weather", "calculator")


class VisualToolBenchError(BenchmarkError):
    """A user-fixable problem with VisualToolBench data (names the file, record and fix)."""


def domain_of(prompt_category: str) -> str:
    """The paper's domain for a `prompt_category` (the five science categories merge into STEM)."""
    cat = prompt_category.strip().lower()
    if cat in STEM_CATEGORIES or cat == "stem":
        return "STEM"
    for word, name in _DOMAIN_WORDS:
        if cat.startswith(word):
            return name
    return prompt_category.strip() or "unknown"


def task_category_of(eval_focus: str) -> str:
    """The paper's task-category name for an `eval_focus` value (the raw value when unrecognised)."""
    low = eval_focus.lower()
    for word, name in _CATEGORY_WORDS:
        if word in low:
            return name
    return eval_focus.strip() or "unknown"


# ---------------------------------------------------------------------------------------- tool trajectories

_NUMBERED = re.compile(r"^\s*(?:\d+\s*[.)]|[-*•])\s+", re.MULTILINE)
_BACKTICK = re.compile(r"`([A-Za-z_][\w\-]*)`")
_LEADING = re.compile(r"^\s*\**([A-Za-z_][\w\-]*)\**\s*[:(]")


def _step_from_text(text: str) -> ToolStep | None:
    text = text.strip()
    if not text:
        return None
    m = _BACKTICK.search(text) or _LEADING.match(text)
    name = m.group(1) if m else next((t for t in TOOL_NAMES if t in text), "unknown")
    return ToolStep(tool=name, note=text)


def parse_tool_trajectory(raw: Any) -> list[ToolStep]:
    """Reference steps from a `turn_tool_trajectories` entry: a JSON string of a list / dict / text, or text."""
    val = raw
    if isinstance(raw, str):
        try:
            val = json.loads(raw)
        except json.JSONDecodeError:
            val = raw
    if val is None or val == "":
        return []
    if isinstance(val, str):
        parts = [p for p in _NUMBERED.split(val) if p.strip()]
        if len(parts) <= 1:
            parts = [ln for ln in val.splitlines() if ln.strip()]
        return [s for s in (_step_from_text(p) for p in parts) if s is not None]
    if isinstance(val, Mapping):
        for key in ("steps", "tool_trajectory", "trajectory", "tools"):
            if key in val:
                return parse_tool_trajectory(val[key])
        val = list(val.values())
    steps: list[ToolStep] = []
    if isinstance(val, list):
        for item in val:
            if isinstance(item, Mapping):
                name = next((str(item[k]) for k in ("tool", "tool_name", "name", "function") if item.get(k)), None)
                note = next((str(item[k]) for k in ("description", "step", "note", "action", "purpose") if item.get(k)),
                            None)
                step = ToolStep(tool=name, note=note) if name else _step_from_text(note or json.dumps(item))
                if step is not None:
                    steps.append(step)
            elif item is not None:
                s = _step_from_text(str(item))
                if s is not None:
                    steps.append(s)
    return steps


# ---------------------------------------------------------------------------------------- records → tasks


def _json_field(value: Any, where: str) -> Any:
    if isinstance(value, str):
        if not value.strip():
            return {}
        try:
            return json.loads(value)
        except json.JSONDecodeError as exc:
            raise VisualToolBenchError(f"{where}: not valid JSON ({exc.msg} at char {exc.pos})") from None
    return value if value is not None else {}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


class _Resolver:
    """Turns a record's image path into a path relative to the data root, or says it is missing."""

    def __init__(self, root: Path, json_dir: Path) -> None:
        self.root = root.resolve()
        self.json_dir = json_dir.resolve()

    def __call__(self, raw: str) -> str | None:
        p = Path(raw)
        cands = [p] if p.is_absolute() else [self.root / p, self.json_dir / p]
        if not p.is_absolute() and len(p.parts) > 2 and p.parts[0] == "data":
            cands.append(self.json_dir / Path(*p.parts[2:]))  # data/single_turn/images/… next to the JSON
        for c in cands:
            if c.is_file():
                try:
                    return c.resolve().relative_to(self.root).as_posix()
                except ValueError:
                    return None
        return None


def task_from_record(rec: Mapping[str, Any], where: str, resolve: _Resolver, missing: list[str]) -> Task:
    """One converted-layout record → Task (see the module docstring)."""
    tid = str(rec.get("id") or rec.get("task_id") or "").strip()
    if not tid:
        raise VisualToolBenchError(f"{where}: the record has no 'id' (or 'task_id')")
    where = f"{where} (id {tid})"
    prompts = _as_list(rec.get("turn_prompts")) or _as_list(rec.get("prompt"))
    if not prompts or not all(isinstance(p, str) for p in prompts):
        raise VisualToolBenchError(f"{where}: 'turn_prompts' must be a non-empty list of strings")
    golds = _as_list(rec.get("turn_golden_answers")) or _as_list(rec.get("golden_answer"))
    trajs = _as_list(rec.get("turn_tool_trajectories")) or _as_list(rec.get("tool_trajectory"))
    rubric_turns = _as_list(rec.get("rubrics_by_turn")) or _as_list(rec.get("rubrics"))
    multi = len(prompts) > 1
    by_turn = [_as_list(x) for x in _as_list(rec.get("images_by_turn_paths"))]
    flat = _as_list(rec.get("image_paths")) or _as_list(rec.get("image"))
    extras = rec.get("toolsight_reference")
    if isinstance(extras, str):  # parquet rows carry it as a JSON string
        extras = _json_field(extras, f"{where}: toolsight_reference")
    turns: list[Turn] = []
    for t, prompt in enumerate(prompts):
        raw_imgs = (by_turn[t] if t < len(by_turn) else []) if multi else (flat or (by_turn[0] if by_turn else []))
        images: list[ImageRef] = []
        for raw in raw_imgs:
            rel = resolve(str(raw))
            if rel is None:
                missing.append(str(raw))
            else:
                images.append(ImageRef(path=rel))
        rub_raw = _json_field(rubric_turns[t] if t < len(rubric_turns) else {}, f"{where} turn {t + 1} rubrics")
        if not isinstance(rub_raw, Mapping):
            raise VisualToolBenchError(f"{where} turn {t + 1}: rubrics must be a JSON object {{rubric_id: {{...}}}}")
        try:
            rubrics = rubrics_from_official(rub_raw, f"{where} turn {t + 1}")
        except VisualToolBenchFormatError as exc:
            raise VisualToolBenchError(str(exc)) from None
        meta: dict[str, Any] = {}
        checks = {str(k): v["toolsight_check"] for k, v in rub_raw.items()
                  if isinstance(v, Mapping) and isinstance(v.get("toolsight_check"), Mapping)}
        if checks:
            meta["rubric_checks"] = checks
        flags = {str(k): str(v["final_answer"]) for k, v in rub_raw.items()
                 if isinstance(v, Mapping) and v.get("final_answer") is not None}
        if flags:
            meta["rubric_final_answer"] = flags
        traj_raw = trajs[t] if t < len(trajs) else ""
        if traj_raw:
            meta["tool_trajectory"] = traj_raw if isinstance(traj_raw, str) else json.dumps(traj_raw)
        if isinstance(extras, list) and t < len(extras) and isinstance(extras[t], Mapping):
            meta.update(dict(extras[t]))  # the generated set's reference solution (reference_calls, …)
        gold = golds[t] if t < len(golds) else None
        turns.append(Turn(prompt=prompt, images=images, answer=None if gold is None else str(gold),
                          answer_type="open", rubrics=rubrics, reference_steps=parse_tool_trajectory(traj_raw),
                          meta=meta))
    cat = str(rec.get("prompt_category") or "")
    focus = str(rec.get("eval_focus") or "")
    turncase = str(rec.get("turncase") or ("multi-turn" if multi else "single-turn"))
    tags = {"turncase": turncase, "domain": domain_of(cat), "prompt_category": cat, "eval_focus": focus,
            "task_category": task_category_of(focus)}
    meta_t: dict[str, Any] = {"source": where}
    if rec.get("num_turns") is not None and rec.get("num_turns") != len(prompts):
        meta_t["num_turns_field"] = rec.get("num_turns")
    return Task(id=tid, benchmark=BENCHMARK, turns=turns, tags=tags, meta=meta_t)


# ---------------------------------------------------------------------------------------- converted layout


def find_converted(path: Path) -> tuple[Path, list[Path]]:
    """(data root, dataset.json files) for a repo folder, its `data/` folder, or one dataset.json."""
    if path.is_file():
        if path.suffix != ".json":
            raise VisualToolBenchError(f"{path}: expected a dataset.json (or a folder holding data/)")
        split_dir = path.parent
        root = split_dir.parent.parent if split_dir.parent.name == "data" else split_dir.parent
        return root, [path]
    for data_dir, root in ((path / "data", path), (path, path.parent)):
        files = [data_dir / s / "dataset.json" for s in SPLITS if (data_dir / s / "dataset.json").is_file()]
        if files:
            return root, files
    return path, []


def _fingerprint(paths: Iterable[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def load_converted(path: Path) -> tuple[list[Task], Path, list[Path], list[str]]:
    """Tasks from the converted layout: (tasks, data root, json files, notes)."""
    root, files = find_converted(path)
    if not files:
        raise VisualToolBenchError(no_data_message(path))
    tasks: list[Task] = []
    notes: list[str] = []
    seen: set[str] = set()
    for f in files:
        try:
            records = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise VisualToolBenchError(f"{f}: not valid JSON (line {exc.lineno}: {exc.msg}); re-create it") from None
        except UnicodeDecodeError:
            raise VisualToolBenchError(f"{f}: not UTF-8 text; re-create it with download_dataset.py") from None
        if not isinstance(records, list):
            raise VisualToolBenchError(f"{f}: expected a JSON list of records (download_dataset.py's dataset.json)")
        missing: list[str] = []
        resolve = _Resolver(root, f.parent)
        for k, rec in enumerate(records):
            where = f"{f} record {k}"
            if not isinstance(rec, Mapping):
                raise VisualToolBenchError(f"{where}: expected a JSON object")
            try:
                task = task_from_record(rec, where, resolve, missing)
            except ValueError as exc:  # pydantic validation of the schema
                raise VisualToolBenchError(f"{where}: {exc}") from None
            if task.id in seen:
                raise VisualToolBenchError(f"{where}: duplicate id {task.id!r}")
            seen.add(task.id)
            tasks.append(task)
        if missing:
            raise VisualToolBenchError(
                f"{f}: {len(missing)} image(s) not found (e.g. {missing[0]}); image paths are relative to "
                f"{root} (the folder holding data/) — keep the images/ folders download_dataset.py wrote")
        notes.append(f"{f.relative_to(root) if f.is_relative_to(root) else f}: {len(records)} task(s)")
    for t in tasks:
        if "num_turns_field" in t.meta:
            notes.append(f"task {t.id}: num_turns = {t.meta['num_turns_field']} but {len(t.turns)} prompt(s); "
                         "toolsight runs every prompt (the reference loops num_turns times)")
    return tasks, root, files, notes


# ---------------------------------------------------------------------------------------- Hugging Face parquet


def no_data_message(path: Path | None) -> str:
    where = f"{path} has no data/single_turn/dataset.json, data/multi_turn/dataset.json or *.parquet; " if path else ""
    return (
        f"{where}VisualToolBench data: pass --data PATH with either the repo's converted layout (the folder "
        "holding data/single_turn/dataset.json and data/multi_turn/dataset.json with their images/ folders, "
        "made by download_dataset.py of github.com/xi1ngang/VisualToolBench) or a local copy of "
        f"https://huggingface.co/datasets/{HF_REPO} (its parquet files; needs `pip install pyarrow`). "
        "Without --data, toolsight downloads it when `huggingface_hub` and `pyarrow` are installed and you are online."
    )


def parquet_files(path: Path) -> list[Path]:
    if path.is_file() and path.suffix == ".parquet":
        return [path]
    if not path.is_dir():
        return []
    files = sorted(path.rglob("*.parquet"))
    test = [f for f in files if "test" in f.name]
    return test or files


def _save_image(value: Any, dest: Path) -> None:
    from PIL import Image

    data = value.get("bytes") if isinstance(value, Mapping) else value
    if not isinstance(data, bytes | bytearray):
        raise VisualToolBenchError(f"cannot read an image for {dest.name}: expected parquet image bytes")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(io.BytesIO(bytes(data))) as im:
        im.save(dest)  # re-saved as PNG (the extension), as download_dataset.py does


def convert_rows(rows: Iterable[Mapping[str, Any]], out: Path) -> Path:
    """Write HF rows in the converted layout under `out` (= download_dataset.py's conversion)."""
    samples: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    for row in rows:
        prompts = row.get("turn_prompts") or []
        split = "single_turn" if len(prompts) == 1 else "multi_turn"
        k = len(samples[split])
        rel_dir = f"data/{split}/images/sample_{k}"
        rec = {key: v for key, v in row.items() if key not in ("images", "images_by_turn")}
        paths: list[str] = []
        for i, img in enumerate(row.get("images") or []):
            _save_image(img, out / rel_dir / f"image_{i}.png")
            paths.append(f"{rel_dir}/image_{i}.png")
        rec["image_paths"] = paths
        by_turn: list[list[str]] = []
        for t, imgs in enumerate(row.get("images_by_turn") or []):
            tp: list[str] = []
            for i, img in enumerate(imgs or []):
                _save_image(img, out / rel_dir / f"turn_{t}_image_{i}.png")
                tp.append(f"{rel_dir}/turn_{t}_image_{i}.png")
            by_turn.append(tp)
        rec["images_by_turn_paths"] = by_turn
        samples[split].append(rec)
    for split, recs in samples.items():
        (out / "data" / split).mkdir(parents=True, exist_ok=True)
        tmp = out / "data" / split / "dataset.json.tmp"
        tmp.write_text(json.dumps(recs, indent=2, ensure_ascii=False, default=_json_default), encoding="utf-8")
        tmp.replace(out / "data" / split / "dataset.json")
    return out


def _json_default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    return str(o)


def read_parquet(files: list[Path]) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise VisualToolBenchError(
            f"reading the Hugging Face parquet files ({files[0]}) needs pyarrow: `pip install pyarrow`, or "
            "convert them with download_dataset.py and pass the converted folder") from None
    rows: list[dict[str, Any]] = []
    for f in files:
        try:
            rows.extend(pq.read_table(f).to_pylist())
        except Exception as exc:
            raise VisualToolBenchError(f"{f}: not a readable parquet file ({type(exc).__name__}: {exc})") from None
    return rows


def cache_root() -> Path:
    return dataset_cache_root() / BENCHMARK


def convert_parquet(files: list[Path], cache: Path | None = None) -> Path:
    """The converted layout of parquet `files`, made once in the cache (keyed by the files' content)."""
    key = _fingerprint(files)
    out = (cache or cache_root()) / f"converted-{key}"
    if all((out / "data" / s / "dataset.json").is_file() for s in SPLITS):
        return out
    tmp = out.with_name(out.name + ".partial")
    convert_rows(read_parquet(files), tmp)
    if out.exists():
        import shutil

        shutil.rmtree(out)
    tmp.rename(out)
    return out


def download(cache: Path | None = None) -> list[Path]:
    """The test-split parquet files of `ScaleAI/VisualToolBench` from the Hub (optional dependency)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise VisualToolBenchError(no_data_message(None) + " (huggingface_hub is not installed)") from None
    target = (cache or cache_root()) / "hf"
    try:
        snapshot_download(repo_id=HF_REPO, repo_type="dataset", local_dir=str(target),
                          allow_patterns=["*.parquet", "**/*.parquet", "README.md"])
    except Exception as exc:  # offline, gated, disk full: one message
        raise VisualToolBenchError(
            f"could not download {HF_REPO} ({type(exc).__name__}: {exc}); check the connection, or download "
            "it yourself and pass --data PATH") from None
    files = parquet_files(target)
    if not files:
        raise VisualToolBenchError(f"the download of {HF_REPO} into {target} has no parquet files")
    return files
