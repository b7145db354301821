"""Task schema and dataset validation: every problem reported with file, line and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from enginekit import write_png, write_png_bomb
from toolsight.tasks import DatasetError, Rubric, Task, load_dataset, validate_dataset


def test_loads_good_dataset(dataset: Path) -> None:
    ds = load_dataset(dataset)
    assert [t.id for t in ds.tasks] == [f"t{i}" for i in range(6)]
    assert ds.tasks[0].turns[0].options == {"A": "red", "B": "blue"}
    assert len(ds.fingerprint()) == 16


def test_rubric_critical_defaults_to_weight() -> None:
    assert Rubric(text="x", weight=4).is_critical
    assert not Rubric(text="x", weight=3).is_critical
    assert not Rubric(text="x", weight=5, critical=False).is_critical
    with pytest.raises(ValueError):
        Rubric(text="x", weight=6)


def test_validate_reports_every_problem(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    write_png(root / "ok.png")
    (root / "broken.png").parent.mkdir(parents=True, exist_ok=True)
    (root / "broken.png").write_bytes(b"not a png")
    lines = [
        json.dumps({"id": "a", "turns": [{"prompt": "q", "images": [{"path": "ok.png"}]}]}),
        "{not json",
        json.dumps({"id": "b", "turns": [{"prompt": "q", "images": [{"path": "missing.png"}]}]}),
        json.dumps({"id": "c", "turns": [{"prompt": "q"}], "colour": "red"}),
        json.dumps({"id": "a", "turns": [{"prompt": "q", "rubrics": [{"text": "r", "weight": 9}]}]}),
        json.dumps({"id": "d", "turns": [{"prompt": "q", "images": [{"path": "broken.png"}]}]}),
        json.dumps({"id": "e", "turns": []}),
        json.dumps({"id": "f", "turns": [{"prompt": "q", "images": [{"path": "../etc/passwd"}]}]}),
    ]
    (root / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    problems = [str(p) for p in validate_dataset(root)]
    text = "\n".join(problems)
    assert "tasks.jsonl:2: (json): not valid JSON" in text
    assert "tasks.jsonl:3: turns[0].images[0].path: image file not found" in text
    assert "tasks.jsonl:4: colour: unknown field" in text
    assert "tasks.jsonl:5: id: duplicate id 'a' (first on line 1)" in text
    assert "tasks.jsonl:5: turns[0].rubrics[0].weight:" in text
    assert "tasks.jsonl:6: turns[0].images[0].path: not a readable image" in text
    assert "tasks.jsonl:7: turns:" in text
    assert "tasks.jsonl:8: turns[0].images[0].path:" in text
    with pytest.raises(DatasetError) as ei:
        load_dataset(root)
    assert len(ei.value.problems) == len(problems) >= 8


def test_missing_folder_and_file(tmp_path: Path) -> None:
    assert "no such folder" in str(validate_dataset(tmp_path / "nope")[0])
    assert "missing" in str(validate_dataset(tmp_path)[0])


def test_task_tags_coerced_to_strings() -> None:
    t = Task.model_validate({"id": "x", "turns": [{"prompt": "p"}], "tags": {"difficulty": 3}})
    assert t.tags["difficulty"] == "3"


def _one_task(root: Path, image: str = "img.png", line: str | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    text = line if line is not None else json.dumps(
        {"id": "x", "turns": [{"prompt": "p", "images": [{"path": image}], "answer": "A"}]})
    (root / "tasks.jsonl").write_text(text + "\n")
    return root


def test_a_decompression_bomb_is_a_problem_not_a_crash(tmp_path: Path, png_bomb: Path) -> None:
    root = _one_task(tmp_path / "ds")
    shutil.copyfile(png_bomb, root / "img.png")
    assert (root / "img.png").stat().st_size < 1_000_000
    problems = [str(p) for p in validate_dataset(root)]
    assert len(problems) == 1
    assert problems[0].startswith("tasks.jsonl:1: turns[0].images[0].path: image is over the 64 Mpx limit "
                                  "(a decompression bomb?)")
    # just over the limit (72 Mpx), where Pillow on its own only warns
    write_png_bomb(root / "img.png", 9000, 8000, level=1)
    problems = [str(p) for p in validate_dataset(root)]
    assert len(problems) == 1 and "image is over the 64 Mpx limit" in problems[0]
    write_png_bomb(root / "img.png", 8000, 8000, level=1)  # 64 Mpx: at the limit, accepted
    assert validate_dataset(root) == []


def test_text_that_is_not_utf8_is_reported_with_its_line(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    write_png(root / "img.png")
    good = json.dumps({"id": "a", "turns": [{"prompt": "p", "images": [{"path": "img.png"}]}]}).encode()
    bad = b'{"id": "b", "turns": [{"prompt": "caf\xe9"}]}'
    lone = json.dumps({"id": "c", "turns": [{"prompt": "x\\ud800y"}]}).replace("\\\\", "\\").encode()
    (root / "tasks.jsonl").write_bytes(good + b"\n" + bad + b"\n" + lone + b"\n")
    problems = [str(p) for p in validate_dataset(root)]
    assert problems[0] == ("tasks.jsonl:2: (encoding): byte 0xe9 at column 38 is not valid UTF-8; "
                           "save the file as UTF-8")
    assert problems[1].startswith("tasks.jsonl:3: (text): holds an unpaired surrogate escape")
    assert len(problems) == 2
    with pytest.raises(DatasetError):  # `run` loads with the same checks: never silently replaced
        load_dataset(root)


def test_a_symlink_leaving_the_dataset_is_refused(tmp_path: Path) -> None:
    root = _one_task(tmp_path / "ds")
    write_png(tmp_path / "outside.png")
    (root / "img.png").symlink_to(tmp_path / "outside.png")
    problems = [str(p) for p in validate_dataset(root)]
    assert len(problems) == 1 and "is a symlink to" in problems[0] and "outside the dataset folder" in problems[0]


def test_a_truncated_image_is_unreadable(tmp_path: Path) -> None:
    root = _one_task(tmp_path / "ds")
    write_png(tmp_path / "whole.png", 200, 200)
    data = (tmp_path / "whole.png").read_bytes()
    (root / "img.png").write_bytes(data[: len(data) // 2])
    problems = [str(p) for p in validate_dataset(root)]
    assert len(problems) == 1 and problems[0].startswith("tasks.jsonl:1: turns[0].images[0].path: not a readable image")


def test_task_hashes_follow_content_not_paths(dataset: Path, tmp_path: Path) -> None:
    from toolsight.tasks.dataset import dataset_hash, task_hashes

    ds = load_dataset(dataset)
    h1 = task_hashes(ds.tasks, dataset)
    moved = tmp_path / "moved"
    dataset.rename(moved)
    h2 = task_hashes(load_dataset(moved).tasks, moved)
    assert h1 == h2 and len(set(h1.values())) == 6
    write_png(moved / "images" / "a.png", value=99)  # same name, other pixels: every task shows it
    h3 = task_hashes(load_dataset(moved).tasks, moved)
    assert all(h3[k] != h1[k] for k in h1) and dataset_hash(h3) != dataset_hash(h1)
