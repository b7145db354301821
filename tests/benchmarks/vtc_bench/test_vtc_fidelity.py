"""VTC-Bench: the official rule pass reproduces every line of ../shared/fidelity/vtc-bench.jsonl
(rule score, judge routing, judge prompt); corrected mode fixes the listed bugs; the judge step."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fidelitykit import vectors
from toolsight.benchmarks.registry import get_scorer
from toolsight.benchmarks.vtc_bench.scorer import (
    VtcScorer,
    vtc_goes_to_judge,
    vtc_judge_hit,
    vtc_judge_prompt,
    vtc_judge_prompt_name,
    vtc_rule_score,
)
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolSpec
from toolsight.scoring.base import Score, ScoreContext
from toolsight.tasks.schema import Task, Turn


def _vectors() -> list[dict[str, Any]]:
    return vectors("vtc-bench")


def test_official_reproduces_every_vector() -> None:
    rows = _vectors()
    assert len(rows) >= 100
    wrong = []
    for r in rows:
        row, out = r["input"]["row"], r["output"]
        to_judge = vtc_goes_to_judge(row)
        got = (vtc_rule_score(row), to_judge, vtc_judge_prompt_name(row) if to_judge else None)
        want = (float(out["rule_score"]), out["goes_to_llm_judge"], out["llm_judge_prompt"])
        if got != want:
            wrong.append((r["vector_id"], r["case"], got, want))
    assert wrong == []



MC = {"index": 1, "id": "chart_1", "category": "chart", "question": "Which share?", "answer": "C",
      "A": "9.1", "B": "14.9", "C": "12.8", "D": "10.5"}


@pytest.mark.parametrize(("pred", "official", "corrected"), [
    ("C", 1.0, 1.0), ("c. 12.8", 1.0, 1.0), ("C - x", 1.0, 1.0),
    ("C)", 0.0, 1.0), ("C:", 0.0, 1.0), ("(C)", 0.0, 1.0), ("**C**", 0.0, 1.0), ("Option C", 0.0, 1.0),
    ("Answer: C", 0.0, 1.0), ("12.8", 0.0, 1.0), ("B", 0.0, 0.0),
])
def test_letter_prefix_rule(pred: str, official: float, corrected: float) -> None:
    row = dict(MC, prediction=pred)
    assert vtc_rule_score(row) == official
    assert vtc_rule_score(row, "corrected") == corrected


def test_open_and_letter_gold_quirks() -> None:
    dog = dict(MC, answer="A", prediction="a dog")
    assert (vtc_rule_score(dog), vtc_rule_score(dog, "corrected")) == (1.0, 0.0)
    eel = {"question": "Which?", "answer": "E", "prediction": "Eel"}
    assert (vtc_rule_score(eel), vtc_rule_score(eel, "corrected")) == (1.0, 0.0)
    for gold, pred in [("8", "18"), ("the", "other"), ("yes", "yesterday"), ("1800", "18000")]:
        row = {"question": "q", "answer": gold, "prediction": pred}
        assert (vtc_rule_score(row), vtc_rule_score(row, "corrected")) == (1.0, 0.0), gold
    alt = {"question": "q", "answer": "['Steamed Pork Dumplinp','xiao long bao']", "prediction": "Xiao long bao"}
    assert (vtc_rule_score(alt), vtc_rule_score(alt, "corrected")) == (0.0, 1.0)
    nan = {"question": "q", "answer": "nan", "prediction": None}
    assert (vtc_rule_score(nan), vtc_rule_score(nan, "corrected")) == (1.0, 0.0)  # 'nan' == 'nan'
    no_opts = {"question": "q", "answer": "b", "prediction": "x"}
    assert vtc_judge_prompt_name(no_opts) == "open_yes_no"


def test_judge_prompts_verbatim() -> None:
    row = dict(MC, prediction="I think it is the third")
    p = vtc_judge_prompt(row)
    assert p.startswith("You are a information extractor that extracts multiple choice letter answer choices from")
    assert "If the answer sentence is incomplete or partial,  simply make a mistake and respond with Z.\n" in p
    assert p.endswith("Question: <start>\nWhich share?\nOptions: A. 9.1 B. 14.9 C. 12.8 D. 10.5 <end>\n"
                      "Answer: <start>\nI think it is the third\n<end>\nYour output: ")
    o = vtc_judge_prompt({"question": "q", "answer": "Paris", "prediction": "It is Paris"})
    assert "Ground Truth: Paris\nPredicted Answer: It is Paris\n\n" in o
    assert o.endswith("Answer with ONLY 'yes' or 'no'.\n")


def test_judge_reply_parsing() -> None:
    assert vtc_judge_hit("mcq_letter_extractor", "C", "C") == 1
    assert vtc_judge_hit("mcq_letter_extractor", "Z", "C") == 0
    assert vtc_judge_hit("mcq_letter_extractor", "C.", "C") is None
    assert vtc_judge_hit("mcq_letter_extractor", "C.", "C", "corrected") == 1
    assert vtc_judge_hit("mcq_letter_extractor", "B", "blue") == 0  # option-text gold never hits
    assert vtc_judge_hit("mcq_letter_extractor", "B", "blue", "corrected", gold_letter="B") == 1
    assert vtc_judge_hit("open_yes_no", " Yes\n", "x") == 1
    assert vtc_judge_hit("open_yes_no", "Yes.", "x") is None
    assert vtc_judge_hit("open_yes_no", "Yes.", "x", "corrected") == 1


class Judge(Model):
    """Replies from a list in order (the last one repeats); records prompts and configs."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__("scripted/vtc-judge")
        self.replies = replies
        self.prompts: list[str] = []
        self.configs: list[GenerateConfig] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.prompts.append(messages[-1].text)
        self.configs.append(config)
        reply = self.replies[min(len(self.prompts), len(self.replies)) - 1]
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=reply)]))


