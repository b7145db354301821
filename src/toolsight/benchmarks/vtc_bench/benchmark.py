"""VTC-Bench as a benchmark: its data (`data.py`), settings (`settings.py`), official loop
(`loop.py`), tools only it offers (`tools/`), scorer (`scorer.py`), generated sets (`generate/`) and
task catalogue (`taxonomy.py`), declared on one `Benchmark` class.
"""

from __future__ import annotations

from pathlib import Path

from toolsight.agents.registry import Solver
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.base import Benchmark, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import GenerateRequest, Generator, StarterContext, StarterPart
from toolsight.benchmarks.vtc_bench.data import (
    BENCHMARK,
    GT_TSV,
    HF_REPO,
    MAIN_TSV,
    VTCBenchError,
    find_files,
    fingerprint,
    load_vtc_bench,
)
from toolsight.benchmarks.vtc_bench.settings import DEFAULT_SETTING, SETTINGS, to_agent_settings
from toolsight.benchmarks.vtc_bench.taxonomy import CATEGORY_ORDER, TOOL_GROUP_VOCABULARY
from toolsight.log.modes import scorer_mode as check_mode
from toolsight.models.base import Generate, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.dataset import DatasetError, load_dataset
from toolsight.tasks.schema import Task
from toolsight.tools.base import Tool
from toolsight.tools.operations import Vocabulary
from toolsight.tools.registry import ToolSet as ToolSetEntry


def _vtc_code_tools() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.code import toolsight_code_tools

    return toolsight_code_tools()


def _vtc_code_official() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.code import official_code_tools

    return official_code_tools()


def _vtc_interface_official() -> list[Tool]:
    from toolsight.benchmarks.vtc_bench.tools.interface import official_interface_tools

    return official_interface_tools()


VTC_TOOLSETS = {
    "vtc_code": ToolSetEntry("vtc_code", _vtc_code_tools,
                             "VTC-Bench code_interpreter (reasoning, code) on the sandbox kernel; images by file name",
                             needs_sandbox=True),
    "vtc_code_official": ToolSetEntry(
        "vtc_code_official", _vtc_code_official,
        "VTC-Bench's code_interpreter as the driver runs it: Jupyter output blocks, served images, 30 s alarm "
        "(official loop)", needs_sandbox=True),
    "vtc_interface_official": ToolSetEntry(
        "vtc_interface_official", _vtc_interface_official,
        "the 35 opencv_* tools exactly as VTC-Bench's driver offers them (paths, reference texts; official loop)"),
}


#: the seed of the VTC-style tasks in the starter suite
STARTER_SEED = 7


def _write_generated(req: GenerateRequest) -> None:
    from toolsight.benchmarks.vtc_bench.generate import generate_vtc

    generate_vtc(req.kind.removeprefix("vtc-"), req.n, req.seed, req.out, progress=req.progress)


def _starter_tasks(ctx: StarterContext) -> list[Task]:
    """Two tasks of each kind (8), solved by chaining the OpenCV interface tools."""
    from toolsight.benchmarks.vtc_bench.generate import vtc_starter

    return vtc_starter(ctx.folder, seed=STARTER_SEED)


class VTCBenchmark(Benchmark):
    name = BENCHMARK
    description = "VTC-Bench (680 tasks, 9 categories): compositional OpenCV tool chaining"
    default_setting = DEFAULT_SETTING
    # the prompt is the question with its "Options:" block (taxonomy.question_with_options): whole as the
    # question text, or without the block and the options apart (docs/agents.md)
    question_view = QuestionView(text="{prompt}", question="{prompt_without_options}")
    category_order = {"category": list(CATEGORY_ORDER)}  # noqa: RUF012 - the paper's Table 4 order
    task_kinds = ("vtc-synth",)

    def generators(self) -> dict[str, Generator]:
        from toolsight.benchmarks.vtc_bench.generate import KIND_NAMES

        return {f"vtc-{name}": Generator(
            f"vtc-{name}", "VTC-Bench style: MC question, degraded image, reference OpenCV tool chain",
            _write_generated, setting="opencv") for name in KIND_NAMES}

    def starter_parts(self) -> list[StarterPart]:
        return [StarterPart(folder="vtc", make=_starter_tasks)]

    def settings(self) -> dict[str, AgentSettings]:
        return {k: to_agent_settings(v) for k, v in SETTINGS.items()}

    def with_loop(self, settings: AgentSettings, loop: str) -> AgentSettings:
        return to_agent_settings(SETTINGS[settings.name], "official" if loop == "official" else "toolsight")

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        if settings.loop == "official" and settings.name in SETTINGS and settings.agent == "default":
            from toolsight.benchmarks.vtc_bench.loop import VTCOfficialAgent

            return VTCOfficialAgent(SETTINGS[settings.name], settings, model, generate)
        return super().make_agent(settings, model, generate)

    def vocabularies(self) -> list[Vocabulary]:
        """The tool groups of its tool-chain analysis (Fig. 6: Crop, Rotate, Zoom in, ...)."""
        return [TOOL_GROUP_VOCABULARY]

    def toolsets(self) -> dict[str, ToolSetEntry]:
        return dict(VTC_TOOLSETS)

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            raise VTCBenchError(
                f"vtc-bench needs --data PATH: the folder with {MAIN_TSV}, {GT_TSV} and images/ "
                f"(from https://huggingface.co/datasets/{HF_REPO})"
            )
        if data.is_dir() and (data / "tasks.jsonl").is_file():  # a generated set (`toolsight generate vtc-…`)
            try:
                ds = load_dataset(data)
            except DatasetError as exc:
                raise VTCBenchError(str(exc)) from None
            return LoadedTasks(ds.tasks, ds.root, str(ds.root.resolve()), ds.fingerprint())
        tasks, report = load_vtc_bench(data)
        summary = report.summary()  # the runner prints the notes
        files = [Path(report.main_file)] + ([Path(report.gt_file)] if report.gt_file else [])
        _, _, root = find_files(Path(data))
        return LoadedTasks(
            tasks=tasks, root=root, source=str(report.main_file), fingerprint=fingerprint(files),
            notes=summary.splitlines(),
        )

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.vtc_bench.scorer import make_scorer

        return make_scorer(check_mode(mode))

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.vtc_bench.scorer import SCORERS

        return dict(SCORERS)
