"""VisBrowse-Bench as a benchmark: the paper's settings, the reference loop, the semantic judge,
the paper's table layout and the generated mini-web.

Settings (paper §4.1): `direct` (no tools), `+TS` (text_search, visit), `+IS` (all five tools), with
the reference's tool texts (`tools.py`). All three run the reference loop (`loop.py`) by default;
`--loop toolsight` runs the corrected loop. Scoring: `scorer.py` (official / corrected). Data: `data.py`; prompts: `prompts.py`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pydantic import Field

from toolsight.agents.registry import Solver, make_agent
from toolsight.agents.settings import AgentSettings, QuestionView
from toolsight.benchmarks.base import Benchmark, BenchmarkOptions, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import GenerateRequest, Generator, StarterContext, StarterPart
from toolsight.benchmarks.visbrowse_bench.data import (
    BENCHMARK,
    DOMAINS,
    JSONL,
    REPO,
    SUB_DOMAINS,
    VisBrowseError,
    open_visbrowse,
)
from toolsight.benchmarks.visbrowse_bench.prompts import INPUT_PROMPT, SYSTEM_PROMPT
from toolsight.log.modes import scorer_mode as check_mode
from toolsight.models.base import Generate, GenerateConfig, Model
from toolsight.scoring.base import Scorer
from toolsight.tasks.dataset import DatasetError, load_dataset
from toolsight.tasks.schema import Task
from toolsight.tools.base import Tool
from toolsight.tools.registry import ToolSet

SETTING_TOOLS: dict[str, list[str]] = {"direct": [], "+TS": ["visbrowse_browse_text"], "+IS": ["visbrowse_browse"]}
DEFAULT_SETTING = "+IS"


def _browse() -> list[Tool]:
    from toolsight.benchmarks.visbrowse_bench.tools import reference_tools

    return reference_tools()


def _browse_text() -> list[Tool]:
    from toolsight.benchmarks.visbrowse_bench.tools import reference_text_tools

    return reference_text_tools()


#: the web layer's browsing tools with the reference's descriptions, schemas and summariser prompt (tools.py)
TOOLSETS = {
    "visbrowse_browse": ToolSet("visbrowse_browse", _browse, "text_search, reverse_image_search, visit, "
                                "image_search, image_crop with VisBrowse-Bench's schemas (web layer)", needs_web=True),
    "visbrowse_browse_text": ToolSet("visbrowse_browse_text", _browse_text,
                                     "text_search and visit with VisBrowse-Bench's schemas (web layer)", needs_web=True),
}


def visbrowse_settings() -> dict[str, AgentSettings]:
    out: dict[str, AgentSettings] = {}
    for name, tools in SETTING_TOOLS.items():
        extra: dict[str, Any] = {"tool_choice": "auto"} if tools else {}
        out[name] = AgentSettings(
            name=name, loop="official", system_prompt=SYSTEM_PROMPT, user_template=INPUT_PROMPT,
            answer_format="answer_tag", tools=list(tools), max_rounds=15, max_tool_calls=15 * 8,
            max_images_in_context=None, max_image_pixels=None, time_limit_s=None,
            generate=GenerateConfig(temperature=1.0, extra_body=extra),
        )
    return out




#: the starter suite's browsing tasks over its generated mini-web
STARTER_SEED = 11
STARTER_TASKS = 4


def _write_generated(req: GenerateRequest) -> None:
    from toolsight.benchmarks.visbrowse_bench.generate import generate_browse

    generate_browse(req.n, req.seed, req.out, progress=req.progress)


def _starter_tasks(ctx: StarterContext) -> list[Task]:
    """Browsing tasks over a generated mini-web, whose corpus becomes the suite's offline web."""
    from toolsight.benchmarks.visbrowse_bench.generate import generate_browse

    tasks = generate_browse(STARTER_TASKS, STARTER_SEED, ctx.folder)
    (ctx.folder / "corpus").rename(ctx.corpus)
    (ctx.folder / "tasks.jsonl").unlink()  # the suite's tasks.jsonl lists them
    return tasks


class VisBrowseOptions(BenchmarkOptions):
    """VisBrowse-Bench's own run options (`-B KEY=VALUE`)."""

    inline_images: bool = Field(
        default=False, description="official loop: send every image as a base64 data URL instead of by its URL "
        "(the reference sends URLs: the dataset's, the uploaded crop's); for a model server that cannot fetch them")


class VisBrowseBenchmark(Benchmark):
    name = BENCHMARK
    Options = VisBrowseOptions
    description = ("VisBrowse-Bench (169 tasks, 7 domains): visual-native web browsing; --data = the repo folder, "
                   "its JSONL, or a `toolsight generate browse` folder (offline mini-web)")
    default_setting = DEFAULT_SETTING
    # the question itself (the setting's template wraps it in the browsing agent's instructions, which an
    # agent with its own template does not send); no options (docs/agents.md)
    question_view = QuestionView(text="{prompt}", question="{prompt}")
    category_order = {"domain": DOMAINS, "sub_domain": SUB_DOMAINS}  # noqa: RUF012 - paper Table 2 order

    def settings(self) -> dict[str, AgentSettings]:
        return visbrowse_settings()

    def generators(self) -> dict[str, Generator]:
        return {"browse": Generator(
            "browse", "VisBrowse-Bench style: a generated mini-web (pages, pictures, links; offline corpus in "
            "corpus/) and multi-hop browsing tasks with reference tool-call programs", _write_generated,
            run_with_benchmark=True)}

    def starter_parts(self) -> list[StarterPart]:
        return [StarterPart(folder="browse", make=_starter_tasks, builds_corpus=True)]

    def toolsets(self) -> dict[str, ToolSet]:
        return dict(TOOLSETS)

    def make_agent(self, settings: AgentSettings, model: Model, generate: Generate) -> Solver:
        if settings.agent != "default":
            return make_agent(settings.agent, model, settings, generate)
        from toolsight.benchmarks.visbrowse_bench.loop import VisBrowseAgent

        inline = bool(getattr(self.options, "inline_images", False))
        return VisBrowseAgent(model, settings, generate, official=settings.loop == "official", inline_images=inline)

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            raise VisBrowseError(f"visbrowse-bench needs --data PATH: the repository folder (git clone {REPO}), its "
                                 f"{JSONL}, or a generated mini-web (`toolsight generate browse --out DIR`)")
        if not data.exists():
            raise VisBrowseError(f"--data {data}: no such file or folder")
        if data.is_dir() and (data / "tasks.jsonl").is_file():
            try:
                ds = load_dataset(data)
            except DatasetError as exc:
                raise VisBrowseError(str(exc)) from None
            corpus = data / "corpus"
            return LoadedTasks(ds.tasks, ds.root, str(ds.root.resolve()), ds.fingerprint(),
                               web_corpus=corpus if (corpus / "manifest.json").is_file() else None)
        vb = open_visbrowse(data)  # the images: only the selected tasks', when a run asks (`fetch`)
        digest = hashlib.sha256(vb.jsonl.read_bytes()).hexdigest()[:16]
        return LoadedTasks(vb.tasks, vb.root, str(vb.jsonl.resolve()), digest, remote_images=vb.remote,
                           fetch=vb.fetch if vb.remote else None)

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        from toolsight.benchmarks.visbrowse_bench.scorer import make_scorer

        return make_scorer(check_mode(mode))

    def scorers(self) -> dict[str, ScorerFactory]:
        from toolsight.benchmarks.visbrowse_bench.scorer import SCORERS

        return dict(SCORERS)
