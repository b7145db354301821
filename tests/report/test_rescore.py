"""Re-scoring a finished run: a new scores file beside the untouched records, judges cached."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from toolsight.engine.rescore import RescoreError, rescore_run
from toolsight.engine.store import iter_records
from toolsight.metrics import compute_run_metrics
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart
from toolsight.scoring.base import JudgeCall, Score, ScoreContext
from toolsight.tasks.schema import Task
from toolsight.tools.base import ToolSpec

ANSWER = re.compile(r"<answer>\s*([A-D])\s*</answer>")


class LetterScorer:
    """Exact letter match per turn, mean over turns (a real, if small, scorer)."""

    name = "letter"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        turns = []
        for t, r in zip(task.turns, responses, strict=False):
            m = ANSWER.search(r)
            got = m.group(1) if m else None
            turns.append(Score(value=float(got == t.answer), passed=got == t.answer, answer=got))
        value = sum(s.value for s in turns) / len(task.turns)
        return Score(value=value, passed=value == 1.0, answer=turns[-1].answer if turns else None,
                     scorer=self.name, turns=turns)


class JudgeScorer:
    """Asks the judge whether the last response gives the gold letter (yes/no)."""

    name = "judged"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        assert ctx.judge is not None
        prompt = f"Gold: {task.turns[-1].answer}\nAnswer: {responses[-1]}\nSame? yes/no"
        out = await ctx.judge.generate([Message.user(prompt)], [], ctx.judge_config)
        ok = out.text.strip().lower() == "yes"
        return Score(value=float(ok), passed=ok, scorer=self.name, explanation=out.text,
                     judge_calls=[JudgeCall(model=ctx.judge.name, prompt=prompt, reply=out.text, seed=0)])


class StrictJudge(Model):
    """Says yes only when the gold letter appears inside the answer tags; counts its calls."""

    def __init__(self, name: str, lenient: bool = False) -> None:
        super().__init__(name)
        self.calls = 0
        self.lenient = lenient

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        text = messages[-1].text
        gold = re.search(r"Gold: (\S+)", text)
        ans = ANSWER.search(text)
        yes = self.lenient or (gold is not None and ans is not None and ans.group(1) == gold.group(1))
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text="yes" if yes else "no")]))


class Broken:
    name = "broken"

    async def score(self, task: Task, responses: list[str], ctx: ScoreContext) -> Score:
        raise RuntimeError("scorer bug")


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _expected_accuracy(run_dir: Path) -> float:
    vals = []
    for rec in iter_records(run_dir):
        if rec.error:
            continue
        gold = rec.extra["gold"]
        got = [(m.group(1) if (m := ANSWER.search(r)) else None) for r in rec.trajectory.responses]
        vals.append(sum(g == a for g, a in zip(gold, got, strict=False)) / len(gold))
    return sum(vals) / len(vals)


def test_rescore_writes_new_file_and_leaves_records(run_dir: Path) -> None:
    before = _sha(run_dir / "records.jsonl"), _sha(run_dir / "manifest.json")
    out = rescore_run(run_dir, LetterScorer())  # tasks from the manifest's dataset path
    assert out == run_dir / "scores-letter.jsonl"
    assert (_sha(run_dir / "records.jsonl"), _sha(run_dir / "manifest.json")) == before
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 12
    errs = [x for x in lines if x["score"] is None]
    assert [x["task_id"] for x in errs] == ["task-00010"] and errs[0]["error"].startswith("record error")
    meta = json.loads((run_dir / "scores-letter.meta.json").read_text())
    assert meta["scorer"] == "letter" and meta["scored"] == 11
    m = compute_run_metrics(run_dir, scores="letter")
    assert m.overall.score.value == pytest.approx(_expected_accuracy(run_dir))


def test_rescore_with_two_judges_and_cache(run_dir: Path) -> None:
    before = _sha(run_dir / "records.jsonl")
    strict = StrictJudge("mock/strict")
    p1 = rescore_run(run_dir, JudgeScorer(), judge_model=strict)
    assert p1.name == "scores-judged-mock_strict.jsonl"
    distinct = {(r.extra["gold"][-1], r.trajectory.responses[-1]) for r in iter_records(run_dir) if not r.error}
    assert strict.calls == len(distinct)  # identical judge requests are answered from the cache
    lenient = StrictJudge("mock/lenient", lenient=True)
    p2 = rescore_run(run_dir, JudgeScorer(), judge_model=lenient, name="lenient")
    assert p2.name == "scores-lenient.jsonl" and p1.is_file()
    assert _sha(run_dir / "records.jsonl") == before
    assert compute_run_metrics(run_dir, scores="lenient").overall.score.value == 1.0
    strict_acc = compute_run_metrics(run_dir, scores=p1.name).overall.score.value
    assert strict_acc is not None and strict_acc < 1.0
    # the same judge again: every call answered from the run's cache.sqlite
    again = StrictJudge("mock/strict")
    rescore_run(run_dir, JudgeScorer(), judge_model=again, name="again")
    assert again.calls == 0
    assert (run_dir / "scores-again.jsonl").read_text() == p1.read_text()


def test_scorer_failure_is_a_score_error(run_dir: Path) -> None:
    out = rescore_run(run_dir, Broken())
    line = json.loads(out.read_text().splitlines()[0])
    assert line["score"]["error"].startswith("scoring failed: RuntimeError: scorer bug")
    m = compute_run_metrics(run_dir, scores="broken")
    assert m.n_scored == 0 and m.n_score_errors == 11


def test_explicit_tasks_and_missing_dataset(run_dir: Path, tmp_path: Path) -> None:
    from toolsight.tasks.dataset import load_dataset

    data = Path(json.loads((run_dir / "manifest.json").read_text())["dataset"]["path"])
    tasks = {t.id: t for t in load_dataset(data).tasks}
    shutil.move(str(data), str(tmp_path / "moved"))
    with pytest.raises(RescoreError, match=r"manifest dataset\.path"):
        rescore_run(run_dir, LetterScorer())
    out = rescore_run(run_dir, LetterScorer(), tasks=tasks, name="explicit")
    assert len(out.read_text().splitlines()) == 12
    with pytest.raises(RescoreError, match="no usable characters"):
        rescore_run(run_dir, LetterScorer(), tasks=tasks, name="///")


def test_rescore_by_registry_name(run_dir: Path) -> None:
    out = rescore_run(run_dir, "choice")
    assert out.name == "scores-choice.jsonl"
    m = compute_run_metrics(run_dir, scores="choice")
    assert m.n_scored == 11 and m.overall.score.value == pytest.approx(_expected_accuracy(run_dir))
    with pytest.raises(RescoreError, match="unknown scorer 'nope'"):
        rescore_run(run_dir, "nope")
