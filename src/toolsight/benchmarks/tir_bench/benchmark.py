"""TIR-Bench as a runnable benchmark: the official release (or generated tasks), its settings and scorer.

Settings are the paper's three (App. D): `direct`, `code` (a code interpreter), `function`
(the predefined `rotate_image(degrees)`), each with prompt strategies 1–3 — named `code`, `code-s2`,
`code-s3`, `function`, `function-s2`, `function-s3` — and Table 2's agent-framework rows `pyvision`
and `deepeyes` (those agents, scored with the paper's GPT extraction; docs/agents.md). A strategy
appends its sentence to the question; its feedback sentence follows tool results. Settings default to the `official` loop
(`benchmarks/tir_official.py`: feedback after every tool result, App. E generation settings for open
models, no toolsight caps, a stateful interpreter — the sandbox kernel (`tir_code.py`), OpenAI's hosted
one for OpenAI models); `--loop toolsight` gives the generic loop with VisualToolBench's code tools,
image budget and downscaling.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import Field

from toolsight.agents.registry import Solver
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.base import Benchmark, BenchmarkError, BenchmarkOptions, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import GenerateRequest, Generator, StarterContext, StarterPart
from toolsight.benchmarks.tir_bench.data import SETTINGS, TASK_NAMES, TirBenchError, load_tir_bench
from toolsight.log.modes import scorer_mode as check_mode
from toolsight.models.base import Generate, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.dataset import DatasetError, load_dataset
from toolsight.tasks.schema import Task
from toolsight.tools.base import Tool
from toolsight.tools.registry import ToolSet as ToolSetEntry

TOOLSETS = {"direct": [], "code": ["python"], "function": ["rotate_image"]}
# official: a stateful interpreter on the sandbox kernel (variables persist across calls, as in the
# paper's code-interpreter runs; shown images come back), with a description after App. D (tir_code.py)
OFFICIAL_TOOLSETS = {"direct": [], "code": ["tir_code"], "function": ["rotate_image"]}
OFFICIAL_MAX_ROUNDS = 100  # the paper has no cap (o3 took ~55 iterations); a safety stop only


def tir_settings(loop: str = "official") -> dict[str, AgentSettings]:
    out: dict[str, AgentSettings] = {}
    official = loop == "official"
    for name, spec in SETTINGS.items():
        for number, strat in spec.strategies.items():
            key = name if number == 1 else f"{name}-s{number}"
            suffix = strat.suffix.replace("{", "{{").replace("}", "}}")
            caps: dict[str, Any] = {"max_tool_calls": 20, "max_rounds": 20}
            if official:
                caps = {"max_tool_calls": OFFICIAL_MAX_ROUNDS * 10, "max_rounds": OFFICIAL_MAX_ROUNDS,
                        "time_limit_s": None, "max_images_in_context": None, "max_image_pixels": None}
            out[key] = AgentSettings(
                name=key,
                loop="official" if official else "toolsight",
                user_template="{prompt}" + suffix,
                tools=list((OFFICIAL_TOOLSETS if official else TOOLSETS)[name]),
                answer_format="raw",
                tool_image_note=strat.feedback or "Here are the images produced by tool call {call_id}.",
                **caps,
            )
    out.update(framework_settings(loop))
    return out


#: Table 2's tool-using framework rows: PyVision (GPT-4.1 driving it) and DeepEyes (its RL-trained checkpoint)
FRAMEWORK_ROWS = ("pyvision", "deepeyes")


def framework_settings(loop: str = "official") -> dict[str, AgentSettings]:
    """`pyvision` and `deepeyes`: the agent of that name with its own prompt, tool and loop (docs/agents.md),
    scored with the paper's GPT extraction (`tir-bench-llm`: pass --judge). PyVision has no turn limit:
    `max_rounds` is a safety stop only; DeepEyes makes at most 11 model calls by itself."""
    official = loop == "official"
    return {name: AgentSettings(name=name, agent=name, loop="official" if official else "toolsight",
                                user_template="{prompt}", answer_format="raw", tools=[],
                                max_rounds=OFFICIAL_MAX_ROUNDS, time_limit_s=None,
                                max_images_in_context=None, max_image_pixels=None)
            for name in FRAMEWORK_ROWS}


def _tir_code_tools() -> list[Tool]:
    from toolsight.benchmarks.tir_bench.tools import tir_code_tools

    return list(tir_code_tools())


def _rotate_tools() -> list[Tool]:
    from toolsight.benchmarks.tir_bench.tools import rotate_tools

    return rotate_tools()


TIR_TOOLSETS = {
    "rotate_image": ToolSetEntry("rotate_image", _rotate_tools, "TIR-Bench's predefined rotate_image(degrees)"),
    "tir_code": ToolSetEntry("tir_code", _tir_code_tools,
                             "TIR-Bench code_interpreter(code): a stateful IPython kernel in the sandbox (official loop)",
                             needs_sandbox=True),
}


def _strategy_feedback(setting: str) -> str | None:
    name, _, num = setting.partition("-s")
    spec = SETTINGS.get(name)
    if spec is None:
        return None
    return spec.strategy(int(num) if num.isdigit() else 1).feedback


class TIROptions(BenchmarkOptions):
    """TIR-Bench's own run options (`-B KEY=VALUE`)."""

    demo_prompts: Path | None = Field(
        default=None, description="your copy of TIR-Bench's demo_prompts.py: the few-shot demos of the "
        "tir-bench-llm answer extractor (not bundled: the repository has no licence)")


def _code_setting(settings: AgentSettings) -> bool:
    """The `code` setting and its strategies (`code-s2`, …): the paper's code-interpreter rows."""
    return settings.name.startswith("code")


