"""PhysToolBench: loaders, settings, the official single-call loop, scorer choice and table layout.

Data (`--data PATH`, or the Hugging Face dataset `zhangzixin02/PhysToolBench` downloaded when online):
- the Hugging Face layout: parquet files (`data/train-*.parquet`) with columns `id` ('Easy_0001'),
  `difficulty`, `task_id`, `image` ({bytes, path}), `correct_tool`, `cot_prompt`, `no_cot_prompt`; the
  images are written once into toolsight's cache (`$TOOLSIGHT_CACHE/phystoolbench/images-<hash>/`);
- the older GitHub layout: `dataset/image-task/<level>/tasks.json` (`id, image_path, correct_tool,
  cot_prompt, no_cot_prompt, category`) with `annotated/<id>_0.png`; it adds the scene category;
- a toolsight dataset folder (`tasks.jsonl`), e.g. generated scenes (`toolsight generate phystool`).
Tags: `difficulty` (Easy, Medium-M1/M2/M3, Hard), `category` (as stored), `scene` (the paper's four:
Professional, Industrial, Outdoor, Daily; only the older layout has it).

Settings: `cot` (default) and `no-cot` send the stored prompt and the image in one user message, as
`src/inference.py` + `src/model_api.py` do (text first, then the PNG; RGBA converted to RGB;
temperature 0, max 8,192 tokens; no system prompt). `both` runs the two independent calls per item as
the official `--mode both`: each item becomes two records (`<id>@cot`, `<id>@no-cot`, tag
`prompt`), so every metric, CI and table works unchanged and reports show one row per prompt. `vcr` is
the paper's Vision-Centric Reasoning agent on the CoT prompt. `tools` (toolsight mode) is the tool
loop with detection, OCR and crop on the CoT prompt — what the generated scenes are solved with.
Scoring: the official CoT parse / raw no-CoT comparison, or the `corrected` mode that forgives
formatting only (`toolsight.benchmarks.phystoolbench.scorer`).
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight.agents.registry import Generate, Solver
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks, ScorerFactory
from toolsight.log.modes import scorer_mode
from toolsight.log.trajectory import Trajectory, TurnResult
from toolsight.models.base import GenerateConfig, ImagePart, Message, Model, ModelError, TextPart
from toolsight.scoring.base import Scorer
from toolsight.tasks.schema import ImageRef, Task, Turn
from toolsight.tools.base import Artifact, Toolbox

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


def scene_of(category: str) -> str | None:
    """The paper's scene (Professional, Industrial, Outdoor, Daily) for a stored category string."""
    c = category.lower()
    if "professional" in c:
        return "Professional"
    if any(w in c for w in ("manufactur", "repair", "industr")):
        return "Industrial"
    if "outdoor" in c:
        return "Outdoor"
    if "daily" in c:
        return "Daily"
    return None


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
        from toolsight.benchmarks.starter.benchmark import cache_root

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


# --------------------------------------------------------------------------- the official loop


