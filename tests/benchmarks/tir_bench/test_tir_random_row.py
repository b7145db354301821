"""Issue 28, item 11: the expected random row of TIR-Bench computed as the paper's (Table 2's first
row, Table 4): Rotated OCR has no random value ("-") and is left out of "All"; a jigsaw's random
answer is a random permutation (expected position accuracy 1/n²); options give 1/k. Run as typed:
`toolsight run tir-bench --data OFFICIAL -m random`, then `toolsight report RUN --by task_name`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from clikit import ts
from toolsight.benchmarks.tir_bench.data import export_official
from toolsight.benchmarks.tir_bench.generate import generate

EXPECTED = "random guess (expected)"


def test_the_random_row_leaves_ocr_out_and_counts_a_jigsaw_as_a_random_permutation(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    tasks = [*generate("ocr", 2, 1, gen), *generate("rotation_game", 2, 5, gen),
             *generate("jigsaw", 2, 3, gen, difficulty=3)]
    export_official(tasks, gen, tmp_path / "official")
    run = tmp_path / "run"
    r = ts("run", "tir-bench", "--data", str(tmp_path / "official"), "-m", "random", "--setting", "direct",
           "--out", str(run), "--no-report")
    assert r.returncode in (0, 3), r.stderr  # 3: a random guess may score nothing
    rep = ts("report", str(run), "--by", "task_name", "--format", "csv")
    assert rep.returncode == 0, rep.stderr
    rows = {(x["table"], x["column"]): x["value"] for x in csv.DictReader(io.StringIO(rep.stdout))
            if x["Model"] == EXPECTED}
    by = "Score % by task_name"
    assert rows[(by, "Rotated OCR")] == ""  # the paper's "-", not 0
    assert float(rows[(by, "Jigsaw")]) == pytest.approx(100 / 9)  # 3×3: one fixed point in nine expected
    assert float(rows[(by, "Rotation Game")]) == pytest.approx(100 / 6)  # six angle options
    # "All" over the tasks with a random value (the paper's 13.5 is over 1,155 of 1,215): (2/6 + 2/9) / 4
    overall = (2 / 6 + 2 / 9) / 4 * 100
    assert float(rows[(by, "Overall")]) == pytest.approx(overall)
    assert float(rows[("Score", "Score % [95% CI]")]) == pytest.approx(overall)
