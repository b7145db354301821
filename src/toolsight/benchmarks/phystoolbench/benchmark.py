"""PhysToolBench as a benchmark: settings, scorer choice, table layout, generated sets.

Settings: `cot` (default) and `no-cot` send the stored prompt and the image in one user message, as
`src/inference.py` + `src/model_api.py` do (the official loop, `loop.py`: text first, then the PNG;
RGBA converted to RGB; temperature 0, max 8,192 tokens; no system prompt). `both` runs the two
independent calls per item as the official `--mode both`: each item becomes two records (`<id>@cot`,
`<id>@no-cot`, tag `prompt`), so every metric, CI and table works unchanged and reports show one
row per prompt. `vcr` is the paper's Vision-Centric Reasoning agent on the CoT prompt. `tools`
(toolsight mode) is the tool loop with detection, OCR and crop on the CoT prompt — what the
generated scenes are solved with. Scoring: the official CoT parse / raw no-CoT comparison, or the
`corrected` mode that forgives formatting only (`scorer.py`). Data: `data.py`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from toolsight.agents.registry import Solver
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.base import Benchmark, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import (
    GENERATED_FILE,
    GenerateRequest,
    Generator,
    StarterContext,
    StarterPart,
)
from toolsight.benchmarks.phystoolbench.data import (
    BENCHMARK,
    HUMAN_ROWS,
    LEVELS,
    OFFICIAL_GENERATE,
    SCENES,
    PhysToolBenchError,
    download,
    load_any,
)
from toolsight.benchmarks.phystoolbench.loop import OfficialAgent
from toolsight.log.modes import scorer_mode
from toolsight.models.base import Generate, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.schema import Task


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




#: the starter suite's PhysToolBench-style tasks: one per generated level (Easy, Medium-M1/M2/M3)
STARTER_SEED = 11
#: the default setting for a generated set (`toolsight generate phystool`): the official settings offer
#: no tools, and its reference solutions detect the objects and read their numbers (detection, OCR)
GENERATED_SETTING = "tools"
STARTER_TASKS = 4


def _write_generated(req: GenerateRequest) -> None:
    from toolsight.benchmarks.phystoolbench.generate import LEVELS as GENERATED_LEVELS
    from toolsight.benchmarks.phystoolbench.generate import generate_phystool

    level = GENERATED_LEVELS[req.difficulty] if req.difficulty is not None else None
    generate_phystool(req.n, req.seed, req.out, level=level, progress=req.progress)


def _starter_tasks(ctx: StarterContext) -> list[Task]:
    """Generated scenes solved with detection crops and OCR."""
    from toolsight.benchmarks.phystoolbench.generate import generate_phystool

    return generate_phystool(STARTER_TASKS, STARTER_SEED, ctx.folder, write=False)


class PhysToolBenchmark(Benchmark):
    name = BENCHMARK
    description = "PhysToolBench (1,012 items, 5 levels): physical tool understanding; CoT / no-CoT / VCR"
    default_setting = "cot"
    # the prompt is the CoT prompt: the question, the rules and the "### Answer" format the official parse
    # reads; agents with their own template get all of it (no options: objects are numbered in the image)
    question_view = QuestionView(text="{prompt}", question="{prompt}")
    category_order = {"difficulty": LEVELS, "scene": SCENES}  # noqa: RUF012 - the paper's Table 1 order
    report_tags = ["difficulty", "scene"]  # noqa: RUF012
    row_tag = "prompt"
    group_cis = True
    reference_rows = {"difficulty": HUMAN_ROWS, "scene": HUMAN_ROWS}  # noqa: RUF012
    task_kinds = ("phystoolbench-synth",)

    def generators(self) -> dict[str, Generator]:
        from toolsight.benchmarks.phystoolbench.generate import LEVELS as GENERATED_LEVELS

        levels = tuple(range(len(GENERATED_LEVELS)))
        return {"phystool": Generator(
            "phystool", "PhysToolBench style: numbered toy tools, a job, answer = object numbers or None; "
            "difficulty 0-3 = Easy, Medium-M1/M2/M3", _write_generated, difficulties=levels,
            difficulty_help=", ".join(f"{i} = {lv}" for i, lv in enumerate(GENERATED_LEVELS)),
            run_with_benchmark=True, benchmark_setting=GENERATED_SETTING)}

    def starter_parts(self) -> list[StarterPart]:
        return [StarterPart(folder="phystool", make=_starter_tasks)]

    def settings(self) -> dict[str, AgentSettings]:
        return phystool_settings()

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            from toolsight.tasks.dataset import cache_root

            data = download(cache_root() / "phystoolbench" / "hf")
        root, tasks, layout = load_any(data)
        if (Path(data) / GENERATED_FILE).is_file():  # a generated set: its reference detects and reads numbers
            self.default_setting = GENERATED_SETTING
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