class OfficialAgent:
    """One call per task, laid out as `model_api.py` sends it: the prompt, then the image as PNG."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate) -> None:
        self.model = model
        self.settings = settings
        self.generate = generate

    @staticmethod
    def png_part(art: Artifact, toolbox: Toolbox) -> ImagePart:
        """The image re-encoded as the official client does: PIL, RGBA -> RGB, saved as PNG."""
        src = toolbox.store.path(art)
        dest_dir = toolbox.store.workspace / ".sent"
        dest_dir.mkdir(exist_ok=True)
        dest = dest_dir / f"{art.id}.official.png"
        if not dest.exists():
            with Image.open(src) as im:
                img = im.convert("RGB") if im.mode == "RGBA" else im.copy()
            img.save(dest, format="PNG")
        return ImagePart(path=str(dest), artifact_id=art.id, mime="image/png")

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        from toolsight.agents.answer import extract_answer
        from toolsight.agents.loop import TaskFailed, render_prompt

        traj = Trajectory()
        for ti, turn in enumerate(task.turns):
            images = [inputs[i.path] for i in turn.images if i.path in inputs]
            text = render_prompt(self.settings, turn, [a.file for a in images])
            user = Message(role="user", content=[TextPart(text=text), *[self.png_part(a, toolbox) for a in images]])
            traj.messages.append(user)
            try:
                out = await self.generate([user], [], self.settings.generate)
            except ModelError as exc:
                traj.stop_reason = "model_error"
                traj.turns.append(TurnResult(index=ti, stop_reason="model_error", rounds=1,
                                             seen_images=[a.id for a in images]))
                traj.artifacts = toolbox.store.all()
                raise TaskFailed(f"model error: {exc}", traj) from exc
            traj.model_calls += 1
            traj.usage = traj.usage + out.usage
            traj.cache_hits += int(out.cached)
            traj.messages.append(out.message)
            response = out.message.text
            traj.turns.append(TurnResult(
                index=ti, response=response, answer=extract_answer(response, self.settings.answer_format),
                stop_reason="answered" if response.strip() else "no_answer", rounds=1,
                seen_images=[a.id for a in images]))
        traj.artifacts = toolbox.store.all()
        if traj.turns:
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj


# --------------------------------------------------------------------------- settings


def _official(name: str, prompt_field: str) -> AgentSettings:
    return AgentSettings(name=name, loop="official", user_template="{" + prompt_field + "}", tools=[],
                         answer_format="raw", max_rounds=1, max_tool_calls=0, max_image_pixels=None,
                         generate=OFFICIAL_GENERATE)


def phystool_settings() -> dict[str, AgentSettings]:
    return {
        "cot": _official("cot", "cot_prompt"),
        "no-cot": _official("no-cot", "no_cot_prompt"),
        "both": _official("both", "prompt"),
        "vcr": AgentSettings(name="vcr", agent="vcr", user_template="{cot_prompt}", tools=["detect"],
                             answer_format="raw", generate=OFFICIAL_GENERATE),
        "tools": AgentSettings(name="tools", user_template="{cot_prompt}", tools=["perception", "crop"],
                               answer_format="raw", max_tool_calls=30, max_rounds=20, generate=OFFICIAL_GENERATE),
    }


def expand_both(tasks: Iterable[Task]) -> list[Task]:
    """Each item as two tasks, CoT and no-CoT (the official `--mode both`): ids `<id>@cot`, `<id>@no-cot`."""
    out: list[Task] = []
    for t in tasks:
        for variant, field, scorer_setting in (("cot", "cot_prompt", "cot"), ("no-cot", "no_cot_prompt", "no_cot")):
            turns = []
            for turn in t.turns:
                prompt = turn.meta.get(field)
                if not isinstance(prompt, str):
                    raise PhysToolBenchError(f"task {t.id}: no {field} to run the 'both' setting with")
                turns.append(turn.model_copy(update={"prompt": prompt,
                                                     "meta": {**turn.meta, "setting": scorer_setting}}))
            out.append(t.model_copy(update={"id": f"{t.id}@{variant}", "turns": turns,
                                            "tags": {**t.tags, "prompt": variant},
                                            "meta": {**t.meta, "item": t.id}}))
    return out


# --------------------------------------------------------------------------- the benchmark


class PhysToolBenchmark(Benchmark):
    name = BENCHMARK
    description = "PhysToolBench (1,012 items, 5 levels): physical tool understanding; CoT / no-CoT / VCR"
    default_setting = "cot"
    category_order = {"difficulty": LEVELS, "scene": SCENES}  # noqa: RUF012 - the paper's Table 1 order
    report_tags = ["difficulty", "scene"]  # noqa: RUF012
    row_tag = "prompt"
    group_cis = True
    reference_rows = {"difficulty": HUMAN_ROWS, "scene": HUMAN_ROWS}  # noqa: RUF012

    def settings(self) -> dict[str, AgentSettings]:
        return phystool_settings()

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            from toolsight.benchmarks.starter.benchmark import cache_root

            data = download(cache_root() / "phystoolbench" / "hf")
        root, tasks, layout = load_any(data)
        h = hashlib.sha256("".join(t.model_dump_json() for t in tasks).encode()).hexdigest()[:16]
        levels = {lv: sum(1 for t in tasks if t.tags.get("difficulty") == lv) for lv in LEVELS}
        counts = ", ".join(f"{k} {v}" for k, v in levels.items() if v)
        return LoadedTasks(tasks, root, str(data.resolve()), h,
                           notes=[f"PhysToolBench ({layout} layout): {len(tasks)} tasks: {counts}"])

    def tasks_for(self, setting: str, tasks: Sequence[Task]) -> Sequence[Task]:
        return expand_both(tasks) if setting == "both" else tasks

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.phystoolbench.scorer import PhysToolScorer

        return PhysToolScorer(scorer_mode(mode), "no_cot" if setting == "no-cot" else "cot")

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.phystoolbench.scorer import SCORERS

        return dict(SCORERS)

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        if settings.loop == "official" and settings.agent == "default":
            return OfficialAgent(model, settings, generate)
        return super().make_agent(settings, model, generate)

    def record_extra(self, task: Task) -> dict[str, Any]:
        extra = {**super().record_extra(task), "item": task.meta.get("item", task.id)}
        extra.pop("reference_chain_lengths", None)  # no reference tool chains in this benchmark
        return extra
