"""The built-in starter suite: generated tasks of every built-in benchmark that run offline, with no
API key.

Each built-in benchmark contributes its part (`Benchmark.starter_parts()`): TIR-Bench-style tasks
from every generator and difficulty (solved by Python in the sandbox), VTC-Bench-style tasks (solved
by chaining OpenCV interface tools), PhysToolBench-style scenes (detection crops and OCR),
VisualToolBench-style tasks (single- and multi-turn, one with a historical weather lookup,
rubric-scored by deterministic checks) and VisBrowse-style browsing tasks over a generated mini-web
(served offline on 127.0.0.1 from the suite's `corpus/`). Generated on first use into the user's
cache (`$TOOLSIGHT_CACHE`, else `~/.cache/toolsight`) and reused after. Each task is scored, and its
record filled, by the benchmark that owns it (`Benchmark.owns`), under its official rules.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolsight.agents.prompts import ANSWER_TAG_SYSTEM
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkError, LoadedTasks
from toolsight.benchmarks.offline import StarterContext, StarterPart
from toolsight.scoring.base import Score, ScoreContext, Scorer
from toolsight.tasks.dataset import cache_root, load_dataset, validate_dataset, write_dataset
from toolsight.tasks.schema import ImageRef, Task
from toolsight.tools.operations import Vocabulary

#: bump when the suite's layout changes (its parts' own versions are in their generators)
STARTER_VERSION = 6
CORPUS_DIR = "corpus"
TOOLS_NOTE = ("You may call the tools you are given: Python over the image in a sandbox, OpenCV "
              "operations, object detection with crops and OCR on images by id, web search, page "
              "visits and image crops (an image id works wherever an image URL is asked for), and "
              "historical weather lookups; you will see the images they produce. ")


#: the benchmarks whose parts make the suite (the registry passes the other built-ins, in its order)
Contributors = Callable[[], Sequence[Benchmark]]


def _parts(contributors: Sequence[Benchmark]) -> list[tuple[str, StarterPart]]:
    """Every contributor's parts, in order."""
    return [(bench.name, part) for bench in contributors for part in bench.starter_parts()]


def _rebase(tasks: list[Task], folder: str) -> list[Task]:
    """The tasks with image paths relative to the suite's root instead of their part's folder."""
    if not folder:
        return tasks
    for t in tasks:
        for turn in t.turns:
            turn.images = [ImageRef(path=f"{folder}/{i.path}", role=i.role) for i in turn.images]
    return tasks


def build_starter(target: Path, contributors: Sequence[Benchmark]) -> Path:
    """Generate the combined suite into `target` (atomically)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".starter-", dir=target.parent))
    try:
        parts = _parts(contributors)
        made: dict[int, list[Task]] = {}
        # the part that builds the suite's web corpus first; the others may add to it
        for i, (_, part) in sorted(enumerate(parts), key=lambda ip: not ip[1][1].builds_corpus):
            folder = tmp / part.folder
            folder.mkdir(parents=True, exist_ok=True)
            made[i] = _rebase(part.make(StarterContext(folder=folder, corpus=tmp / CORPUS_DIR)), part.folder)
        write_dataset(tmp, [t for i in range(len(parts)) for t in made[i]])
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


def ensure_starter(contributors: Sequence[Benchmark], cache: Path | None = None) -> Path:
    """The suite in the cache, generated on first use."""
    versions = ",".join(f"{name}/{part.folder}/{part.version}" for name, part in _parts(contributors))
    key = hashlib.sha256(versions.encode()).hexdigest()[:8]
    target = (cache or cache_root()) / f"starter-suite-v{STARTER_VERSION}-{key}"
    if (target / "tasks.jsonl").is_file() and not validate_dataset(target):
        return target
    return build_starter(target, contributors)


def owner_of(task: Task, contributors: Sequence[Benchmark]) -> Benchmark:
    """The contributing benchmark that scores `task` (by its `Task.benchmark`)."""
    for bench in contributors:
        if bench.owns(task):
            return bench
    raise BenchmarkError(f"task {task.id}: no built-in benchmark scores tasks of kind {task.benchmark!r}")


class StarterScorer:
    """Each task by its own benchmark's scorer (that benchmark's default setting)."""

    name = "starter"

    def __init__(self, mode: str, contributors: Sequence[Benchmark]) -> None:
        self.mode = mode
        self.contributors = contributors
        self._scorers: dict[str, Scorer] = {}

    def _scorer(self, task: Task) -> Scorer:
        bench = owner_of(task, self.contributors)
        if bench.name not in self._scorers:
            self._scorers[bench.name] = bench.scorer(bench.default_setting, self.mode)
        return self._scorers[bench.name]

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        return await self._scorer(task).score(task, responses, ctx)


class StarterBenchmark(Benchmark):
    name = "starter"
    description = "the built-in offline suite: generated tasks of every built-in benchmark (no network, no API key)"
    default_setting = "tools"

    def __init__(self, contributors: Contributors) -> None:
        super().__init__()
        self._contributors = contributors
        self._made: Sequence[Benchmark] | None = None

    @property
    def contributors(self) -> Sequence[Benchmark]:
        """The benchmarks whose parts make the suite (built once, when first needed)."""
        if self._made is None:
            self._made = list(self._contributors())
        return self._made

    def settings(self) -> dict[str, AgentSettings]:
        return {
            "tools": AgentSettings(name="tools", system_prompt=ANSWER_TAG_SYSTEM.format(tools=TOOLS_NOTE),
                                   tools=["python", "opencv", "perception", "browse", "historical_weather"],
                                   answer_format="answer_tag"),
            "direct": AgentSettings(name="direct", system_prompt=ANSWER_TAG_SYSTEM.format(tools=""), tools=[],
                                    answer_format="answer_tag"),
        }

    def load(self, data: Path | None) -> LoadedTasks:
        root = data if data is not None else ensure_starter(self.contributors)
        ds = load_dataset(root)
        digest = hashlib.sha256((root / "tasks.jsonl").read_bytes()).hexdigest()[:16]
        corpus = root / CORPUS_DIR
        return LoadedTasks(ds.tasks, ds.root, str(root.resolve()), digest,
                           web_corpus=corpus if (corpus / "manifest.json").is_file() else None)

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        return StarterScorer(mode, self.contributors)

    def vocabularies(self) -> list[Vocabulary]:
        """The operation vocabularies of the benchmarks whose tasks the suite holds (each once)."""
        out: dict[str, Vocabulary] = {}
        for bench in self.contributors:
            for v in bench.vocabularies():
                out.setdefault(v.name, v)
        return list(out.values())

    def record_extra(self, task: Task) -> dict[str, Any]:
        options = task.turns[0].options if task.turns else None
        guess = 1.0 / len(options) if options else 0.0  # a uniform guess over the options
        return {**owner_of(task, self.contributors).record_extra(task), "random_guess": guess}
