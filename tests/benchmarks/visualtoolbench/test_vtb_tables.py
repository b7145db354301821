"""VisualToolBench's tables on hand-built records, against numbers worked out by hand.

Six records: 3 single-turn (STEM pass 1.0, STEM fail 0.4, Finance pass 0.8), 2 multi-turn (Medical pass 0.9,
Medical fail 0.2), 1 run error. Tool calls: single-turn 2 + 0 + 1 (1 failing), multi-turn 4 + 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolsight.engine.store import RecordWriter, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics import compute_run_metrics
from toolsight.report import build_report
from toolsight.scoring.base import Score


def _calls(n: int, failing: int = 0) -> list[ToolCallRecord]:
    return [ToolCallRecord(id=f"c{i}", turn=0, round=1, name="python_image_processing" if i % 2 == 0 else "calculator",
                           arguments='{"code": "img.crop((0, 0, 5, 5))"}' if i % 2 == 0 else '{"expression": "1+1"}',
                           ok=i >= failing) for i in range(n)]


def _rec(tid: str, turncase: str, domain: str, focus: str, value: float | None, passed: bool | None, calls: int,
         failing: int = 0, error: str | None = None, category: str | None = None) -> Record:
    turns = [TurnResult(index=i) for i in range(2 if turncase == "multi-turn" else 1)]
    details = {"error_category": category} if category else {}
    score = Score(value=value, passed=passed, details=details) if value is not None else None
    return Record(task_id=tid, benchmark="visualtoolbench", setting="strong", model="openai/m",
                  tags={"turncase": turncase, "domain": domain, "task_category": focus},
                  trajectory=Trajectory(tool_calls=_calls(calls, failing), turns=turns), score=score, error=error)


@pytest.fixture
def run(tmp_path: Path) -> Path:
    d = tmp_path / "run"
    w = RecordWriter(d)
    for r in [
        _rec("a", "single-turn", "STEM", "Region-Switch Q&A", 1.0, True, 2),
        _rec("b", "single-turn", "STEM", "Hybrid Tool Reasoning", 0.4, False, 0, category="visual perception"),
        _rec("c", "single-turn", "Finance", "Hybrid Tool Reasoning", 0.8, True, 1, failing=1),
        _rec("d", "multi-turn", "Medical", "Temporal Visual Reasoning", 0.9, True, 4),
        _rec("e", "multi-turn", "Medical", "Progressive Visual Reasoning", 0.2, False, 1, category="reasoning"),
        _rec("f", "multi-turn", "STEM", "Follow-up Test", None, None, 3, error="model error: boom"),
    ]:
        w.write(r)
    w.close()
    write_manifest(d, Manifest(run_id="vtb", benchmark="visualtoolbench", setting="strong", model="openai/m"))
    return d


def test_metrics_by_hand(run: Path) -> None:
    m = compute_run_metrics(run, by=["turncase+domain", "task_category", "turncase"])
    assert (m.n_scored, m.n_errors) == (5, 1)
    assert m.overall.pass_rate.value == pytest.approx(3 / 5) and m.overall.score.value == pytest.approx(3.3 / 5)
    g = m.groups["turncase+domain"]
    assert g["single-turn / STEM"].pass_rate.value == 0.5 and g["single-turn / STEM"].score.value == pytest.approx(0.7)
    assert g["multi-turn / Medical"].pass_rate.value == 0.5 and g["multi-turn / Medical"].score.value == 0.55
    assert "multi-turn / STEM" not in g  # the run error is left out
    assert m.groups["task_category"]["Hybrid Tool Reasoning"].score.value == pytest.approx(0.6)
    st, mt = m.tool_groups["turncase"]["single-turn"], m.tool_groups["turncase"]["multi-turn"]
    assert (st.tasks, st.calls, st.volume) == (3, 3, 1.0) and st.proactivity == pytest.approx(2 / 3)
    assert st.success_rate == pytest.approx(2 / 3)
    assert (mt.tasks, mt.calls, mt.proactivity, mt.success_rate, mt.volume) == (2, 5, 1.0, 1.0, 2.5)
    assert m.error_categories == {"visual perception": 1, "reasoning": 1}


def test_report_prints_the_papers_tables_in_order(run: Path) -> None:
    text = build_report([run], fmt="md")
    order = ["### APR % by turncase+domain", "### Score % by turncase+domain", "### APR % by task_category",
             "### Score % by task_category", "### Tool use by turncase", "### Tool use",
             "### Error categories % (failed tasks)"]
    pos = [text.index(h) for h in order]
    assert pos == sorted(pos)
    head = next(ln for ln in text.splitlines() if ln.startswith("| Model | Setting | Overall | single-turn / STEM"))
    # the paper's column order: single-turn before multi-turn, STEM, Medical, Finance, Sports, Generalist
    assert head.index("single-turn / Finance") < head.index("multi-turn / Medical")
    assert "| openai/m | strong | 60.0 | 50.0 | 100.0 | 50.0 |" in text.splitlines()  # APR: overall, groups
    cats = next(ln for ln in text.splitlines() if ln.startswith("| Model | Setting | Overall | Region-Switch"))
    assert cats.index("Region-Switch") < cats.index("Hybrid") < cats.index("Temporal") \
        < cats.index("Progressive")
    tool = next(ln for ln in text.splitlines() if ln.startswith("| openai/m | strong | 8 |"))
    assert "0.6667 | 0.6667 | 1.00 | 1.0000 | 1.0000 | 2.50" in tool
    assert "| openai/m | strong | 2 | 50.00 | 50.00 |" in text
    # with --by the user's grouping replaces the declared tables
    custom = build_report([run], by=["domain"], fmt="md")
    assert "### Score % by domain" in custom and "turncase+domain" not in custom
