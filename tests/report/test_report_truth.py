"""Reports show only what applies to the runs and say only what is true (issue 26 item 14), through the
real CLI on real run directories made by the `random` and `reference` baselines:

- no tool tables and no tool plots for a setting that offers no tools (a mixed report leaves such runs
  out of the tool tables and says so);
- a tie for best is not bold (several runs at 0.0), a unique best still is;
- `report --by KEY` with a key no task has is one error line naming the key, the closest key and the
  runs' keys, exit 2, and nothing written;
- TIR-Bench's task columns come in the paper's Table 2 order;

and with a run's `artifacts/` deleted, `report`, `view` and `score` say so in one line and go on (item 15).
"""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
from pathlib import Path

import pytest

from clikit import assert_one_error_line, dataset, ts, write_png

#: TIR-Bench Table 2, left to right (Color, Pro., OCR, SR, Maze, Math, WS, LL-VQA, IR, SD, JG, VS, RG), by
#: the release's task keys — written out here, not read from the code under test
TABLE2 = ["color", "refcoco", "ocr", "symbolic", "maze", "math", "word_search", "contrast", "instrument",
          "spot_difference", "jigsaw", "visual_search", "rotation_game"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """12 two-option tasks run four ways: `random` without tools (direct) and with a tool offered (crop);
    `reference` (no solutions in this set: every answer wrong, all 0.0) without and with tools."""
    root = tmp_path_factory.mktemp("truth")
    ds = dataset(root / "ds", 12)
    out: dict[str, Path] = {}
    for name, model, setting in (("direct", "random", "direct"), ("crop", "random", "crop"),
                                 ("ref-direct", "reference", "direct"), ("ref-crop", "reference", "crop")):
        r = ts("run", str(ds), "-m", model, "--setting", setting, "--out", str(root / name), "--no-report")
        assert r.returncode == 0, r.stderr
        out[name] = root / name
    return out


def _section(md: str, title: str) -> str:
    return md.split(f"### {title}\n", 1)[1].split("###", 1)[0] if f"### {title}\n" in md else ""


def test_a_setting_without_tools_gets_no_tool_tables_or_plots(runs: dict[str, Path], tmp_path: Path) -> None:
    alone = ts("report", str(runs["direct"]), "--out", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    assert "### Score\n" in alone.stdout
    for title in ("Tool use", "Tool-call share %"):
        assert f"### {title}\n" not in alone.stdout, title
    assert sorted(p.name for p in (tmp_path / "alone").iterdir()) == ["records.csv", "report.md"]  # no tool plots
    both = ts("report", str(runs["direct"]), str(runs["crop"]), "--out", str(tmp_path / "both"))
    assert both.returncode == 0, both.stderr
    tools = _section(both.stdout, "Tool use")
    assert "| random | crop |" in tools and "| random | direct |" not in tools, tools
    assert "Not shown (no tools offered): random · direct." in tools
    assert (tmp_path / "both" / "accuracy_vs_proactivity.png").is_file()  # the crop run offers a tool


def _score_marks(text: str) -> dict[str, str]:
    rows = csv.DictReader(io.StringIO(text))
    return {r["Setting"] + "/" + r["Model"]: r["mark"] for r in rows
            if r["table"] == "Score" and r["column"].startswith("Score %") and r["Setting"] != "–"}


def test_a_tie_for_best_is_not_bold_and_a_unique_best_is(runs: dict[str, Path]) -> None:
    tied = ts("report", str(runs["ref-direct"]), str(runs["ref-crop"]), "--format", "csv")
    assert tied.returncode == 0, tied.stderr
    values = {r["Setting"]: r["value"] for r in csv.DictReader(io.StringIO(tied.stdout))
              if r["table"] == "Score" and r["column"].startswith("Score %")}
    assert values == {"direct": "0.0", "crop": "0.0"}, values
    assert set(_score_marks(tied.stdout).values()) == {""}  # two runs at 0.0: nobody is "best"
    md = ts("report", str(runs["ref-direct"]), str(runs["ref-crop"]))
    assert "**" not in _section(md.stdout, "Score") and "a tie is not marked" in md.stdout
    three = ts("report", str(runs["direct"]), str(runs["ref-direct"]), str(runs["ref-crop"]), "--format", "csv")
    marks = _score_marks(three.stdout)
    assert marks == {"direct/random": "best", "direct/reference": "", "crop/reference": ""}, marks
    # a tie at the top with a run below it: `random` guesses alike with and without a tool it never calls
    top = ts("report", str(runs["direct"]), str(runs["crop"]), str(runs["ref-direct"]), "--format", "csv")
    values = {r["Setting"] + "/" + r["Model"]: r["value"] for r in csv.DictReader(io.StringIO(top.stdout))
              if r["table"] == "Score" and r["column"].startswith("Score %") and r["Setting"] != "–"}
    assert values["direct/random"] == values["crop/random"] != "0.0" == values["direct/reference"], values
    marks = _score_marks(top.stdout)
    assert marks == {"direct/random": "", "crop/random": "", "direct/reference": ""}, marks


def test_by_a_key_no_task_has_is_one_line_with_the_keys_there_are(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "rep"
    r = ts("report", str(runs["direct"]), "--by", "categry", "--out", str(out))
    assert_one_error_line(r, 2, "--by categry", "no task of the run(s) has the key 'categry'",
                          "did you mean 'category'?", "the runs' keys: category, level", "turn_type")
    assert not (out / "records.csv").exists() and not (out / "report.md").exists()
    pair = ts("report", str(runs["direct"]), "--by", "category+levle")
    assert_one_error_line(pair, 2, "--by category+levle", "'levle'", "did you mean 'level'?")
    ok = ts("report", str(runs["direct"]), "--by", "category+level", "--by", "turn_type")
    assert ok.returncode == 0 and "### Score % by category+level" in ok.stdout, ok.stderr


def test_tir_bench_task_columns_come_in_table_2_order(tmp_path: Path) -> None:
    data = tmp_path / "tir"
    write_png(data / "data" / "pic.png")
    keys = sorted(TABLE2)  # alphabetical in the file: the order must come from the benchmark, not the data
    random.Random(3).shuffle(keys)
    recs = [{"id": i, "task": k, "prompt": f"Which one? (A) left (B) right (C) up (D) down [{k}]",
             "answer": "A", "image_1": "data/pic.png"} for i, k in enumerate(keys)]
    (data / "TIR-Bench.json").write_text(json.dumps(recs), encoding="utf-8")
    run = tmp_path / "run"
    r = ts("run", "tir-bench", "--data", str(data), "-m", "random", "--setting", "direct", "--out", str(run),
           "--no-report")
    assert r.returncode == 0, r.stderr
    rep = ts("report", str(run), "--by", "task", "--format", "json")
    assert rep.returncode == 0, rep.stderr
    columns = [row["column"] for row in json.loads(rep.stdout)["tables"]["Score % by task"]
               if row["Model"] == "random"]
    assert columns == ["Overall", *TABLE2], columns


# ---- issue 26 item 15: a run whose images are gone ----------------------------------------------------------------

def test_report_view_and_score_warn_when_artifacts_are_gone_and_go_on(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 4)
    run = tmp_path / "run"
    r = ts("run", str(ds), "-m", "random", "--out", str(run), "--no-report")
    assert r.returncode == 0 and (run / "artifacts").is_dir(), r.stderr
    whole = [ts("report", str(run)), ts("view", str(run), "--out", str(tmp_path / "v0"))]
    assert all(x.returncode == 0 and "warning" not in x.stderr for x in whole), [x.stderr for x in whole]
    shutil.rmtree(run / "artifacts")
    folder = str(run / "artifacts")
    for argv, then in ((["report", str(run)], "the report's numbers come from records.jsonl"),
                       (["view", str(run), "--out", str(tmp_path / "v1")], "the trace viewer shows those images as missing"),
                       (["score", str(run), "--name", "again"], "scoring reads the final responses only")):
        x = ts(*argv)
        assert x.returncode == 0, (argv, x.stderr)
        warnings = [ln for ln in x.stderr.splitlines() if ln.startswith("warning:")]
        assert len(warnings) == 1, (argv, x.stderr)
        assert f"warning: {folder} is missing" in warnings[0] and then in warnings[0], warnings
        assert "Traceback" not in x.stderr
    assert (tmp_path / "v1" / "index.html").is_file() and (run / "scores-again.jsonl").is_file()
