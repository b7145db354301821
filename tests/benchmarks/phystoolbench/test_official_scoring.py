"""The benchmark's scorers (official mode) reproduce every PhysToolBench fidelity vector, for the CoT
and the no-CoT setting; the corrected mode forgives formatting only."""

from __future__ import annotations

import asyncio
import json

from sharedfiles import shared_file
from toolsight.benchmarks.phystoolbench.benchmark import PhysToolBenchmark
from toolsight.benchmarks.phystoolbench.data import make_task
from toolsight.scoring.base import ScoreContext


def _score(setting: str, mode: str, gold: str, response: str) -> tuple[bool, str | None]:
    t = make_task("x", "Easy", "a.png", gold, "Q\nNoted that c", "Q\nNoted that n")
    s = asyncio.run(PhysToolBenchmark().scorer(setting, mode).score(t, [response], ScoreContext()))
    assert s.error is None
    return bool(s.passed), s.answer


def test_every_fidelity_vector() -> None:
    vectors = [json.loads(x) for x in shared_file("fidelity/phystoolbench.jsonl").read_text().splitlines() if x.strip()]
    assert len(vectors) >= 40
    for v in vectors:
        i, o = v["input"], v["output"]
        ok, ans = _score("cot", "official", i["correct_tool"], i["cot_response"])
        assert ok == o["cot_correct"] and (ans or "") == o["cot_answer"], v["vector_id"]
        ok, ans = _score("no-cot", "official", i["correct_tool"], i["no_cot_response"])
        assert ok == o["no_cot_correct"] and (ans or "") == o["no_cot_answer"], v["vector_id"]
        ok_both, _ = _score("both", "official", i["correct_tool"], i["cot_response"])  # meta-less task: CoT
        assert ok_both == o["cot_correct"]


def test_corrected_forgives_formatting_only() -> None:
    assert _score("cot", "corrected", "1, 2", "### Answer:\n**2**, 1.")[0]
    assert not _score("cot", "official", "1, 2", "### Answer:\n**2**, 1.")[0]
    assert _score("no-cot", "corrected", "None", "none")[0]
    assert not _score("cot", "corrected", "1, 2", "### Answer\n1, 3")[0]  # a wrong set stays wrong
    assert not _score("no-cot", "corrected", "3", "The answer is 3")[0]  # prose is not formatting
