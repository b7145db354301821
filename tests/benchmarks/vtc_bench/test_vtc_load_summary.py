"""The VTC-Bench load summary says what the join leaves out (issue 28, item 10): rows without a
toolchain are left out of the chain metrics (how many tasks and steps remain), and a row whose gold is an
option letter but which has no options loads as an open question — both named when `toolsight run` starts."""

from __future__ import annotations

import csv
from pathlib import Path

from clikit import ts
from goldenwirekit import stand_in

COLUMNS = ["index", "id", "category", "image", "question", "answer", "A", "B", "C", "D"]


def _data(root: Path) -> Path:
    rows = [  # id, question, answer, options
        ("chart_1", "How tall is the first bar?", "C", ["1", "2", "3", "4"]),
        ("chart_2", "How tall is the second bar? (reworded in the main file)", "A", ["1", "2", "3", "4"]),
        ("counting_69", "How many cups are there?", "B", ["", "", "", ""]),
    ]
    root.mkdir(parents=True)
    with (root / "VTC-Bench.tsv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow(COLUMNS)
        for i, (rid, q, a, opts) in enumerate(rows, start=1):
            w.writerow([str(i), rid, rid.split("_")[0], f"images/{rid}.jpg", q, a, *opts])
            stand_in(root / "images" / f"{rid}.jpg", 120, 90)
    with (root / "VTC-Bench_GTToolChain.tsv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter="\t")
        w.writerow([*COLUMNS, "model_tools_gt"])
        w.writerow(["1", "chart_1", "chart", "images/chart_1.jpg", rows[0][1], "C", "1", "2", "3", "4",
                    '["Crop", "Binarize", "Threshold"]'])
    return root


def test_the_load_summary_names_chain_coverage_and_letter_golds_without_options(tmp_path: Path) -> None:
    data = _data(tmp_path / "vtc")
    r = ts("run", "vtc-bench", "--data", str(data), "-m", "random", "--setting", "base", "--out", str(tmp_path / "run"),
           "--no-report")
    assert r.returncode == 0, r.stderr
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert any("chain metrics cover 1 of 3 task(s), 3 reference step(s)" in n for n in notes), notes
    assert any("1 row(s) with an option-letter gold but no options load as open questions" in n and "counting_69" in n
               for n in notes), notes
    assert any("main rows without a toolchain: chart_2, counting_69" in n for n in notes), notes
