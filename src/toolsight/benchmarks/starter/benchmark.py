"""The built-in starter suite: ~75 generated tasks that run offline, with no API key.

TIR-Bench-style tasks from every generator and difficulty (solved by Python in the sandbox), a
handful of VTC-Bench-style tasks (solved by chaining OpenCV interface tools), PhysToolBench-style
scenes (solved with detection crops and OCR), five VisualToolBench-style tasks (single- and
multi-turn, one with a historical weather lookup, rubric-scored by deterministic checks) and a few
VisBrowse-style browsing tasks over a generated mini-web (served offline on 127.0.0.1 from `browse/corpus`). Generated on first use into
the user's cache (`$TOOLSIGHT_CACHE`, else `~/.cache/toolsight`) and reused after. Each task is
scored by its own benchmark's official rules (TIR-Bench, VTC-Bench, PhysToolBench, VisualToolBench
or VisBrowse-Bench).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, LoadedTasks
from toolsight.benchmarks.dataset.benchmark import GENERIC_SYSTEM
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.tasks.dataset import load_dataset, validate_dataset, write_dataset
from toolsight.tasks.schema import ImageRef, Task
from toolsight.tools.operations import Vocabulary

STARTER_VERSION = 5
VTC_SEED = 7
PHYSTOOL_SEED = 11
PHYSTOOL_TASKS = 4  # one per generated level (Easy, Medium-M1/M2/M3)
VTB_SEED = 11
#: the VisualToolBench-style kinds in the suite: the four image kinds and a weather follow-up that
#: reads the mini-web corpus's weather.json (no pages added: the browsing tasks' searches stay as verified)
VTB_KINDS = ["region_switch", "hybrid_chart", "progressive", "temporal", "weather"]
VTB_TASKS = len(VTB_KINDS)
BROWSE_SEED = 11
BROWSE_TASKS = 4
BROWSE_DIR = "browse"


def cache_root() -> Path:
    env = os.environ.get("TOOLSIGHT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "toolsight"


def build_starter(target: Path) -> Path:
    """Generate the combined suite into `target` (atomically)."""
    from toolsight.benchmarks.tir_bench.generate import STARTER_SEED, starter_suite
    from toolsight.benchmarks.visbrowse_bench.generate import generate_browse
    from toolsight.benchmarks.vtc_bench.generate import vtc_starter

    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".starter-", dir=target.parent))
    try:
        tasks = starter_suite(tmp, seed=STARTER_SEED)
        vtc_tasks = vtc_starter(tmp / "vtc", seed=VTC_SEED)
        for t in vtc_tasks:
            for turn in t.turns:
                turn.images = [ImageRef(path=f"vtc/{i.path}", role=i.role) for i in turn.images]
        from toolsight.benchmarks.phystoolbench.generate import generate_phystool

        phys_tasks = generate_phystool(PHYSTOOL_TASKS, PHYSTOOL_SEED, tmp / "phystool", write=False)
        for t in phys_tasks:
            for turn in t.turns:
                turn.images = [ImageRef(path=f"phystool/{i.path}", role=i.role) for i in turn.images]
        browse_tasks = generate_browse(BROWSE_TASKS, BROWSE_SEED, tmp / BROWSE_DIR)
        vtb_tasks = _vtb_tasks(tmp / "vtb", tmp / BROWSE_DIR / "corpus")
        (tmp / BROWSE_DIR / "tasks.jsonl").unlink()  # the combined tasks.jsonl lists them
        for t in browse_tasks:
            for turn in t.turns:
                turn.images = [ImageRef(path=f"{BROWSE_DIR}/{i.path}", role=i.role) for i in turn.images]
        write_dataset(tmp, tasks + vtc_tasks + phys_tasks + vtb_tasks + browse_tasks)
        problems = validate_dataset(tmp)
        if problems:
            raise RuntimeError("generated starter suite is invalid: " + "; ".join(map(str, problems[:5])))
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _vtb_tasks(folder: Path, corpus: Path) -> list[Task]:
    """VisualToolBench-style tasks, generated in its official layout and read by its loader; their web
    material (recorded weather) goes into the suite's one offline corpus."""
    from toolsight.benchmarks.visualtoolbench.data import load_converted
    from toolsight.benchmarks.visualtoolbench.generate import generate_vtb

    generate_vtb(VTB_TASKS, VTB_SEED, folder, kinds=VTB_KINDS, corpus=corpus)
    tasks, _, _, _ = load_converted(folder)
    for t in tasks:
        for turn in t.turns:
            turn.images = [ImageRef(path=f"vtb/{i.path}", role=i.role) for i in turn.images]
    return tasks