def _write_generated(req: GenerateRequest) -> None:
    from toolsight.benchmarks.tir_bench.generate import generate

    generate(req.kind, req.n, req.seed, req.out, difficulty=req.difficulty, progress=req.progress)


def _starter_tasks(ctx: StarterContext) -> list[Task]:
    """Every generator at every difficulty (63 tasks), solved by Python in the sandbox."""
    from toolsight.benchmarks.tir_bench.generate import STARTER_SEED, starter_suite

    return starter_suite(ctx.folder, seed=STARTER_SEED)


class TIRBenchmark(Benchmark):
    name = "tir-bench"
    description = ("TIR-Bench (13 tasks, 1,215 items): official TIR-Bench.json + data/ via --data, "
                   "or a generated toolsight dataset folder")
    default_setting = "code"
    # the prompt lists its options ("A. x" lines; parsed into Turn.options for letter answers): agents with
    # their own template get it whole as the question text (PyVision), or without them and the options apart
    # (DeepEyes' "Options:"); docs/agents.md
    question_view = QuestionView(text="{prompt}", question="{prompt_without_options}")
    task_kinds = ("tir-bench-synth",)
    Options = TIROptions
    #: the paper's Table 2 column order (Color, Pro., OCR, SR, Maze, Math, WS, LL-VQA, IR, SD, JG, VS, RG)
    category_order = {"task": list(TASK_NAMES), "task_name": list(TASK_NAMES.values())}  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__()
        self.few_shot: dict[str, str] = {}

    def configure(self, options: dict[str, Any]) -> None:
        super().configure(options)
        path = getattr(self.options, "demo_prompts", None)
        if path is None:
            self.few_shot = {}
            return
        from toolsight.benchmarks.tir_bench.scorer import load_demo_prompts

        try:
            self.few_shot = load_demo_prompts(path)
        except ValueError as exc:
            raise BenchmarkError(f"-B demo_prompts: {exc}") from None

    def settings(self) -> dict[str, AgentSettings]:
        return tir_settings()

    def generators(self) -> dict[str, Generator]:
        from toolsight.benchmarks.tir_bench.generate import KINDS

        return {name: Generator(name, f"TIR-Bench style: {k.description}", _write_generated,
                                difficulties=k.difficulties,
                                difficulty_help=", ".join(str(d) for d in k.difficulties), setting="code")
                for name, k in KINDS.items()}

    def starter_parts(self) -> list[StarterPart]:
        from toolsight.benchmarks.tir_bench.generate import GENERATOR_VERSION

        return [StarterPart(folder="", make=_starter_tasks, version=GENERATOR_VERSION)]

    def with_loop(self, settings: AgentSettings, loop: str) -> AgentSettings:
        return tir_settings(loop)[settings.name]

    def toolsets(self) -> dict[str, ToolSetEntry]:
        return dict(TIR_TOOLSETS)

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        if settings.loop == "official" and settings.agent == "default":  # `--agent NAME` runs that agent
            from toolsight.benchmarks.tir_bench.loop import make_official_agent

            agent: Solver = make_official_agent(settings, model, generate, _strategy_feedback(settings.name),
                                                code_setting=_code_setting(settings))
            return agent
        return super().make_agent(settings, model, generate)

    def one_call_per_task(self, settings: AgentSettings, model: Model) -> bool:
        """The official `code` settings with an OpenAI model make one Responses API call per task (the
        hosted interpreter runs inside it), so plain `--batch` batches them."""
        if self._hosted(settings, model):
            return True
        return super().one_call_per_task(settings, model)

    @staticmethod
    def _hosted(settings: AgentSettings, model: Model) -> bool:
        from toolsight.benchmarks.tir_bench.loop import uses_hosted_interpreter

        return (settings.loop == "official" and settings.agent == "default" and _code_setting(settings)
                and uses_hosted_interpreter(model))

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            from toolsight.benchmarks.tir_bench.data import download_tir_bench
            from toolsight.tasks.dataset import cache_root

            try:
                data = download_tir_bench(cache_root() / "tir-bench")
            except TirBenchError as exc:
                raise BenchmarkError(
                    f"{exc}. A generated dataset folder works too (`toolsight generate jigsaw --out DIR`); "
                    "offline, try `toolsight run starter`."
                ) from None
        if (data / "tasks.jsonl").is_file():
            try:
                ds = load_dataset(data)
            except DatasetError as exc:
                raise BenchmarkError(str(exc)) from None
            return LoadedTasks(ds.tasks, ds.root, str(ds.root.resolve()), ds.fingerprint())
        try:
            root, tasks = load_tir_bench(data)
        except (TirBenchError, FileNotFoundError) as exc:
            raise BenchmarkError(str(exc)) from None
        h = hashlib.sha256("".join(t.model_dump_json() for t in tasks).encode()).hexdigest()[:16]
        return LoadedTasks(tasks, root, str(Path(root).resolve()), h)

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.tir_bench.scorer import TirScorer, make_scorer

        if setting in FRAMEWORK_ROWS:  # Table 2's rows: the paper's answer extraction (GPT-4o, --judge)
            return TirScorer(check_mode(mode), llm=True, few_shot=self.few_shot)
        return make_scorer(check_mode(mode), self.few_shot)

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.tir_bench.scorer import scorers

        return dict(scorers(self.few_shot))

    def record_extra(self, task: Task) -> dict[str, Any]:
        from toolsight.benchmarks.tir_bench.scorer import random_guess_accuracy

        return {**super().record_extra(task), "random_guess": random_guess_accuracy(task)}
