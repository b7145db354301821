"""PhysToolBench: the official parse and set comparison reproduce every line of
tests/fidelity/vectors/phystoolbench.jsonl; corrected mode fixes the listed parsing bugs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from fidelitykit import vectors
from toolsight.benchmarks.phystoolbench.scorer import (
    PhysToolScorer,
    phystool_correct,
    phystool_normalize,
    phystool_parse_cot,
    phystool_parse_no_cot,
)
from toolsight.benchmarks.registry import get_scorer
from toolsight.scoring.base import Score, ScoreContext
from toolsight.tasks.schema import Task, Turn


def _vectors() -> list[dict[str, Any]]:
    return vectors("phystoolbench")


def _official(inp: dict[str, Any]) -> dict[str, Any]:
    cot = phystool_parse_cot(inp["cot_response"])
    no_cot = phystool_parse_no_cot(inp["no_cot_response"])
    gold = inp["correct_tool"]
    return {"cot_answer": cot, "no_cot_answer": no_cot,
            "normalized_cot": sorted(phystool_normalize(cot)), "normalized_no_cot": sorted(phystool_normalize(no_cot)),
            "normalized_gt": sorted(phystool_normalize(gold)),
            "cot_correct": phystool_correct(cot, gold), "no_cot_correct": phystool_correct(no_cot, gold)}


def test_official_reproduces_every_vector() -> None:
    rows = _vectors()
    assert len(rows) >= 40
    wrong = [(r["vector_id"], r["case"]) for r in rows if _official(r["input"]) != r["output"]]
    assert wrong == []


@pytest.mark.parametrize(("response", "official", "corrected"), [
    ("### Thinking Process\nx\n### Answer:\n1", ":1", "1"),
    ("### Thinking Process\nx\n### Answers\n1, 2", "s1, 2", "1, 2"),
    ("## Answer\n2", "", "2"),
    ("### Answer\n3\n\nExplanation: object 3 is a hammer.", "3Explanation: object 3 is a hammer.", "3"),
    ("### Answer\n1\n2", "12", "1, 2"),
    ("### Answer\n```\n1, 4\n```", "1, 4", "1, 4"),
    ("### Answer\n1, 4'''\ntrailing", "1, 4", "1, 4"),
    ("no heading at all: 1", "", ""),
])
def test_cot_parse(response: str, official: str, corrected: str) -> None:
    assert phystool_parse_cot(response) == official
    assert phystool_parse_cot(response, "corrected") == corrected


def test_normalisation() -> None:
    assert phystool_correct("2, 1,", "1, 2") and phystool_correct("1, 1", "1")
    assert not phystool_correct("none", "None")
    assert phystool_correct("none", "None", "corrected")
    for pred in ['"1"', "**1**", "[1]", "1.", "Object 1", "١"]:
        assert not phystool_correct(pred, "1"), pred
        assert phystool_correct(pred, "1", "corrected"), pred
    assert phystool_correct("4，5", "4, 5", "corrected") and not phystool_correct("4，5", "4, 5")
    assert not phystool_correct("The answer is 1", "1", "corrected")  # sentences are not parsed
    assert phystool_parse_no_cot("```\n1, 2\n```") == "```\n1, 2\n```"
    assert phystool_correct(phystool_parse_no_cot("```\n1, 2\n```", "corrected"), "1, 2", "corrected")


def _task(gold: str, **meta: Any) -> Task:
    return Task(id="Easy_0001", benchmark="phystoolbench", tags={"difficulty": "Easy"},
                turns=[Turn(prompt="Which object can be used?", answer=gold, meta=meta)])


def _score(scorer: Any, task: Task, response: str) -> Score:
    return asyncio.run(scorer.score(task, [response], ScoreContext()))


def test_scorer_settings_and_registry() -> None:
    cot = "### Thinking Process\nThe hammer.\n### Answer\n2, 1"
    s = _score(get_scorer("phystoolbench"), _task("1, 2"), cot)
    assert (s.value, s.passed, s.answer, s.details["normalized_pred"]) == (1.0, True, "2, 1", ["1", "2"])
    assert _score(get_scorer("phystoolbench-no-cot"), _task("1, 2"), cot).value == 0.0
    assert _score(PhysToolScorer(), _task("1, 2", setting="no_cot"), "1,2").value == 1.0
    s = _score(PhysToolScorer(), _task("None"), "### Thinking\nnothing fits")
    assert (s.value, s.answer) == (0.0, None)
    s = _score(PhysToolScorer(), _task("1", setting="both"), "1")
    assert s.error is not None and "setting" in s.error
    with pytest.raises(ValueError, match="no_cot"):
        PhysToolScorer(setting="direct")  # type: ignore[arg-type]
