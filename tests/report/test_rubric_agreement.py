"""Re-score a run with the real rubric scorer and a scripted judge, then judge–human agreement."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolsight.engine.rescore import load_run_tasks, rescore_run
from toolsight.engine.store import iter_records
from toolsight.metrics import compute_run_metrics
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart
from toolsight.scoring import registry
from toolsight.tasks.schema import Rubric
from toolsight.tools.base import ToolSpec

GOLD = re.compile(r"\*\*Golden Answer:\*\* (\S+)")
CRIT = re.compile(r"\*\*Rubric Criterion:\*\* (.+?)  \n")
ANS = re.compile(r"<answer>([A-D])</answer>")


class RubricJudge(Model):
    """r1 'gives the gold letter' is Met iff the answer has it; r2 'is polite' is always Met."""

    def __init__(self) -> None:
        super().__init__("mock/rubric-judge")

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        text = messages[-1].text
        crit = CRIT.search(text)
        gold = GOLD.search(text)
        ans = ANS.search(text)
        met = True
        if crit is not None and "gold letter" in crit.group(1):
            met = gold is not None and ans is not None and ans.group(1) == gold.group(1)
        reply = json.dumps({"explanation": "scripted", "judge_result": "Met" if met else "Not Met"})
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=reply)]))


def test_rubric_rescore_and_agreement(run_dir: Path, tmp_path: Path) -> None:
    tasks = load_run_tasks(run_dir)
    for t in tasks.values():
        for turn in t.turns:
            turn.rubrics = [Rubric(id="r1", text="gives the gold letter", weight=4, kind="objective"),
                            Rubric(id="r2", text="is polite", weight=1, kind="subjective")]
    scorer = registry.get_scorer("rubric", mode="corrected")
    path = rescore_run(run_dir, scorer, judge_model=RubricJudge(), name="rubric", tasks=tasks)
    # humans agree with the judge on r1 everywhere and disagree on r2 for even-numbered tasks
    lines = []
    judge_r1: dict[tuple[str, int], bool] = {}
    for rec in iter_records(run_dir):
        if rec.error:
            continue
        for ti, (resp, gold) in enumerate(zip(rec.trajectory.responses, rec.extra["gold"], strict=False)):
            m = ANS.search(resp)
            judge_r1[(rec.task_id, ti)] = m is not None and m.group(1) == gold
            lines.append({"task_id": rec.task_id, "turn": ti, "rubric": "r1",
                          "human": "Met" if judge_r1[(rec.task_id, ti)] else "Not Met", "kind": "objective"})
            even = int(rec.task_id.split("-")[1]) % 2 == 0
            lines.append({"task_id": rec.task_id, "turn": ti, "rubric": "r2", "human": "Not Met" if even else "Met",
                          "kind": "subjective"})
    human = tmp_path / "human.jsonl"
    human.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    metrics = compute_run_metrics(run_dir, scores="rubric", human_grades=human)
    a = metrics.agreement
    assert a is not None and a.n == len(lines) and a.unmatched_human == 0
    r2 = [x for x in lines if x["rubric"] == "r2"]
    agree_r2 = sum(1 for x in r2 if x["human"] == "Met")
    assert a.objective.value == 1.0
    assert a.subjective.value == pytest.approx(agree_r2 / len(r2))
    assert a.overall.value == pytest.approx((len(r2) + agree_r2) / len(lines))
    # pass = the critical r1 met on every turn; score pools weights over turns
    first = json.loads(path.read_text().splitlines()[1])  # task-00001: single turn
    assert first["task_id"] == "task-00001"
    assert first["score"]["passed"] == judge_r1[("task-00001", 0)]
    # the viewer shows the re-scored rubric verdicts as a table
    from toolsight.report.viewer import build_viewer

    index = build_viewer(run_dir, scores="rubric")
    page = (index.parent / "tasks" / "task-00001.html").read_text()
    assert 'id="rubrics"' in page and "gives the gold letter" in page and "(critical)" in page
    verdict = 'correct">Met<' if judge_r1[("task-00001", 0)] else 'incorrect">Not Met<'
    row = page.split("gives the gold letter", 1)[1].split("</tr>", 1)[0]
    assert verdict in row
