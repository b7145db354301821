"""VisBrowse-Bench: decryption and the official eval rule reproduce ../shared/fidelity/visbrowse-bench.jsonl.

The real sample at ../shared/data/visbrowse-bench is read in place (never copied into the repo).
"""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any

import pytest

from fidelitykit import vectors
from judgekit import ScriptedJudge
from sharedfiles import shared_file
from toolsight.benchmarks.registry import get_scorer
from toolsight.benchmarks.visbrowse_bench.scorer import (
    VisBrowseDataError,
    decrypt,
    decrypt_record,
    derive_key,
    load_decrypted,
    official_extract,
)
from toolsight.scoring.base import Score, ScoreContext
from toolsight.tasks.schema import Task, Turn

SAMPLE = "data/visbrowse-bench/data/VisBrowse-Bench.sample.jsonl"
# `judge_prompt` of the reference `eval.py` (ZhengboZhang/VisBrowse-Bench @ 10b95c0c), typed from it
# (not taken from toolsight, so a typo on either side fails the test; "groud truth" is the original's)
OFFICIAL_JUDGE_PROMPT = (
    '\nYou are a rigorous question-and-answer quality assessment expert. Given a question, your task is to compare '
    'the "groud truth" and the "model answer", determine whether they are semantically equivalent, and output "yes" '
    'or "no".\nquestion: {}\nground truth: {}\nmodel answer: {}\n'
)


def _vectors(prefix: str) -> list[dict[str, Any]]:
    return [r for r in vectors("visbrowse-bench") if r["vector_id"].startswith(prefix)]


def test_decryption_reproduces_every_vector() -> None:
    vectors = _vectors("vb-dec-")
    assert len(vectors) >= 20
    for vec in vectors:
        plain = decrypt_record(dict(vec["input"]))
        assert plain["question"] == vec["output"]["question"], vec["vector_id"]
        assert plain["answer"] == vec["output"]["answer"], vec["vector_id"]


def test_decrypting_the_shared_sample_matches_the_vectors() -> None:
    rows = {r["id"]: r for r in load_decrypted(shared_file(SAMPLE))}
    assert len(rows) == 44
    assert len({r["canary"] for r in rows.values()}) == 1
    assert sum(len(r["answer"]) == 2 for r in rows.values()) == 3  # 76, 79, 133
    for vec in _vectors("vb-dec-"):
        if vec["input"]["id"] in rows:
            assert rows[vec["input"]["id"]]["answer"] == vec["output"]["answer"]


def test_decryption_errors_are_clear(tmp_path: Path) -> None:
    with pytest.raises(VisBrowseDataError, match="not valid base64"):
        decrypt("abc", "k")  # bad padding
    vec = _vectors("vb-dec-")[0]["input"]
    key = derive_key(vec["canary"], 1)
    not_utf8 = base64.b64encode(bytes([0xFF ^ key[0]])).decode()
    with pytest.raises(VisBrowseDataError, match=r"\(id 1\).*wrong canary"):
        decrypt_record({**vec, "question": not_utf8})
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": 1, "question": "x"}) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(VisBrowseDataError, match=r"bad.jsonl:1: missing field 'canary'"):
        load_decrypted(bad)


def _task(item: dict[str, Any]) -> Task:
    return Task(id=str(item["id"]), benchmark="visbrowse",
                turns=[Turn(prompt=item["question"], answer=list(item["answer"]), answer_type="open")])


def _response(gen: str) -> str:
    # 'No answer' is what infer.py records when no <answer> tag ever came: give no tag at all
    return "I could not find it." if gen == "No answer" else f"Thinking...\n<answer>{gen}</answer>"


def _run(item: dict[str, Any], reply: str | None, mode: str, response: str | None = None) -> tuple[Score, ScriptedJudge]:
    judge = ScriptedJudge(default=reply if reply is not None else "UNEXPECTED JUDGE CALL")
    task = _task(item)
    resp = _response(item["gen"]) if response is None else response
    score = asyncio.run(get_scorer("visbrowse", mode).score(task, [resp], ScoreContext(judge=judge)))
    return score, judge


def test_official_eval_reproduces_every_vector() -> None:
    vectors = _vectors("vb-eval-")
    assert len(vectors) >= 20
    for vec in vectors:
        item, out = vec["input"]["item"], vec["output"]
        score, judge = _run(item, vec["input"]["stub_judge_reply"], "official")
        assert score.error is None, vec["vector_id"]
        assert score.details["gt_string"] == out["gt_string"], vec["vector_id"]
        assert score.details["judge"] == out["judge"], vec["vector_id"]
        assert score.details["llm_judge_called"] == out["llm_judge_called"] == bool(judge.prompts), vec["vector_id"]
        assert score.passed == out["correct"] and score.value == float(out["correct"]), vec["vector_id"]
        if judge.prompts:
            assert judge.prompts == [OFFICIAL_JUDGE_PROMPT.format(item["question"], out["gt_string"], item["gen"])]


def test_official_extraction_is_the_first_tag_unstripped() -> None:
    assert official_extract("<answer> a </answer> then <answer>b</answer>") == " a "
    assert official_extract("<ANSWER>a</ANSWER>") is None
    assert official_extract("<answer>multi\nline</answer>") == "multi\nline"


def test_corrected_mode_fixes_the_official_quirks() -> None:
    item = {"id": 1, "question": "Who?", "answer": ["Tom Conti"], "gen": "It was Tom Conti"}
    for reply in ("Yes", "yes\n", "Yes.", "**yes**", "Yes, they are equivalent."):
        score, _ = _run(item, reply, "corrected")
        assert score.passed is True, reply
    score, judge = _run(item, "no", "corrected", response="<answer> tom  conti </answer>")
    assert score.passed is True and not judge.prompts  # normalised shortcut, no judge call
    score, judge = _run({**item, "answer": ["The Revenant "]}, None, "corrected", response="<answer>The Revenant</answer>")
    assert score.passed is True and not judge.prompts
    score, judge = _run(item, None, "corrected", response="I do not know")
    assert score.answer is None and score.passed is False and not judge.prompts and score.error is None
    score, judge = _run(item, "I am not sure", "corrected")
    assert score.error is not None and "could not be parsed after 3" in score.error and len(judge.prompts) == 3
    # last complete tag wins in corrected mode, the first one in official mode
    two = "<answer>draft</answer> ... <answer>Tom Conti</answer>"
    assert _run(item, None, "corrected", response=two)[0].passed is True
    assert _run(item, "no", "official", response=two)[0].details["gen"] == "draft"


def test_no_judge_configured_gives_a_score_error() -> None:
    task = _task({"id": 1, "question": "Who?", "answer": ["Tom Conti"]})
    score = asyncio.run(get_scorer("visbrowse", "official").score(task, ["<answer>maybe Tom</answer>"], ScoreContext()))
    assert score.error is not None and "--judge" in score.error
    score = asyncio.run(get_scorer("visbrowse", "official").score(task, ["<answer>Tom Conti</answer>"], ScoreContext()))
    assert score.passed is True  # the exact-match shortcut needs no judge
