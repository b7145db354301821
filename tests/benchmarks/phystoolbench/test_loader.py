"""PhysToolBench loaders on both official layouts built around the real sample records: ids, tags
(difficulty, category, the paper's scene), the stored prompts verbatim, gold answers; bad data is one
clear message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ptkit import LEVELS, hf_layout, image_task_layout, sample_records

from toolsight.benchmarks.phystoolbench.benchmark import PhysToolBenchmark, expand_both
from toolsight.benchmarks.phystoolbench.data import PhysToolBenchError, load_any, load_hf, scene_of


def test_image_task_layout(tmp_path: Path) -> None:
    root = image_task_layout(tmp_path / "repo")
    loaded = PhysToolBenchmark().load(root)
    recs = sample_records()
    assert len(loaded.tasks) == 40 and loaded.root == root
    assert "image-task layout" in loaded.notes[0] and "Medium-M3 8" in loaded.notes[0]
    by_id = {t.id: t for t in loaded.tasks}
    for lv in LEVELS:
        for r in recs[lv]:
            t = by_id[f"{lv}_{r['id']}"]
            turn = t.turns[0]
            assert turn.meta["cot_prompt"] == r["cot_prompt"] and turn.meta["no_cot_prompt"] == r["no_cot_prompt"]
            assert turn.answer == r["correct_tool"] and t.tags["difficulty"] == lv
            assert t.tags["category"] == r["category"] and (root / turn.images[0].path).is_file()
            assert r["cot_prompt"].startswith(turn.meta["question"]) and "Noted that" not in turn.meta["question"]
    assert by_id["Medium-M2_0001"].turns[0].meta["cot_prompt"].count("If therye is/are") == 1  # upstream typo kept
    assert by_id["Easy_0011"].tags["scene"] == "Outdoor" and by_id["Medium-M1_0003"].tags["scene"] == "Industrial"
    assert by_id["Medium-M1_0005"].tags["scene"] == "Professional" and by_id["Hard_0001"].tags["scene"] == "Daily"
    assert by_id["Medium-M2_0001"].tags["scene"] == "Industrial" and by_id["Medium-M3_0001"].turns[0].answer == "None"


def test_hf_layout(tmp_path: Path) -> None:
    root = hf_layout(tmp_path / "hf")
    out, tasks = load_hf(root, cache=tmp_path / "cache")
    assert len(tasks) == 40 and out.parent == tmp_path / "cache"
    t = next(x for x in tasks if x.id == "Hard_0010")
    assert t.turns[0].answer == "1, 2, 3, 5" and t.tags == {"difficulty": "Hard"}  # no scene in the HF columns
    from PIL import Image

    with Image.open(out / t.turns[0].images[0].path) as im:
        assert im.format == "PNG" and im.size == (128, 96)
    rgba = next(x for x in tasks if x.id == "Easy_0001")
    with Image.open(out / rgba.turns[0].images[0].path) as im:
        assert im.mode == "RGBA"  # stored as given; the official client converts when sending
    _, again = load_hf(root, cache=tmp_path / "cache")  # second load reuses the extracted images
    assert [x.id for x in again] == [x.id for x in tasks]
    assert load_any(root)[2] == "huggingface"


def test_both_expands_each_item_into_two_records() -> None:
    from toolsight.benchmarks.phystoolbench.data import make_task

    t = make_task("Easy_0001", "Easy", "a.png", "1", "Q?\nNoted that cot", "Q?\nNoted that no", "Daily Life")
    cot, no = expand_both([t])
    assert (cot.id, no.id) == ("Easy_0001@cot", "Easy_0001@no-cot")
    assert cot.turns[0].prompt.endswith("cot") and no.turns[0].prompt.endswith("no")
    assert (cot.turns[0].meta["setting"], no.turns[0].meta["setting"]) == ("cot", "no_cot")
    assert cot.tags["prompt"] == "cot" and no.tags["scene"] == "Daily" and no.meta["item"] == "Easy_0001"


def test_scene_mapping() -> None:
    assert scene_of("Daily Life Scene-Kitchen") == "Daily"
    assert scene_of("Outdoor Activity Scene-Gardening/Agriculture") == "Outdoor"
    assert scene_of("Manufacturing & Repair") == "Industrial" and scene_of("Repair") == "Industrial"
    assert scene_of("Professional Scene") == "Professional" and scene_of("Space") is None


def test_bad_data_messages(tmp_path: Path) -> None:
    with pytest.raises(PhysToolBenchError, match="does not exist"):
        load_any(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PhysToolBenchError, match="not PhysToolBench data"):
        load_any(tmp_path / "empty")
    root = image_task_layout(tmp_path / "repo")
    (root / "dataset/image-task/Hard/annotated/0004_0.png").unlink()
    with pytest.raises(PhysToolBenchError, match=r"1 image\(s\) missing .*Hard/annotated/0004_0.png"):
        load_any(root)
    f = root / "dataset/image-task/Easy/tasks.json"
    recs = json.loads(f.read_text())
    del recs[2]["cot_prompt"]
    f.write_text(json.dumps(recs))
    with pytest.raises(PhysToolBenchError, match=r"Easy/tasks.json record 2: field 'cot_prompt'"):
        load_any(root)
