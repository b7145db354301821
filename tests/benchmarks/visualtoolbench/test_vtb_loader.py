"""The VisualToolBench loader on both official layouts (converted JSON + images, Hugging Face parquet)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from vtbkit import official_rows, write_converted, write_parquet

from toolsight.benchmarks.base import BenchmarkError
from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.visualtoolbench.data import (
    convert_rows,
    domain_of,
    parse_tool_trajectory,
    task_category_of,
)
from toolsight.tasks.schema import Task


def _by_id(tasks: Sequence[Task]) -> dict[str, Task]:
    return {t.id: t for t in tasks}


def _check_tasks(tasks: dict[str, Task], root: Path) -> None:
    st, mt = tasks["st-1"], tasks["mt-1"]
    assert st.tags == {"turncase": "single-turn", "domain": "STEM", "prompt_category": "physics",
                       "eval_focus": "region_switch_qa", "task_category": "Region-Switch Q&A"}
    assert mt.tags["domain"] == "Medical" and mt.tags["task_category"] == "Temporal Visual Reasoning"
    # single-turn: image_paths (the reference sends image_paths[0]); multi-turn: that turn's images
    assert [i.path for i in st.turns[0].images] == ["data/single_turn/images/sample_0/image_0.png",
                                                    "data/single_turn/images/sample_0/image_1.png"]
    assert [[i.path for i in t.images] for t in mt.turns] == [
        ["data/multi_turn/images/sample_0/turn_0_image_0.png"],
        ["data/multi_turn/images/sample_0/turn_1_image_0.png", "data/multi_turn/images/sample_0/turn_1_image_1.png"]]
    for t in (st, mt):
        for turn in t.turns:
            for img in turn.images:
                assert (root / img.path).is_file()
    r = {x.id: x for x in st.turns[0].rubrics}
    assert [x.id for x in st.turns[0].rubrics] == ["r1", "r2", "r3"]
    assert (r["r1"].weight, r["r1"].critical, r["r1"].kind, r["r1"].explicit) == (5, True, "objective", True)
    assert (r["r2"].weight, r["r2"].critical, r["r2"].kind, r["r2"].explicit) == (4, False, "subjective", False)
    assert r["r1"].categories == ["truthfulness", "visual understanding"] and r["r3"].categories == ["presentation"]
    assert st.turns[0].meta["rubric_final_answer"] == {"r1": "yes", "r2": "no", "r3": "no"}
    assert [s.tool for s in st.turns[0].reference_steps] == ["python_image_processing", "calculator", "web_search"]
    assert st.turns[0].reference_steps[1].note == "`calculator`: Convert km/h to m/s."
    assert [s.tool for s in mt.turns[0].reference_steps] == ["python_image_processing"]
    assert mt.turns[1].reference_steps == []
    assert [t.answer for t in mt.turns] == ["GOLD-ONE: the proximal humerus.", "GOLD-TWO: no infection."]
    assert mt.turns[1].rubrics[0].id == "b1" and mt.turns[1].rubrics[0].weight == 3


def test_converted_layout_from_repo_folder_data_folder_and_json(tmp_path: Path) -> None:
    root = write_converted(official_rows(), tmp_path / "VisualToolBench")
    bench = get_benchmark("visualtoolbench")
    for target in (root, root / "data"):
        loaded = bench.load(target)
        assert loaded.root.resolve() == root.resolve()
        _check_tasks(_by_id(loaded.tasks), root)
        assert any("1 single-turn, 1 multi-turn" in n for n in loaded.notes)
    one = bench.load(root / "data" / "multi_turn" / "dataset.json")
    assert [t.id for t in one.tasks] == ["mt-1"]


def test_hf_parquet_layout_gives_the_same_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp_path / "cache"))
    snap = tmp_path / "hf-snapshot"
    write_parquet(official_rows(), snap / "data" / "test-00000-of-00001.parquet")
    bench = get_benchmark("visualtoolbench")
    loaded = bench.load(snap)
    assert any("converted 1 parquet file(s)" in n for n in loaded.notes)
    _check_tasks(_by_id(loaded.tasks), loaded.root)
    ref = write_converted(official_rows(), tmp_path / "ref")
    for split in ("single_turn", "multi_turn"):  # toolsight's conversion = download_dataset.py's layout
        ours = json.loads((loaded.root / "data" / split / "dataset.json").read_text())
        theirs = json.loads((ref / "data" / split / "dataset.json").read_text())
        assert ours == theirs
    again = bench.load(snap)  # converted once, then reused from the cache
    assert again.root == loaded.root and again.fingerprint == loaded.fingerprint


def test_convert_rows_matches_download_dataset(tmp_path: Path) -> None:
    ours = convert_rows(official_rows(), tmp_path / "ours")
    theirs = write_converted(official_rows(), tmp_path / "theirs")
    for split in ("single_turn", "multi_turn"):
        assert json.loads((ours / "data" / split / "dataset.json").read_text()) == \
            json.loads((theirs / "data" / split / "dataset.json").read_text())
    a = ours / "data/multi_turn/images/sample_0/turn_1_image_0.png"
    assert a.read_bytes() == (theirs / "data/multi_turn/images/sample_0/turn_1_image_0.png").read_bytes()


def test_bad_data_gives_one_clear_message(tmp_path: Path) -> None:
    bench = get_benchmark("visualtoolbench")
    with pytest.raises(BenchmarkError, match="does not exist"):
        bench.load(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchmarkError, match=r"data/single_turn/dataset.json.*huggingface.co/datasets/ScaleAI"):
        bench.load(tmp_path / "empty")
    root = write_converted(official_rows(), tmp_path / "broken")
    (root / "data/single_turn/images/sample_0/image_1.png").unlink()
    with pytest.raises(BenchmarkError, match=r"single_turn/dataset.json: 1 image\(s\) not found.*image_1.png"):
        bench.load(root)
    root = write_converted(official_rows(), tmp_path / "badrubric")
    p = root / "data/multi_turn/dataset.json"
    recs = json.loads(p.read_text())
    recs[0]["rubrics_by_turn"][1] = "{not json"
    p.write_text(json.dumps(recs))
    with pytest.raises(BenchmarkError, match=r"record 0 \(id mt-1\) turn 2 rubrics: not valid JSON"):
        bench.load(root)
    recs[0]["rubrics_by_turn"][1] = json.dumps({"b1": {"description": "x"}})
    p.write_text(json.dumps(recs))
    with pytest.raises(BenchmarkError, match=r"turn 2: rubric 'b1' needs 'description' and 'weight'"):
        bench.load(root)


def test_domains_categories_and_trajectory_shapes() -> None:
    assert [domain_of(c) for c in ("chemistry", "maths", "biology", "engineering", "physics")] == ["STEM"] * 5
    assert [domain_of(c) for c in ("medical", "Finance", "sports", "generalist")] == [
        "Medical", "Finance", "Sports", "Generalist"]
    assert task_category_of("hybrid_tool_reasoning") == "Hybrid Tool Reasoning"
    assert task_category_of("follow_up_test") == "Follow-up Test"
    assert task_category_of("something_new") == "something_new"
    assert [s.tool for s in parse_tool_trajectory(json.dumps(["`calculator`: add", "web_search: find it"]))] == [
        "calculator", "web_search"]
    assert [s.tool for s in parse_tool_trajectory({"steps": [{"tool_name": "python_interpreter"}]})] == [
        "python_interpreter"]
    assert parse_tool_trajectory("") == [] and parse_tool_trajectory(json.dumps("")) == []


def test_no_data_downloads_the_hf_release_when_possible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    monkeypatch.setenv("TOOLSIGHT_CACHE", str(tmp_path / "cache"))
    asked: dict[str, object] = {}

    def snapshot_download(repo_id: str, repo_type: str, local_dir: str, allow_patterns: list[str]) -> str:
        asked.update(repo_id=repo_id, repo_type=repo_type, allow_patterns=allow_patterns)
        write_parquet(official_rows(), Path(local_dir) / "data" / "test-00000-of-00001.parquet")
        return local_dir

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(snapshot_download=snapshot_download))
    loaded = get_benchmark("visualtoolbench").load(None)
    assert asked["repo_id"] == "ScaleAI/VisualToolBench" and asked["repo_type"] == "dataset"
    _check_tasks(_by_id(loaded.tasks), loaded.root)

    def offline(**kw: object) -> str:
        raise OSError("no network")

    monkeypatch.setitem(sys.modules, "huggingface_hub", types.SimpleNamespace(snapshot_download=offline))
    with pytest.raises(BenchmarkError, match=r"could not download ScaleAI/VisualToolBench \(OSError: no network\)"):
        get_benchmark("visualtoolbench").load(None)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # not installed: import fails
    with pytest.raises(BenchmarkError, match="huggingface_hub is not installed"):
        get_benchmark("visualtoolbench").load(None)
