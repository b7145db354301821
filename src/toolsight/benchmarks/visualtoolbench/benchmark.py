"""VisualToolBench (ScaleAI): the benchmark — data, the four settings, the official loop, scorer, tables.

Settings (paper §3.4, App. C.2): `strong` (default; the reference's `high` system prompt), `weak` (its
`low` prompt), `no-vision-tool` (strong prompt, every tool but `python_image_processing`) and `no-tools`
(no system prompt, no tools — as the reference's no-tool branch). Each runs the reference's loop
(`vtb_loop`, `loop: official`, the default) or toolsight's generic loop (`--cap loop=toolsight`).
Multi-turn tasks restart the tool loop every turn with a text-only history that uses the gold answers
(`--history model` for the model's own). Generation follows the reference driver: temperature 0, or
1.0 for model names containing o1 / o3 / o4-mini / gpt-5 (and with a thinking budget).

The web tools (`web_search` — `google_search` in the official loop —, `browser_get_page_text`,
`historical_weather`) run on `toolsight.web` (`--web live | offline=CORPUS | replay=RUN`); the official
loop shows their results as the reference's dicts (`vtb_web`), the toolsight loop as toolsight's texts.
A data folder with a `corpus/` (the generated demo) makes `--web offline` its default.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolsight.agents.registry import Solver, make_agent
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.base import Benchmark, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import GenerateRequest, Generator, StarterContext, StarterPart
from toolsight.benchmarks.visualtoolbench import data as D
from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
from toolsight.log.modes import scorer_mode as check_mode
from toolsight.log.toolspec import ToolSpec
from toolsight.models.base import Generate, GenerateConfig, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.schema import Task
from toolsight.tools.base import Tool
from toolsight.tools.operations import Vocabulary
from toolsight.tools.registry import ToolSet

BENCHMARK = D.BENCHMARK
#: the web layer's tool sets (tools/web_research.py); the official loop maps `web_search` to `google_search`
WEB_TOOLSETS: list[str] = ["web_search", "browser_get_page_text", "historical_weather"]
#: a data folder's offline web (pages, weather.json), the default for `--web` when present
CORPUS_DIR = "corpus"
VISION_TOOLSETS = ["vtb_python_image_processing"]
GENERAL_TOOLSETS = ["vtb_python_interpreter", "vtb_calculator"]


def _image_processing() -> list[Tool]:
    from toolsight.tools.python_tools import PythonImageProcessing

    return [PythonImageProcessing(description=P.PAPER_IMAGE_DESCRIPTION)]


def _interpreter() -> list[Tool]:
    from toolsight.tools.python_tools import PythonInterpreter, installed

    pkgs = installed(P.PAPER_PACKAGES)
    return [PythonInterpreter(description=P.PAPER_INTERPRETER_INTRO + "\n".join(f"    • {p}" for p in pkgs))]


def _calculator() -> list[Tool]:
    from toolsight.tools.calculator import Calculator

    return [Calculator(P.CALCULATOR_DESCRIPTION, P.CALCULATOR_PARAMETERS)]


#: the generic code tools and calculator with the paper's texts (App. D.4); the official loop shows the
#: reference code's descriptors instead (tools.py), matched by tool name
VTB_TOOLSETS = {
    "vtb_python_image_processing": ToolSet("vtb_python_image_processing", _image_processing,
                                           "python_image_processing with VisualToolBench's description (App. D.4)",
                                           needs_sandbox=True),
    "vtb_python_interpreter": ToolSet("vtb_python_interpreter", _interpreter,
                                      "python_interpreter only (VisualToolBench's general code tool)",
                                      needs_sandbox=True),
    "vtb_calculator": ToolSet("vtb_calculator", _calculator, "calculator with VisualToolBench's description"),
}


def _setting(name: str, system: str | None, tools: list[str]) -> AgentSettings:
    """One setting. Fields the official loop uses: system_prompt, tools, max_tool_calls (its round
    cap), history, generate; the rest configure the toolsight loop (`--cap loop=toolsight`)."""
    return AgentSettings(
        name=name, loop="official", system_prompt=system, tools=tools, answer_format="raw",
        max_tool_calls=P.MAX_TOOL_CALLS, max_rounds=P.MAX_TOOL_CALLS + 1, no_tools_on_last_round=bool(tools),
        send_images="all", history="gold", history_images=False, image_feedback="auto",
        tool_image_note=P.TOOL_IMAGE_NOTE, time_limit_s=None,
    )


def vtb_settings() -> dict[str, AgentSettings]:
    return {
        "strong": _setting("strong", P.SYSTEM_HIGH, [*VISION_TOOLSETS, *GENERAL_TOOLSETS, *WEB_TOOLSETS]),
        "weak": _setting("weak", P.SYSTEM_LOW, [*VISION_TOOLSETS, *GENERAL_TOOLSETS, *WEB_TOOLSETS]),
        "no-vision-tool": _setting("no-vision-tool", P.SYSTEM_HIGH, [*GENERAL_TOOLSETS, *WEB_TOOLSETS]),
        "no-tools": _setting("no-tools", None, []),
    }


def reference_generate(model_name: str, given: GenerateConfig, tools: bool) -> GenerateConfig:
    """The reference driver's request settings for a model, under any the user set (`--temperature` …).

    temperature 0.0, or 1.0 when the name contains o3 / o1 / o1-pro / o4-mini / gpt-5 / gpt-5-mini; with a
    thinking budget (the reference's "-thinking" models) 1.0; gpt-5 with reasoning effort high (its
    "gpt-5-think") sends no temperature. The no-tool branch knows only the first rule.
    """
    if given.temperature is not None:
        return given
    reasoning = any(rm in model_name for rm in P.REASONING_MODELS)
    if tools and given.thinking_budget:
        return given.model_copy(update={"temperature": 1.0})
    if tools and "gpt-5" in model_name and given.reasoning_effort == "high":
        return given
    return given.model_copy(update={"temperature": 1.0 if reasoning else 0.0})


#: the starter suite's VisualToolBench-style kinds: the four image kinds and a weather follow-up that
#: reads the suite's web corpus (weather.json only: the browsing tasks' searches stay as verified)
STARTER_KINDS = ["region_switch", "hybrid_chart", "progressive", "temporal", "weather"]
STARTER_SEED = 11


def _write_generated(req: GenerateRequest) -> None:
    from toolsight.benchmarks.visualtoolbench.generate import generate_vtb

    generate_vtb(req.n, req.seed, req.out, progress=req.progress)


def _starter_tasks(ctx: StarterContext) -> list[Task]:
    """Single- and multi-turn tasks (one with a historical weather lookup), rubric-scored by
    deterministic checks; generated in the official layout and read by its loader."""
    from toolsight.benchmarks.visualtoolbench.generate import generate_vtb

    generate_vtb(len(STARTER_KINDS), STARTER_SEED, ctx.folder, kinds=STARTER_KINDS, corpus=ctx.corpus)
    tasks, _, _, _ = D.load_converted(ctx.folder)
    return list(tasks)


class VisualToolBenchmark(Benchmark):
    name = BENCHMARK
    description = ("VisualToolBench (1,204 single- and multi-turn tasks, rubric-judged): --data PATH with the "
                   "converted layout or the Hugging Face parquet files")
    default_setting = "strong"
    # open questions, one prompt per turn (no options): the prompt is the question (docs/agents.md)
    question_view = QuestionView(text="{prompt}", question="{prompt}")
    category_order = {  # noqa: RUF012 - the paper's column orders (Tables 3, 6, 7; Fig. 3)
        "domain": list(D.DOMAINS),
        "turncase": list(D.TURNCASES),
        "turncase+domain": [f"{t} / {d}" for t in D.TURNCASES for d in D.DOMAINS],
        "task_category": list(D.TASK_CATEGORIES),
    }
    report_tables = [  # noqa: RUF012 - what `toolsight report` shows without --by
        ("turncase+domain", "pass_rate"), ("turncase+domain", "score"),
        ("task_category", "pass_rate"), ("task_category", "score"), ("turncase", "tool_use"),
    ]

    def settings(self) -> dict[str, AgentSettings]:
        return vtb_settings()

    def generators(self) -> dict[str, Generator]:
        return {"vtb": Generator(
            "vtb", "VisualToolBench style: single/multi-turn, rubrics with checks, official layout; web lookups "
            "and weather over its own offline corpus", _write_generated, run_with_benchmark=True)}

    def starter_parts(self) -> list[StarterPart]:
        return [StarterPart(folder="vtb", make=_starter_tasks)]

    def vocabularies(self) -> list[Vocabulary]:
        """The 8 image-operation categories of the paper's Fig. 6 (crop, resize, ..., other)."""
        return [CATEGORY_VOCABULARY]

    def toolsets(self) -> dict[str, ToolSet]:
        return dict(VTB_TOOLSETS)

    def load(self, data: Path | None) -> LoadedTasks:
        notes: list[str] = []
        if data is None:
            files = D.download()
            root_in = D.convert_parquet(files)
            notes.append(f"downloaded {D.HF_REPO} and converted it to {root_in}")
        else:
            if not data.exists():
                raise D.VisualToolBenchError(f"--data {data} does not exist. " + D.no_data_message(None))
            root_in = data
            if not D.find_converted(data)[1]:
                files = D.parquet_files(data)
                if not files:
                    raise D.VisualToolBenchError(D.no_data_message(data))
                root_in = D.convert_parquet(files)
                notes.append(f"converted {len(files)} parquet file(s) to {root_in}")
        tasks, root, jsons, more = D.load_converted(root_in)
        n_multi = sum(1 for t in tasks if t.is_multi_turn)
        notes.append(f"VisualToolBench: {len(tasks)} task(s), {len(tasks) - n_multi} single-turn, {n_multi} multi-turn")
        corpus: Path | None = root / CORPUS_DIR
        if corpus is not None and not (corpus / "manifest.json").is_file():
            corpus = None
        if corpus is not None:
            notes.append(f"offline web corpus: {corpus} (the default for --web)")
        return LoadedTasks(tasks=tasks, root=root, source=str(root_in), fingerprint=D._fingerprint(jsons),
                           notes=notes + more, web_corpus=corpus)

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.visualtoolbench.scorer import make_scorer

        return make_scorer(check_mode(mode))

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.visualtoolbench.scorer import SCORERS

        return dict(SCORERS)

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        settings = settings.model_copy(update={
            "generate": reference_generate(model.name, settings.generate, bool(settings.tools))})
        if settings.loop == "official" and settings.agent == "default":
            from toolsight.benchmarks.visualtoolbench.loop import VTBOfficialAgent

            return VTBOfficialAgent(model, settings, generate)
        return make_agent(settings.agent, model, settings, generate)

    def offered_tools(self, settings: AgentSettings) -> list[str]:
        """The official loop offers the reference's tools by their names (`google_search`, not `web_search`)."""
        if settings.loop != "official" or settings.agent != "default" or not settings.tools:
            return super().offered_tools(settings)
        from toolsight.benchmarks.visualtoolbench.tools import official_names
        from toolsight.tools.registry import build_tools

        return list(official_names(t.name for t in build_tools(settings.tools, extra=self.toolsets())))

    def offered_specs(self, settings: AgentSettings, tools: Sequence[Tool]) -> list[ToolSpec]:
        """The official loop's descriptors; the image tool's shows a placeholder image list and save
        folder (each turn sends its own: `<workspace>/turn_<t>`)."""
        if settings.loop != "official" or settings.agent != "default" or not settings.tools:
            return super().offered_specs(settings, tools)
        from toolsight.benchmarks.visualtoolbench.tools import TurnFiles, official_names, official_specs

        turn = TurnFiles(Path("<workspace>/turn_<t>"), ["<workspace>/turn_<t>/<the turn's first image>"])
        by_name = {t.name: t for t in tools}
        return official_specs(official_names(by_name), by_name, turn)

    def record_extra(self, task: Task) -> dict[str, Any]:
        return {**super().record_extra(task), "turncase": task.tags.get("turncase", "")}
