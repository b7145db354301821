"""End to end on a run made by the real runner: metrics, re-score, report and viewer agree with it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path

import cv2
import numpy as np

from toolsight.benchmarks.dataset.benchmark import DatasetBenchmark
from toolsight.engine.options import RunOptions
from toolsight.engine.rescore import rescore_run
from toolsight.engine.runner import Runner
from toolsight.engine.store import iter_records
from toolsight.metrics import compute_run_metrics
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.report import build_report
from toolsight.report.viewer import build_viewer
from toolsight.tools.base import ToolSpec

PRODUCED = re.compile(r"Produced image\(s\): (img-[0-9a-f]{12})")


class CropTwiceModel(Model):
    """Crops the input, crops a second box of the input (a dead end), crops its first crop, answers."""

    def __init__(self) -> None:
        super().__init__("test/crop-twice")

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        tool_msgs = [m for m in messages if m.role == "tool"]
        usage = Usage(input_tokens=20, output_tokens=4)
        plan = [("input", [0.0, 0.0, 0.8, 0.8]), ("input", [0.5, 0.5, 1.0, 1.0]), ("first", [0.1, 0.1, 0.6, 0.6])]
        if len(tool_msgs) < len(plan):
            src, box = plan[len(tool_msgs)]
            image = "a.png"
            if src == "first":
                image = PRODUCED.findall(tool_msgs[0].text)[0]
            args = json.dumps({"image": image, "bbox": box})
            msg = Message(role="assistant", tool_calls=[ToolCall(id=f"c{len(tool_msgs)}", name="crop", arguments=args)])
            return ModelOutput(message=msg, usage=usage, finish_reason="tool_calls")
        task = next(m.text for m in messages if m.role == "user").split("[task:")[1].split("]")[0]
        answer = "A" if int(task[1:]) % 3 else "B"
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=f"<answer>{answer}</answer>")]),
                           usage=usage)


def _dataset(root: Path) -> Path:
    img = np.zeros((60, 80, 3), np.uint8)
    img[10:40, 20:60] = (0, 0, 255)
    (root / "images").mkdir(parents=True)
    cv2.imwrite(str(root / "images" / "a.png"), img)
    lines = []
    for i in range(6):
        lines.append({"id": f"t{i}", "tags": {"kind": "x" if i < 3 else "y"},
                      "turns": [{"prompt": f"[task:t{i}] Which?", "images": [{"path": "images/a.png"}],
                                 "answer": "A", "options": {"A": "red", "B": "blue"}, "answer_type": "choice",
                                 "reference_steps": [{"tool": "crop"}]}]})
    (root / "tasks.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


def test_runner_output_through_metrics_report_and_viewer(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "ds")
    bench = DatasetBenchmark(data)
    run = tmp_path / "run"
    opts = RunOptions.of(benchmark=str(data), model="test/crop-twice", setting="crop", out=str(run), backoff_base=0.01)
    asyncio.run(Runner(opts, bench, bench.load(None), CropTwiceModel()).run())
    recs = list(iter_records(run))
    assert len(recs) == 6 and all(r.error is None for r in recs)

    m = compute_run_metrics(run, by=["kind"])
    # t0 and t3 answer B (wrong); every task: 3 crops, 2 on the path of the last image seen
    assert m.overall.score.value == 4 / 6
    assert m.groups["kind"]["x"].score.value == 2 / 3
    assert m.tool_use.calls == 18 and m.tool_use.effective_calls == 12
    assert m.tool_use.eff_tool.value == 12 / 18
    assert m.tool_use.mae_all.value == 2.0 and m.tool_use.mae_effective.value == 1.0

    before = hashlib.sha256((run / "records.jsonl").read_bytes()).hexdigest()
    scores = rescore_run(run, bench.scorer("crop", "official"), name="again")
    assert hashlib.sha256((run / "records.jsonl").read_bytes()).hexdigest() == before
    assert compute_run_metrics(run, scores=scores.name).overall.score.value == 4 / 6

    md = build_report([run], by=["kind"], out_dir=tmp_path / "rep")
    assert "| test/crop-twice | crop | 6 | 0 | 66.7 [" in md

    index = build_viewer(run)
    page = (index.parent / "tasks" / "t1.html").read_text()
    srcs = re.findall(r'<img class="art" src="([^"]+)"', page)
    assert len(set(srcs)) == 4  # the input + three crops, all files of the run
    # each crop step shows its input beside its output: the input twice, the first crop once
    assert page.count('data-role="input"') == 3 and page.count('data-role="output"') == 3
    assert all((index.parent / "tasks" / s).resolve().is_file() for s in srcs)
    assert page.count('<span class="badge eff">effective</span>') == 4  # 2 calls + their 2 results
