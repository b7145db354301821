"""The shapes benchmark as toolsight sees it: one `Benchmark` class that declares all its extensions.

Settings: `tool` (default) offers the benchmark's own `count_shapes` tool (tool set `shapes`, from
`toolsets()`); `direct` offers none. Scoring: `scorer.py` (`shapes`, and `shapes-near` by name).
Data: `data.py` (a folder with `shapes.json`). Generator: `shape-count` (`generate.py`), written in
the benchmark's own format and run as `toolsight run shapes --data DIR`. Option: `-B min_area=N`
(the smallest blob `count_shapes` counts). Report: by level (easy, medium, hard) and by shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.base import Benchmark, BenchmarkOptions, LoadedTasks, ScorerFactory
from toolsight.benchmarks.offline import Generator
from toolsight.log.modes import scorer_mode
from toolsight.scoring.base import Scorer
from toolsight.tools.registry import ToolSet

from toolsight_shapes.data import BENCHMARK, LEVELS, ShapesError, fingerprint, read_set, to_task
from toolsight_shapes.generate import KIND, write_generated
from toolsight_shapes.scorer import ShapesScorer, exact, near
from toolsight_shapes.tools import DEFAULT_MIN_AREA, SHAPES, shape_tools

SYSTEM = ("You count shapes in images. {tools}Put your final answer, the count (or the letter of the choice "
          "that holds it), inside <answer></answer> tags, e.g. <answer>2</answer>.")
TOOLS_NOTE = "Call count_shapes to count them from the pixels. "


class ShapesOptions(BenchmarkOptions):
    """`toolsight run shapes -B min_area=N`."""

    min_area: int = Field(default=DEFAULT_MIN_AREA, ge=1, description="smallest blob (pixels) count_shapes counts")


class ShapesBenchmark(Benchmark):
    name = BENCHMARK
    description = "Shapes (example plugin): how many red circles? counted with its own count_shapes tool"
    default_setting = "tool"
    Options: ClassVar[type[BenchmarkOptions]] = ShapesOptions
    category_order = {"level": LEVELS, "shape": list(SHAPES)}  # noqa: RUF012 - read-only class default
    report_tags = ["level", "shape"]  # noqa: RUF012

    def settings(self) -> dict[str, AgentSettings]:
        def make(name: str, tools: list[str], note: str) -> AgentSettings:
            return AgentSettings(name=name, system_prompt=SYSTEM.format(tools=note), tools=tools,
                                 user_template="{prompt}\n{options}" + ("{image_note}" if tools else ""),
                                 answer_format="answer_tag", max_tool_calls=6, max_rounds=6)

        return {"tool": make("tool", ["shapes"], TOOLS_NOTE), "direct": make("direct", [], "")}

    def toolsets(self) -> dict[str, ToolSet]:
        opts = self.options
        min_area = opts.min_area if isinstance(opts, ShapesOptions) else DEFAULT_MIN_AREA
        return {"shapes": ToolSet("shapes", lambda: shape_tools(min_area),
                                  "count_shapes: count the shapes of one colour and kind (OpenCV)")}

    def load(self, data: Path | None) -> LoadedTasks:
        if data is None:
            raise ShapesError("shapes has no default data: pass --data DIR, a folder with shapes.json "
                              f"(`toolsight generate {KIND} --out DIR` makes one)")
        items = read_set(data)
        levels = ", ".join(f"{lv} {sum(1 for i in items if i.level == lv)}" for lv in LEVELS)
        return LoadedTasks([to_task(i) for i in items], data, str(data.resolve()), fingerprint(data, items),
                           notes=[f"shapes: {len(items)} item(s): {levels}"])

    def scorer(self, setting: str, mode: str = "official") -> Scorer:
        return ShapesScorer(scorer_mode(mode))

    def scorers(self) -> dict[str, ScorerFactory]:
        return {"shapes": exact, "shapes-near": near}

    def generators(self) -> dict[str, Generator]:
        return {KIND: Generator(KIND, "count coloured circles, squares and triangles (the shapes plugin's own "
                                "format); difficulty 1-3 = easy, medium, hard", write_generated,
                                difficulties=(1, 2, 3), difficulty_help="1 = easy, 2 = medium, 3 = hard",
                                run_with_benchmark=True)}
