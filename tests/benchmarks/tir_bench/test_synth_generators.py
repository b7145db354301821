"""Generators: determinism, dataset validity, the difficulty knob, tags, options in the prompt."""

from __future__ import annotations

import ast
import hashlib
import itertools
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from toolsight.benchmarks.tir_bench.generate import KINDS, GenerateError, generate, make_tasks
from toolsight.tasks.dataset import load_dataset, validate_dataset

TIR_KEYS = {"jigsaw", "maze", "rotation_game", "ocr", "word_search", "spot_difference", "refcoco", "color"}


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_deterministic_and_valid(kind: str, tmp_path: Path) -> None:
    a = generate(kind, 4, seed=11, out_dir=tmp_path / "a")
    b = generate(kind, 4, seed=11, out_dir=tmp_path / "b")
    generate(kind, 4, seed=12, out_dir=tmp_path / "c")
    assert validate_dataset(tmp_path / "a") == []
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert [t.model_dump() for t in a] == [t.model_dump() for t in b]
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    loaded = load_dataset(tmp_path / "a")
    assert [t.id for t in loaded.tasks] == [t.id for t in a]
    for t in a:
        turn = t.turns[0]
        assert t.tags["task"] in TIR_KEYS and t.tags["generator"] == kind
        assert t.tags["task_name"] and t.tags["difficulty"] == str(turn.meta["difficulty"])
        assert turn.answer and turn.meta["reference_solution"].startswith("PARAMS = ")
        params = ast.literal_eval(turn.meta["reference_solution"].splitlines()[0].split("=", 1)[1].strip())
        assert "answer" not in params and turn.answer not in {str(v) for v in params.values()}
        if turn.answer_type == "choice":
            assert turn.options and turn.answer in turn.options
            for letter, text in turn.options.items():  # the options are in the prompt, TIR-style
                assert letter in turn.prompt and text in turn.prompt


def test_difficulty_cycles_and_knob_changes_the_task(tmp_path: Path) -> None:
    tasks = make_tasks("jigsaw", 4, seed=3, out_dir=tmp_path)
    assert [t.turns[0].meta["difficulty"] for t in tasks] == [3, 4, 5, 6]
    for t in tasks:
        n = t.turns[0].meta["difficulty"]
        assert t.turns[0].meta["meta_data"] == {"difficulty": n}
        assert len(ast.literal_eval(str(t.turns[0].answer))) == n * n
        assert sorted(ast.literal_eval(str(t.turns[0].answer))) == list(range(1, n * n + 1))
        assert f"{n}\u00d7{n} pieces" in t.turns[0].prompt
    small = make_tasks("maze", 1, seed=3, out_dir=tmp_path, difficulty=5)[0]
    big = make_tasks("maze", 1, seed=3, out_dir=tmp_path, difficulty=41)[0]
    assert len(big.turns[0].options["A"]) > len(small.turns[0].options["A"])  # type: ignore[index]
    easy = make_tasks("word_search", 1, seed=5, out_dir=tmp_path, difficulty=1)[0]
    hard = make_tasks("word_search", 1, seed=5, out_dir=tmp_path, difficulty=3)[0]
    assert hard.turns[0].meta["grid"][0] > easy.turns[0].meta["grid"][0]
    sd = make_tasks("spot_difference", 12, seed=5, out_dir=tmp_path / "sd")
    grids = {1: "n is 3 and m is 4", 2: "n is 4 and m is 5", 3: "n is 5 and m is 6"}
    for t in sd:
        turn = t.turns[0]
        if turn.answer_type == "set":
            assert turn.prompt.endswith(grids[turn.meta["difficulty"]])
        else:  # the "how many places differ" form
            assert turn.answer_type == "integer" and "How many places differ" in turn.prompt
            assert int(str(turn.answer)) >= 2
    assert {t.turns[0].answer_type for t in sd} == {"set", "integer"}
    rot = make_tasks("rotation_game", 3, seed=5, out_dir=tmp_path / "rot")
    for t, step in zip(rot, (15, 10, 5), strict=True):
        vals = [int(v.rstrip("\u00b0")) for v in t.turns[0].options.values()]  # type: ignore[union-attr]
        assert len(set(vals)) == 6 and all(v % step == 0 and 0 < v < 360 for v in vals)


def test_rotated_ocr_turns_text_sideways_or_upside_down(tmp_path: Path) -> None:
    tasks = make_tasks("ocr", 12, seed=1, out_dir=tmp_path)
    assert {t.turns[0].meta["rotation"] for t in tasks} <= {90, 180, 270}
    for t in tasks:
        img = Image.open(tmp_path / t.turns[0].images[0].path)
        wide = img.width > img.height
        assert wide == (t.turns[0].meta["rotation"] == 180)


def test_spot_difference_images_differ_only_in_the_answer_patches(tmp_path: Path) -> None:
    found = (make_tasks("spot_difference", 1, seed=s, out_dir=tmp_path, difficulty=1)[0] for s in range(9, 40))
    t = next(x for x in found if x.turns[0].answer_type == "set")
    left, right = (np.asarray(Image.open(tmp_path / i.path), np.int32) for i in t.turns[0].images)
    assert [i.role for i in t.turns[0].images] == ["left", "right"]
    diff = np.abs(left - right).sum(axis=2) > 0
    gold = {int(x) for x in str(t.turns[0].answer).split(", ")}
    h, w = diff.shape
    for p in range(1, 13):
        r, c = divmod(p - 1, 4)
        patch = diff[round(r * h / 3) : round((r + 1) * h / 3), round(c * w / 4) : round((c + 1) * w / 4)]
        assert bool(patch.any()) == (p in gold)


def test_colour_proportion_options_are_eight_points_apart(tmp_path: Path) -> None:
    for t in make_tasks("color_proportion", 6, seed=2, out_dir=tmp_path):
        vals = sorted(int(v.rstrip("%")) for v in t.turns[0].options.values())  # type: ignore[union-attr]
        assert all(b - a == 8 for a, b in itertools.pairwise(vals))
        true = round(t.turns[0].meta["true_percent"])
        assert t.turns[0].options[str(t.turns[0].answer)] == f"{true}%"  # type: ignore[index]
        assert len(vals) == (6 if t.tags["task"] == "refcoco" else 4)


def test_bad_requests_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(GenerateError, match="unknown generator kind 'sudoku'; choose one of: jigsaw"):
        generate("sudoku", 1, 0, tmp_path)
    with pytest.raises(GenerateError, match="difficulty 7 is not valid for jigsaw; choose one of: 3, 4, 5, 6"):
        generate("jigsaw", 1, 0, tmp_path, difficulty=7)
    with pytest.raises(GenerateError, match="--n must be at least 1"):
        generate("maze", 0, 0, tmp_path)
