"""Generated PhysToolBench-style scenes: well-formed, gold consistent with what is drawn, and solved by
the reference agent from the pixels through the classical detector's crops and OCR."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolsight.benchmarks.phystoolbench.generate import LEVELS, answer_of, generate_phystool


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("TOOLSIGHT_DETECT")}
    env["COLUMNS"] = "200"
    return env


def test_scenes_and_gold(tmp_path: Path) -> None:
    tasks = generate_phystool(8, 5, tmp_path / "g")
    assert [t.tags["difficulty"] for t in tasks] == list(LEVELS) * 2
    for t in tasks:
        turn = t.turns[0]
        objs = turn.meta["objects"]
        assert 3 <= len(objs) <= 6 and sorted(o["number"] for o in objs) == list(range(1, len(objs) + 1))
        assert turn.prompt == turn.meta["cot_prompt"] and turn.prompt.endswith('... or "None"\n```')
        assert turn.meta["no_cot_prompt"].endswith("or 'None'.") and "gold" not in json.dumps(turn.meta["reference_plan"])
        if t.tags["difficulty"] == "Medium-M3":
            assert turn.answer == "None"
        elif t.tags["difficulty"] == "Medium-M2":
            assert len(str(turn.answer).split(", ")) == 2
    objs = [{"number": 1, "shape": "disk", "broken": False, "size": 1.0},
            {"number": 2, "shape": "disk", "broken": True, "size": 1.0},
            {"number": 3, "shape": "bar", "broken": False, "size": 1.0}]
    assert answer_of(objs, ("disk",), "all") == "1" and answer_of(objs, ("bar", "disk"), "all") == "1, 3"
    assert answer_of(objs, ("square",), "all") == "None"
    again = generate_phystool(8, 5, tmp_path / "h")  # deterministic for a seed
    assert [t.turns[0].answer for t in again] == [t.turns[0].answer for t in tasks]


def test_reference_agent_solves_them_through_detection_and_ocr(tmp_path: Path) -> None:
    gen = subprocess.run([sys.executable, "-m", "toolsight", "generate", "phystool", "--n", "8", "--seed", "2",
                          "--out", str(tmp_path / "g")], capture_output=True, text=True, env=_env(), timeout=300)
    assert gen.returncode == 0, gen.stderr
    run = tmp_path / "run"
    r = subprocess.run([sys.executable, "-m", "toolsight", "run", "phystoolbench", "--data", str(tmp_path / "g"),
                        "--setting", "tools", "--model", "reference", "--out", str(run)],
                       capture_output=True, text=True, env=_env(), timeout=600)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert len(recs) == 8 and all(x["score"]["passed"] for x in recs), [x["trajectory"]["turns"] for x in recs]
    for x in recs:
        calls = x["trajectory"]["tool_calls"]
        assert calls[0]["name"] == "detect_and_crop_objects" and calls[0]["extra"]["backend"] == "classical"
        if x["tags"]["difficulty"] != "Medium-M3":  # M3: no working tool, so nothing to read
            assert {c["name"] for c in calls[1:]} == {"ocr"}
            assert all(c["inputs"][0] in calls[0]["artifacts"] for c in calls[1:])  # OCR ran on the crops
    assert "### Score % by difficulty" in r.stdout
