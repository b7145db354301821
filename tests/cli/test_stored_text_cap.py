"""A huge answer is stored capped (issue 26, item 7): a record keeps at most `MAX_STORED_TEXT`
characters of one text (head and tail around a marker), the record says how many texts were cut,
and the score — computed on the capped text — is the same when the stored run is scored again."""

from __future__ import annotations

import json
from pathlib import Path

from clikit import dataset, records, ts
from toolsight.log.textcap import MAX_STORED_TEXT, cap_text
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


def test_cap_text_keeps_head_and_tail() -> None:
    text = "H" * 10 + "m" * 100 + "T" * 10
    out = cap_text(text, limit=20)
    assert out.startswith("H" * 10 + "\n[… 100 characters cut") and out.endswith("…]\n" + "T" * 10)
    assert cap_text(text, limit=len(text)) == text


def test_a_huge_answer_is_stored_capped_and_scores_the_same_again(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 1)  # gold A
    answer = "x" * (3 * MAX_STORED_TEXT) + " <answer>A</answer>"  # the answer at the very end
    run = tmp_path / "run"
    with ScriptedServer(Script(steps=[Step(text=answer)])) as srv:
        r = ts("run", str(ds), "-m", "openai/m", "--base-url", srv.openai_base_url, "--out", str(run), "--no-report")
    assert r.returncode == 0, r.stderr
    size = (run / "records.jsonl").stat().st_size
    assert size < 2 * MAX_STORED_TEXT + 200_000, size  # two capped copies (transcript and turn), not 6 MB
    (rec,) = records(run)
    assert rec["extra"]["texts_cut"] == 2
    response = rec["trajectory"]["turns"][0]["response"]
    assert len(response) < MAX_STORED_TEXT + 200 and "characters cut" in response
    assert response.endswith("<answer>A</answer>") and rec["score"]["passed"] is True
    again = ts("score", str(run), "--name", "again")
    assert again.returncode == 0, again.stderr
    (line,) = (run / "scores-again.jsonl").read_text().splitlines()
    assert json.loads(line)["score"]["passed"] is True
