"""The offline VisualToolBench demo: the generated set in the official layout (and its offline web corpus),
solved by `--model reference` through the real tools in both loops and scored by the deterministic rubric
checker (no judge)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolsight.benchmarks.registry import get_benchmark, get_scorer
from toolsight.benchmarks.visualtoolbench.generate import generate_rows
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart
from toolsight.scoring.base import ScoreContext
from toolsight.scoring.rubric_check import check_answer
from toolsight.tools.base import ToolSpec


def _ts(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["COLUMNS"] = "250"
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          timeout=500)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("vtbdemo") / "set"
    r = _ts("generate", "vtb", "--n", "8", "--seed", "3", "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("loop", ["official", "toolsight"])
def test_reference_solves_the_generated_set(demo: Path, tmp_path: Path, loop: str) -> None:
    run = tmp_path / "run"
    r = _ts("run", "visualtoolbench", "--data", str(demo), "--model", "reference", "--out", str(run),
            "--cap", f"loop={loop}")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert len(recs) == 8 and all(x["error"] is None for x in recs)
    for x in recs:
        assert x["score"]["passed"] is True and x["score"]["value"] == 1.0, (x["task_id"], x["score"]["explanation"])
        assert {c["model"] for c in x["score"]["judge_calls"]} == {"rubric-check"}
        names = {c["name"] for c in x["trajectory"]["tool_calls"]}
        assert "python_image_processing" in names and all(c["ok"] for c in x["trajectory"]["tool_calls"])
    used = {c["name"] for x in recs for c in x["trajectory"]["tool_calls"]}
    assert used == {"python_image_processing", "python_interpreter", "calculator", "google_search",
                    "browser_get_page_text", "historical_weather"}
    assert sum(1 for x in recs if len(x["trajectory"]["turns"]) == 2) == 3
    # the web tasks read the demo's own corpus (served on 127.0.0.1), the default --web for this data
    web = json.loads((run / "manifest.json").read_text())["backends"]["web"]
    assert web["mode"] == "offline" and web["backend"]["corpus"] == str((demo / "corpus").resolve())
    lookup = next(x for x in recs if any(c["name"] == "browser_get_page_text" for c in x["trajectory"]["tool_calls"]))
    page = next(c for c in lookup["trajectory"]["tool_calls"] if c["name"] == "browser_get_page_text")
    assert "gold medals" in page["text"] and "rowing-clubs.test" in page["text"]
    # the report prints the paper's breakdowns without --by
    assert "### APR % by turncase+domain" in r.stdout and "### Tool use by turncase" in r.stdout
    assert "### Score % by task_category" in r.stdout


def test_the_checker_fails_a_wrong_answer(demo: Path) -> None:
    bench = get_benchmark("visualtoolbench")
    tasks = bench.load(demo).tasks
    task = next(t for t in tasks if t.tags["task_category"] == "Region-Switch Q&A")
    scorer = get_scorer("visualtoolbench", "official")
    score = asyncio.run(scorer.score(task, ["I think there are 1000 more."], ScoreContext()))
    assert score.passed is False and score.value == 0.0
    rows = score.details["rubrics"]
    assert all(r["met"] is False for r in rows) and rows[0]["critical"] is True
    ok, why = check_answer({"number": 5, "tol": 0}, "five (5) of them")
    assert ok and why == "all checks hold"
    assert check_answer({"contains": ["%"], "any": ["green"]}, "The green bar is 40.0%.")[0]
    assert not check_answer({"not_contains": ["17"]}, "it costs $17")[0]


def test_without_checks_or_judge_the_score_says_pass_judge(demo: Path) -> None:
    task = get_benchmark("visualtoolbench").load(demo).tasks[0]
    bare = task.model_copy(update={"turns": [t.model_copy(update={"meta": {}}) for t in task.turns]})
    score = asyncio.run(get_scorer("visualtoolbench", "official").score(bare, ["x"], ScoreContext()))
    assert score.error is not None and "--judge" in score.error


def test_generation_is_deterministic() -> None:
    a, b = generate_rows(4, seed=9), generate_rows(4, seed=9)
    assert [r["turn_golden_answers"] for r in a] == [r["turn_golden_answers"] for r in b]
    assert a[0]["images"][0]["bytes"] == b[0]["images"][0]["bytes"]
    assert generate_rows(4, seed=10)[0]["turn_golden_answers"] != a[0]["turn_golden_answers"]


class _Judge(Model):
    """An in-process judge: 'Not Met' for every rubric, then an error category."""

    def __init__(self) -> None:
        super().__init__("test/judge")
        self.prompts: list[str] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        text = messages[-1].text
        self.prompts.append(text)
        reply = ('{"explanation": "miscounted", "error_category": "Visual_Perception"}' if "error_category" in text
                 else '{"explanation": "no", "judge_result": "Not Met"}')
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text=reply)]))


def test_error_analysis_classifies_failed_tasks(demo: Path) -> None:
    task = get_benchmark("visualtoolbench").load(demo).tasks[0]
    judge = _Judge()
    score = asyncio.run(get_scorer("visualtoolbench-errors", "official").score(
        task, ["There are 2 more."], ScoreContext(judge=judge)))
    assert score.passed is False and score.details["error_category"] == "visual perception"
    analysis = judge.prompts[-1]
    assert "visual perception" in analysis and task.turns[0].prompt in analysis and "There are 2 more." in analysis
    assert analysis.count("(turn 1, weight") == len(task.turns[0].rubrics)  # every unmet rubric listed
    assert len(score.judge_calls) == len(task.turns[0].rubrics) + 1


def test_the_web_tasks_need_the_web(demo: Path) -> None:
    """The demo's web facts are only in its corpus: the medal total is on the club's page, the temperatures in
    weather.json — neither in the prompt or the picture — and the answer is wrong without them."""
    tasks = get_benchmark("visualtoolbench").load(demo).tasks
    lookup = next(t for t in tasks if any(c["tool"] == "browser_get_page_text"
                                          for c in t.turns[0].meta.get("reference_calls", [])))
    weather = next(t for t in tasks if len(t.turns) == 2 and any(
        c["tool"] == "historical_weather" for c in t.turns[1].meta.get("reference_calls", [])))
    total = lookup.turns[0].meta["rubric_checks"]["rubric_2"]["number"]
    pages = [p.read_text() for p in (demo / "corpus" / "pages").rglob("*.html")]
    assert sum(f"won {total} gold medals" in p for p in pages) >= 1
    assert str(total) not in lookup.turns[0].prompt
    recorded = json.loads((demo / "corpus" / "weather.json").read_text())
    assert recorded["format"] == "toolsight-weather/1" and "not observations" in recorded["note"]
    high = weather.turns[1].meta["rubric_checks"]["rubric_2"]["number"]
    days = [d for p in recorded["places"] for d in p["days"].values()]
    assert high in [d["temperature_max"] for d in days] and str(high) not in weather.turns[1].prompt
    score = asyncio.run(get_scorer("visualtoolbench", "official").score(
        weather, ["4 boats.", "I cannot look that up."], ScoreContext()))
    assert score.passed is False