def _task(answer: str, options: dict[str, str] | None) -> Task:
    return Task(id="vtc-1", benchmark="vtc-bench", tags={"category": "chart"},
                turns=[Turn(prompt="Which share?\n\nOptions:\nA. 9.1\n", answer=answer, options=options,
                            meta={"question": "Which share?"})])


def _run(scorer: Any, task: Task, response: str, judge: Model | None) -> Score:
    return asyncio.run(scorer.score(task, [response], ScoreContext(judge=judge)))


OPTS = {"A": "9.1", "B": "14.9", "C": "12.8", "D": "10.5"}


def test_scorer_rule_then_judge_official() -> None:
    t = _task("C", OPTS)
    s = _run(VtcScorer(), t, "<think>..</think><answer>C</answer>", None)
    assert (s.value, s.details["goes_to_llm_judge"], s.judge_calls) == (1.0, False, [])
    s = _run(VtcScorer(), t, "<answer>C)</answer>", None)  # no judge configured: rules only
    assert (s.value, s.details["llm_judge_prompt"]) == (0.0, "mcq_letter_extractor")
    judge = Judge(["The answer is C", "C"])
    s = _run(VtcScorer(), t, "<answer>C)</answer>", judge)
    assert (s.value, s.passed, len(s.judge_calls)) == (1.0, True, 2)
    assert [c.temperature for c in judge.configs] == [0.0, 0.1]
    assert {c.max_tokens for c in judge.configs} == {128}
    assert "Options: A. 9.1 B. 14.9 C. 12.8 D. 10.5 <end>" in judge.prompts[0]


def test_scorer_judge_failures_and_corrected() -> None:
    t = _task("C", OPTS)
    s = _run(VtcScorer(), t, "<answer>third</answer>", Judge(["c."]))
    assert (s.value, len(s.judge_calls), s.error) == (0.0, 5, None)  # 5 unusable replies → 0
    s = _run(get_scorer("vtc-bench", "corrected"), t, "<answer>third</answer>", Judge(["c."]))
    assert (s.value, s.error) == (0.0, "the judge gave no usable reply in 3 attempt(s)")
    s = _run(get_scorer("vtc-bench", "corrected"), t, "<answer>third</answer>", Judge(["C."]))
    assert (s.value, len(s.judge_calls)) == (1.0, 1)
    blue = _task("blue", {"A": "red", "B": "blue", "C": "green"})
    assert _run(VtcScorer(), blue, "<answer>the second one</answer>", Judge(["B"])).value == 0.0
    assert _run(VtcScorer("corrected"), blue, "<answer>the second one</answer>", Judge(["B"])).value == 1.0
    open_t = _task("Paris", None)
    s = _run(VtcScorer(), open_t, "<answer>The capital city</answer>", Judge(["Yes"]))
    assert (s.value, s.details["llm_judge_prompt"]) == (1.0, "open_yes_no")
