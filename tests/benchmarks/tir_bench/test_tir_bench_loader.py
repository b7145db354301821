"""The TIR-Bench loader on fixtures in the exact official release format (built from generated images)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolsight.benchmarks.tir_bench.data import (
    SETTINGS,
    TASK_NAMES,
    TirBenchError,
    answer_type,
    download_tir_bench,
    export_official,
    load_tir_bench,
    parse_options,
)
from toolsight.benchmarks.tir_bench.generate import KINDS, make_tasks


def _official(tmp_path: Path) -> tuple[Path, list]:  # type: ignore[type-arg]
    src = tmp_path / "gen"
    tasks = []
    for kind in KINDS:
        tasks += make_tasks(kind, 2, seed=5, out_dir=src)
    return export_official(tasks, src, tmp_path / "TIR-Bench"), tasks


def test_roundtrip_official_format(tmp_path: Path) -> None:
    folder, generated = _official(tmp_path)
    records = json.loads((folder / "TIR-Bench.json").read_text())
    assert isinstance(records, list)
    assert set(records[0]) <= {"id", "task", "prompt", "answer", "image_1", "image_2", "meta_data"}
    sd = next(r for r in records if r["task"] == "spot_difference")
    assert sd["image_1"].startswith("data/spot_difference/") and sd["image_2"].endswith("_right.png")
    jig = next(r for r in records if r["task"] == "jigsaw")
    assert jig["meta_data"] == {"difficulty": 3} and jig["answer"].startswith("[")

    root, tasks = load_tir_bench(folder)
    assert root == folder and len(tasks) == len(generated)
    for got, want in zip(tasks, generated, strict=True):
        gt, wt = got.turns[0], want.turns[0]
        assert got.benchmark == "tir-bench" and got.tags["task"] == want.tags["task"]
        assert got.tags["task_name"] == TASK_NAMES[want.tags["task"]] == want.tags["task_name"]
        assert gt.prompt == wt.prompt and gt.answer == wt.answer
        assert gt.options == wt.options, got.id
        assert gt.answer_type == wt.answer_type, got.id
        assert all((root / i.path).is_file() for i in gt.images)
    j = next(t for t in tasks if t.tags["task"] == "jigsaw")
    assert j.tags["difficulty"] == "3" and j.turns[0].meta["difficulty"] == 3
    # loading the JSON file directly works too
    assert len(load_tir_bench(folder / "TIR-Bench.json")[1]) == len(tasks)


def test_hand_written_records_map_names_options_and_types(tmp_path: Path) -> None:
    folder, _ = _official(tmp_path)
    img = json.loads((folder / "TIR-Bench.json").read_text())[0]["image_1"]
    recs = [
        {"id": 1, "task": "refcoco", "answer": "A", "image_1": img,
         "prompt": "Which of the following values is the closest to the proportion of the image occupied by man?\nA: 65%\nB: 73%\nC: 57%"},
        {"id": 2, "task": "contrast", "answer": "5", "image_1": img, "prompt": "How many people are in the image?"},
        {"id": 3, "task": "color", "answer": "D", "image_1": img,
         "prompt": "How many colors are there in this flag? Select from the following choices. (A) 8 (B) 9 (C) 10 (D) 11"},
        {"id": 4, "category": "instrument", "answer": "9.5", "image_1": "./" + img, "image_2": None,
         "prompt": "What is the gauge reading in psi? Provide one decimal place (e.g., 1.1)."},
        {"id": 5, "task": "symbolic", "answer": "CD", "image_1": img,
         "prompt": "Which pair of lines are parallel?\nA.ab and cd\nB.ef and gh\nC.ab and gh\nD.ef and cd\nE.none of the above"},
    ]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "TIR-Bench.json").write_text(json.dumps(recs))
    (tmp_path / "mine" / "data").symlink_to(folder / "data")
    _, tasks = load_tir_bench(tmp_path / "mine")
    by = {t.id: t for t in tasks}
    assert by["tir-1"].tags == {"task": "refcoco", "task_name": "Proportion VQA"}
    assert by["tir-1"].turns[0].options == {"A": "65%", "B": "73%", "C": "57%"}
    assert by["tir-2"].tags["task_name"] == "Low-Light VQA" and by["tir-2"].turns[0].answer_type == "integer"
    assert by["tir-3"].turns[0].options == {"A": "8", "B": "9", "C": "10", "D": "11"}
    assert by["tir-4"].tags["task_name"] == "Instrument Reading" and by["tir-4"].turns[0].answer_type == "number"
    assert by["tir-4"].turns[0].images[0].path == img
    assert by["tir-5"].turns[0].answer_type == "choice" and len(by["tir-5"].turns[0].options or {}) == 5


def test_parse_options_and_answer_types() -> None:
    rot = "How many degrees ... CLOCKWISE ...?\n\nA. 10°\nB. 355°\nC. 40°"
    assert parse_options(rot) == {"A": "10°", "B": "355°", "C": "40°"}
    assert parse_options("A. 240° B. 230° C. 255°") == {"A": "240°", "B": "230°", "C": "255°"}
    assert parse_options("what is written in the image?") is None
    assert answer_type("jigsaw", "[1, 2, 3, 4]", None) == "list"
    assert answer_type("spot_difference", "6", None) == "integer"
    assert answer_type("spot_difference", "1, 3, 7", None) == "set"
    assert answer_type("word_search", "[54, 50]", None) == "list"
    assert answer_type("ocr", "17100", None) == "text"


def test_bad_data_gives_one_clear_message(tmp_path: Path) -> None:
    with pytest.raises(TirBenchError, match="does not exist"):
        load_tir_bench(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TirBenchError, match=r"no TIR-Bench.json in .*huggingface.co/datasets/Agents-X/TIR-Bench"):
        load_tir_bench(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "TIR-Bench.json").write_text('[{"id": 1,\n "task": }]')
    with pytest.raises(TirBenchError, match=r"TIR-Bench.json:2: not valid JSON"):
        load_tir_bench(bad)
    (bad / "TIR-Bench.json").write_text(json.dumps([{"id": 7, "task": "maze", "prompt": "p", "answer": "A",
                                                     "image_1": "data/maze/x.png"}]))
    with pytest.raises(TirBenchError, match=r"record 0 \(id 7\): image not found: .*unzip data.zip"):
        load_tir_bench(bad)
    assert load_tir_bench(bad, check_images=False)[1][0].id == "tir-7"
    (bad / "TIR-Bench.json").write_text(json.dumps([{"id": 7, "task": "maze", "prompt": "p", "image_1": "a.png"}]))
    with pytest.raises(TirBenchError, match="record 0: missing field 'answer'"):
        load_tir_bench(bad)
    (bad / "TIR-Bench.json").write_text(json.dumps([{"id": 7, "task": "maze", "prompt": "p", "answer": "A",
                                                     "image_1": "../x.png"}]))
    with pytest.raises(TirBenchError, match="must be relative"):
        load_tir_bench(bad, check_images=False)


def test_download_without_huggingface_hub_explains_the_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if not installed; no network
    with pytest.raises(TirBenchError, match=r"pass --data PATH .*pip install huggingface_hub"):
        download_tir_bench(tmp_path / "cache")
    ready = tmp_path / "ready"
    (ready / "data").mkdir(parents=True)
    (ready / "TIR-Bench.json").write_text("[]")
    assert download_tir_bench(ready) == ready  # already downloaded: used as is


def test_settings_are_worded_as_in_app_d() -> None:
    assert set(SETTINGS) == {"direct", "code", "function"}
    code, fn = SETTINGS["code"], SETTINGS["function"]
    assert code.first_prompt("Q?", 1) == "Q?"
    assert code.first_prompt("Q?", 2) == "Q?\nPlease consider to write code to process the image."
    assert code.strategy(1).feedback == (
        "The returning status and the processed image or text (if any) of the code is attached.")
    assert code.strategy(3).suffix.startswith("\nPlease try to write code to rotate the original image with the "
                                              "rotation degree in the options to verify the correctness.")
    assert fn.strategy(1).feedback == "The rotated image is attached."
    assert fn.first_prompt("Q?", 2) == "Q?\nPlease consider to call the rotation function."
    assert (fn.strategy(3).feedback or "").endswith("proceed to answer the question if you have meet the correct option.")
    assert fn.tools == ["rotate_image"] and code.tools == ["python"] and SETTINGS["direct"].tools == []
    with pytest.raises(TirBenchError, match="prompt strategy 4 does not exist for setting 'code'"):
        code.strategy(4)