def ensure_starter(cache: Path | None = None) -> Path:
    from toolsight.benchmarks.tir_bench.generate import GENERATOR_VERSION

    target = (cache or cache_root()) / f"starter-suite-v{STARTER_VERSION}.{GENERATOR_VERSION}"
    if (target / "tasks.jsonl").is_file() and not validate_dataset(target):
        return target
    return build_starter(target)


class StarterScorer:
    """Each task by its own benchmark's official rules."""

    name = "starter"

    def __init__(self, mode: str) -> None:
        from toolsight.benchmarks.registry import get_scorer

        self.tir: Scorer = get_scorer("tir-bench", mode=mode)
        self.vtc: Scorer = get_scorer("vtc-bench", mode=mode)
        self.phystool: Scorer = get_scorer("phystoolbench", mode=mode)
        self.vtb: Scorer = get_scorer("visualtoolbench", mode=mode)
        self.browse: Scorer = get_scorer("visbrowse", mode=mode)

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        if task.benchmark.startswith("phystool"):
            return await self.phystool.score(task, responses, ctx)
        if task.benchmark == "visualtoolbench":  # rubric checks (no judge): see scoring.rubric_check
            return await self.vtb.score(task, responses, ctx)
        scorer = (self.vtc if task.benchmark.startswith("vtc") else
                  self.browse if task.benchmark.startswith("visbrowse") else self.tir)
        return await scorer.score(task, responses, ctx)


class StarterBenchmark(Benchmark):
    name = "starter"
    description = "the built-in offline suite: generated TIR- and VTC-style tasks (no network, no API key)"
    default_setting = "tools"

    def settings(self) -> dict[str, AgentSettings]:
        tools_note = ("You may call the tools you are given: Python over the image in a sandbox, OpenCV "
                      "operations, object detection with crops and OCR on images by id, web search, page "
                      "visits and image crops (an image id works wherever an image URL is asked for), and "
                      "historical weather lookups; you will see the images they produce. ")
        return {
            "tools": AgentSettings(name="tools", system_prompt=GENERIC_SYSTEM.format(tools=tools_note),
                                   tools=["python", "opencv", "perception", "browse", "historical_weather"],
                                   answer_format="answer_tag"),
            "direct": AgentSettings(name="direct", system_prompt=GENERIC_SYSTEM.format(tools=""), tools=[],
                                    answer_format="answer_tag"),
        }

    def load(self, data: Path | None) -> LoadedTasks:
        root = data if data is not None else ensure_starter()
        ds = load_dataset(root)
        digest = hashlib.sha256((root / "tasks.jsonl").read_bytes()).hexdigest()[:16]
        corpus = root / BROWSE_DIR / "corpus"
        return LoadedTasks(ds.tasks, ds.root, str(root.resolve()), digest,
                           web_corpus=corpus if (corpus / "manifest.json").is_file() else None)

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        return StarterScorer(mode)

    def vocabularies(self) -> list[Vocabulary]:
        """Both operation vocabularies: the suite holds VisualToolBench- and VTC-Bench-style tasks
        (its TIR-, PhysToolBench- and VisBrowse-style tasks come from benchmarks that declare none)."""
        from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
        from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY

        return [CATEGORY_VOCABULARY, TOOL_GROUP_VOCABULARY]

    def record_extra(self, task: Task) -> dict[str, Any]:
        from toolsight.benchmarks.tir_bench.scorer import random_guess_accuracy

        return {**super().record_extra(task), "random_guess": random_guess_accuracy(task)}
