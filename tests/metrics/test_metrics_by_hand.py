"""Metrics on a small hand-made run against numbers computed by hand (see comments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsight.engine.store import RecordWriter, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics import Price, bootstrap, compute_run_metrics
from toolsight.metrics.agreement import HumanGradesError
from toolsight.metrics.views import ScoresFileError
from toolsight.models.base import Usage
from toolsight.scoring.base import Score
from toolsight.tools.base import Artifact

MODEL = "openai/test-model"


def _art(aid: str, *parents: str, call: str | None = None) -> Artifact:
    return Artifact(id=aid, sha256=aid, file=f"{aid}.png", width=4, height=4, parents=parents,
                    source="tool" if call else "input", tool_call_id=call)


def _call(cid: str, name: str, out: list[str], inputs: list[str], rnd: int, ok: bool = True) -> ToolCallRecord:
    return ToolCallRecord(id=cid, turn=0, round=rnd, name=name, arguments="{}", ok=ok, artifacts=out, inputs=inputs,
                          error=None if ok else "bad box")


def _rec(i: int, cat: str, traj: Trajectory, score: Score | None, error: str | None = None,
         refs: list[int] | None = None) -> Record:
    traj.usage = Usage(input_tokens=100 * i, output_tokens=10 * i)
    extra = {"reference_chain_lengths": refs} if refs is not None else {}
    return Record(task_id=f"t{i}", benchmark="hand", setting="code", model=MODEL, tags={"cat": cat},
                  trajectory=traj, score=score, error=error, extra=extra)


def _rubrics(*items: tuple[str, bool, str]) -> dict[str, object]:
    return {"rubrics": [{"id": r, "met": m, "kind": k} for r, m, k in items]}


@pytest.fixture
def hand_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    one = [TurnResult(index=0)]
    recs = [
        # t1: crop seen last -> L_T=1, L_e=1, ref 1; correct
        _rec(1, "A", Trajectory(artifacts=[_art("in"), _art("a1", "in", call="c1")],
                                tool_calls=[_call("c1", "crop", ["a1"], ["in"], 1)],
                                turns=[TurnResult(index=0, seen_images=["in", "a1"], rounds=2)]),
             Score(value=1.0, passed=True, details=_rubrics(("r1", True, "objective"), ("r2", False, "subjective"))),
             refs=[1]),
        # t2: resize (dead end) + failed crop, answer from the input -> L_T=2, L_e=0, ref 2; half score, not passed
        _rec(2, "A", Trajectory(artifacts=[_art("in"), _art("a1", "in", call="c1")],
                                tool_calls=[_call("c1", "resize", ["a1"], ["in"], 1),
                                            _call("c2", "crop", [], ["in"], 2, ok=False)],
                                turns=[TurnResult(index=0, seen_images=["in", "a1", "in"])]),
             Score(value=0.5, passed=False, details=_rubrics(("r1", False, "objective"))), refs=[2]),
        # t3: no tools, wrong (passed None -> value 0 -> not passed), ref [0] = no reference chain
        _rec(3, "B", Trajectory(turns=one), Score(value=0.0), refs=[0]),
        # t4: run error -> out of accuracy and tool use
        _rec(4, "B", Trajectory(tool_calls=[_call("c1", "crop", [], [], 1)], turns=one), None,
             error="model error: HTTP 500", refs=[1]),
        # t5: score error (out of accuracy, in tool use); two turns; chain crop->rotate->zoom, ref 1+1
        _rec(5, "B", Trajectory(
            artifacts=[_art("in"), _art("a1", "in", call="c1"), _art("a2", "a1", call="c2"),
                       _art("a3", "a2", call="c3")],
            tool_calls=[_call("c1", "crop", ["a1"], ["in"], 1), _call("c2", "rotate", ["a2"], ["a1"], 2),
                        _call("c3", "zoom", ["a3"], ["a2"], 3)],
            turns=[TurnResult(index=0, seen_images=["in", "a1"]), TurnResult(index=1, seen_images=["a2", "a3"])]),
             Score(value=0.0, error="judge reply never parsed"), refs=[1, 1]),
        # t6: no tools, value 1 with passed None -> passed; no reference chain recorded
        _rec(6, "A", Trajectory(turns=one), Score(value=1.0)),
    ]
    w = RecordWriter(run)
    for r in recs:
        w.write(r)
    w.close()
    write_manifest(run, Manifest(run_id="hand", benchmark="hand", setting="code", model=MODEL))
    return run


def test_accuracy_and_groups(hand_run: Path) -> None:
    m = compute_run_metrics(hand_run, by=["cat", "turn_type", "turn_type+cat"])
    assert (m.n_records, m.n_scored, m.n_errors, m.n_score_errors) == (6, 4, 1, 1)
    assert m.error_kinds == {"model": 1}
    assert m.overall.score.value == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert m.overall.pass_rate.value == pytest.approx(2 / 4)
    assert m.groups["cat"]["A"].score.value == pytest.approx(2.5 / 3)
    assert m.groups["cat"]["A"].n == 3
    assert m.groups["cat"]["B"].score.value == 0.0
    assert set(m.groups["turn_type"]) == {"single"}  # the only multi-turn task had a score error
    assert m.groups["turn_type+cat"]["single / A"].n == 3
    assert m.groups["turn_type+cat"]["single / B"].score.value == 0.0
    assert m.overall.score.lo is not None and m.overall.score.hi is not None
    assert m.overall.score.value is not None
    assert m.overall.score.lo <= m.overall.score.value <= m.overall.score.hi


def test_tool_use_and_chain(hand_run: Path) -> None:
    tu = compute_run_metrics(hand_run).tool_use
    # tasks t1,t2,t3,t5,t6: calls 1,2,0,3,0; ok 1,1,0,3,0; effective 1,0,0,3,0
    assert tu.tasks == 5 and tu.calls == 6 and tu.ok_calls == 5
    assert tu.proactivity.value == pytest.approx(3 / 5)
    assert tu.volume.value == pytest.approx(6 / 5)
    assert tu.success_rate.value == pytest.approx(5 / 6)
    assert tu.effective_calls == 4
    assert tu.eff_tool.value == pytest.approx(4 / 6)
    assert tu.unique_tools == 4 and tu.effective_unique_tools == 3
    assert tu.tool_counts == {"crop": 3, "resize": 1, "rotate": 1, "zoom": 1}  # t1, t2 (failed), t5
    # MAE over t1,t2,t5 (t3's [0] and t6's missing list are no reference, not length 0):
    # all |1-1|,|2-2|,|2-3|; effective |1-1|,|2-0|,|2-3|
    assert tu.with_reference == 3
    assert tu.mae_all.value == pytest.approx(1 / 3)
    assert tu.mae_effective.value == pytest.approx(3 / 3)
    assert tu.turns_per_task == pytest.approx((1 + 1 + 1 + 2 + 1) / 5)


def test_tokens_and_cost(hand_run: Path) -> None:
    prices = {"test-model": Price(input=1.0, output=2.0)}  # matched after the provider prefix
    u = compute_run_metrics(hand_run, prices=prices).usage
    ins = sum(100 * i for i in range(1, 7))
    outs = sum(10 * i for i in range(1, 7))
    assert (u.input_tokens, u.output_tokens) == (ins, outs)
    assert u.cost_usd == pytest.approx((ins * 1.0 + outs * 2.0) / 1e6)
    assert u.tokens_per_task == pytest.approx((ins + outs) / 6)
    assert compute_run_metrics(hand_run).usage.cost_usd is None


def test_judge_human_agreement(hand_run: Path, tmp_path: Path) -> None:
    human = tmp_path / "human.jsonl"
    human.write_text("\n".join(json.dumps(x) for x in [
        {"task_id": "t1", "rubric": "r1", "human": "Met"},        # judge Met: agree (objective)
        {"task_id": "t1", "rubric": "r2", "human": "Met"},        # judge Not Met: disagree (subjective)
        {"task_id": "t2", "rubric": "r1", "human": "Not Met"},    # agree (objective)
        {"task_id": "t9", "rubric": "r1", "human": True},         # no such task
    ]) + "\n")
    a = compute_run_metrics(hand_run, human_grades=human).agreement
    assert a is not None
    assert a.n == 3 and a.unmatched_human == 1
    assert a.overall.value == pytest.approx(2 / 3)
    assert a.objective.value == pytest.approx(1.0)
    assert a.subjective.value == pytest.approx(0.0)
    assert a.kappa == pytest.approx(0.4)  # po=2/3, pe=1/3*2/3+2/3*1/3=4/9


def test_bad_human_grades_name_the_line(tmp_path: Path, hand_run: Path) -> None:
    bad = tmp_path / "h.jsonl"
    bad.write_text('{"task_id": "t1", "rubric": "r1", "human": "maybe"}\n')
    with pytest.raises(HumanGradesError, match=r"h.jsonl:1: human"):
        compute_run_metrics(hand_run, human_grades=bad)


def test_scores_file_overrides_record_scores(hand_run: Path) -> None:
    lines = [{"task_id": "t1", "score": Score(value=0.0, passed=False).model_dump()},
             {"task_id": "t2", "score": Score(value=1.0, passed=True).model_dump()},
             {"task_id": "t3", "score": None, "error": "no task"}]
    (hand_run / "scores-alt.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    m = compute_run_metrics(hand_run, scores="alt")
    # t1 0, t2 1 scored; t3 has no score (unscored), t5/t6 absent from the file (unscored)
    assert m.n_scored == 2 and m.overall.score.value == pytest.approx(0.5)
    assert m.n_unscored == 3 and m.scores_source == "scores-alt.jsonl"
    with pytest.raises(ScoresFileError, match=r"available in .*alt"):
        compute_run_metrics(hand_run, scores="nope")


def test_bootstrap_is_seeded_and_sane() -> None:
    vals = [0.0, 1.0] * 50
    a, b = bootstrap(vals, seed=3), bootstrap(vals, seed=3)
    assert a == b
    assert a.value == 0.5
    assert a.lo is not None and a.hi is not None
    # normal approximation: 0.5 ± 1.96 * 0.05 = [0.402, 0.598]
    assert 0.37 < a.lo < 0.44 and 0.56 < a.hi < 0.63
    assert bootstrap([]).value is None
    assert bootstrap([0.7]).lo == 0.7


def test_bootstrap_multi_matches_single_statistics() -> None:
    from toolsight.metrics.stats import bootstrap_multi, bootstrap_ratio

    vals = [0.0, 1.0] * 50
    num = [float(i % 3) for i in range(100)]
    den = [2.0] * 100
    multi = bootstrap_multi({"m": vals, "c": [1.0] * 100}, {"r": (num, den)}, seed=5)
    assert multi == bootstrap_multi({"m": vals, "c": [1.0] * 100}, {"r": (num, den)}, seed=5)
    single, ratio = bootstrap(vals, seed=5), bootstrap_ratio(num, den, seed=5)
    assert multi["m"].value == single.value and multi["r"].value == ratio.value
    assert multi["c"].lo == multi["c"].hi == 1.0
    for a, b in ((multi["m"], single), (multi["r"], ratio)):  # same distribution, other draws
        assert a.lo is not None and b.lo is not None and a.hi is not None and b.hi is not None
        assert abs(a.lo - b.lo) < 0.03 and abs(a.hi - b.hi) < 0.03
    with pytest.raises(ValueError, match="equal lengths"):
        bootstrap_multi({"a": [1.0], "b": [1.0, 2.0]})
    assert bootstrap_multi({"e": []})["e"].value is None
