"""Reference solutions solve every generated task from the pixels, and catch corrupted tasks."""

from __future__ import annotations

import ast
import asyncio
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

import toolsight.benchmarks.tir_bench.generate as synth
from toolsight import sandbox
from toolsight.benchmarks.tir_bench.generate import (
    KINDS,
    STARTER_PLAN,
    ensure_starter_suite,
    make_tasks,
    starter_suite,
)
from toolsight.benchmarks.tir_bench.generate.verify import answer_from_output, run_solution, run_solutions
from toolsight.tasks.dataset import load_dataset, validate_dataset
from toolsight.tasks.schema import Task
from toolsight.tools.python_tools import MAX_CODE_CHARS


def _report(runs: list) -> str:  # type: ignore[type-arg]
    return "\n".join(f"{r.task_id}: got {r.answer!r} want {r.gold!r}\n{r.stderr[-400:]}" for r in runs)


def test_starter_suite_is_complete_and_every_reference_solution_solves_it(tmp_path: Path) -> None:
    root = ensure_starter_suite(tmp_path / "cache")
    assert root.name == f"starter-v{synth.GENERATOR_VERSION}-s20251122" and validate_dataset(root) == []
    tasks = load_dataset(root).tasks
    stamp = (root / "tasks.jsonl").stat().st_mtime_ns
    assert ensure_starter_suite(tmp_path / "cache") == root  # second use: reused, not regenerated
    assert (root / "tasks.jsonl").stat().st_mtime_ns == stamp
    assert 55 <= len(tasks) <= 75 and len({t.id for t in tasks}) == len(tasks)
    for kind, plan in STARTER_PLAN.items():
        levels = {t.turns[0].meta["difficulty"] for t in tasks if t.tags["generator"] == kind}
        assert levels == {lvl for lvl, _ in plan} and kind in KINDS
    assert tasks[0].id == "jigsaw-d3-s20251122-0000" and tasks[-1].id == "color_proportion-d3-s20251122-0008"
    # the reference agent sends each solution through the code tool, which refuses longer code
    too_long = [(t.id, len(t.turns[0].meta["reference_solution"])) for t in tasks
                if len(t.turns[0].meta["reference_solution"]) > MAX_CODE_CHARS]
    assert too_long == []
    runs = run_solutions(tasks, root, workers=2)
    failed = [r for r in runs if not r.solved]
    assert not failed, _report(failed)


def test_hardest_levels_on_other_seeds(tmp_path: Path) -> None:
    tasks: list[Task] = []
    for kind, kind_info in KINDS.items():
        tasks += make_tasks(kind, 2, seed=777, out_dir=tmp_path, difficulty=kind_info.difficulties[-1])
    failed = [r for r in run_solutions(tasks, tmp_path, workers=2) if not r.solved]
    assert not failed, _report(failed)


def test_solution_sees_only_the_images_and_prints_one_answer(tmp_path: Path) -> None:
    t = make_tasks("maze", 1, seed=4, out_dir=tmp_path, difficulty=9)[0]
    run = run_solution(t, tmp_path)
    assert run.returncode == 0 and run.solved
    assert [ln for ln in run.stdout.splitlines() if ln.startswith("ANSWER: ")] == [f"ANSWER: {t.turns[0].answer}"]
    assert answer_from_output("log\nANSWER: [1, 2]\n") == "[1, 2]" and answer_from_output("none") is None


def test_corrupted_tasks_are_caught(tmp_path: Path) -> None:
    # 1. a jigsaw whose gold answer has two pieces swapped
    jig = make_tasks("jigsaw", 1, seed=8, out_dir=tmp_path, difficulty=4)[0]
    order = ast.literal_eval(str(jig.turns[0].answer))
    order[0], order[1] = order[1], order[0]
    jig.turns[0].answer = "[" + ", ".join(map(str, order)) + "]"
    # 2. spot the difference whose right image got one more (unlisted) change in patch 1
    sds = (make_tasks("spot_difference", 1, seed=s, out_dir=tmp_path, difficulty=1)[0] for s in range(8, 40))
    sd = next(x for x in sds if x.turns[0].answer_type == "set")
    right = tmp_path / sd.turns[0].images[1].path
    img = Image.open(right).convert("RGB")
    ImageDraw.Draw(img).ellipse([30, 30, 60, 60], fill=(255, 0, 255))
    img.save(right)
    # 3. a maze whose image was replaced by a mirrored one (the listed path now hits walls)
    mazes = (make_tasks("maze", 1, seed=s, out_dir=tmp_path, difficulty=15)[0] for s in range(2, 40))
    mz = next(m for m in mazes if m.turns[0].answer != "F")  # one where an option is the path
    p = tmp_path / mz.turns[0].images[0].path
    arr = np.asarray(Image.open(p).convert("RGB"))
    Image.fromarray(np.ascontiguousarray(arr.transpose(1, 0, 2))).save(p)
    runs = run_solutions([jig, sd, mz], tmp_path, workers=2, batch=False)
    assert [r.solved for r in runs] == [False, False, False], _report(runs)
    assert runs[1].answer is not None and runs[1].answer.split(", ")[0] == "1"


def test_solution_finds_inputs_renamed_by_the_artifact_store(tmp_path: Path) -> None:
    import hashlib
    import subprocess
    import sys

    t = make_tasks("spot_difference", 1, seed=3, out_dir=tmp_path / "ds", difficulty=2)[0]
    work = tmp_path / "ws"
    work.mkdir()
    for img in t.turns[0].images:  # the workspace names copied inputs img-<sha256[:12]>.png
        data = (tmp_path / "ds" / img.path).read_bytes()
        (work / f"img-{hashlib.sha256(data).hexdigest()[:12]}.png").write_bytes(data)
    (work / "solution.py").write_text(t.turns[0].meta["reference_solution"])
    p = subprocess.run([sys.executable, "solution.py"], cwd=work, capture_output=True, text=True, timeout=120)
    assert answer_from_output(p.stdout) == t.turns[0].answer, p.stderr
    (work / next(work.glob("img-*.png")).name).unlink()  # an input really missing: one clear line
    p = subprocess.run([sys.executable, "solution.py"], cwd=work, capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "is not in" in p.stderr and "Traceback" not in p.stderr


def test_solutions_run_in_the_real_sandbox(tmp_path: Path) -> None:
    tasks: list[Task] = []
    for kind in KINDS:
        tasks += make_tasks(kind, 1, seed=31, out_dir=tmp_path / "ds")

    async def run_all() -> list[str | None]:
        answers: list[str | None] = []
        for t in tasks:
            ws = tmp_path / "ws" / t.id
            ws.mkdir(parents=True)
            for img in t.turns[0].images:
                shutil.copyfile(tmp_path / "ds" / img.path, ws / Path(img.path).name)
            res = await sandbox.run_code(t.turns[0].meta["reference_solution"], ws)
            answers.append(answer_from_output(res.stdout))
        return answers

    assert asyncio.run(run_all()) == [t.turns[0].answer for t in tasks]


def test_cached_starter_suite_is_regenerated_when_damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(synth, "STARTER_PLAN", {"maze": ((5, 1),), "ocr": ((1, 1),)})
    root = ensure_starter_suite(tmp_path, seed=3)
    assert [t.id for t in starter_suite(tmp_path / "direct", seed=3)] == [t.id for t in load_dataset(root).tasks]
    next((root / "images").glob("*.png")).unlink()
    assert validate_dataset(root) != []
    assert ensure_starter_suite(tmp_path, seed=3) == root and validate_dataset(root) == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".starter-")] == []


def test_batched_runs_keep_task_order_even_with_repeated_ids(tmp_path: Path) -> None:
    tasks = make_tasks("word_search", 3, seed=1, out_dir=tmp_path, difficulty=1)
    wrong = tasks[1].model_copy(deep=True)
    wrong.turns[0].answer = "999"  # same id, corrupted gold: must be reported at its own position
    runs = run_solutions([*tasks, wrong], tmp_path, workers=2, batch=True)
    assert [r.solved for r in runs] == [True, True, True, False]
    assert [r.gold for r in runs] == [str(t.turns[0].answer) for t in [*tasks, wrong]]


def test_solution_modules_import_and_solve_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # each solver is an importable module: its solve(PARAMS) answers a generated task in this process
    from toolsight.benchmarks.tir_bench.generate.solutions import (
        color_proportion,
        jigsaw,
        maze,
        ocr,
        rotation_game,
        spot_difference,
        word_search,
    )

    modules = {"color_proportion": color_proportion, "jigsaw": jigsaw, "maze": maze, "ocr": ocr,
               "rotation_game": rotation_game, "spot_difference": spot_difference, "word_search": word_search}
    seen = set()
    for kind in KINDS:
        task = make_tasks(kind, 1, seed=5, out_dir=tmp_path / kind)[0]
        source = task.turns[0].meta["reference_solution"]
        params = ast.literal_eval(source.split("\n", 1)[0].removeprefix("PARAMS = "))
        module = modules[kind]
        assert source.rstrip().endswith("solve(PARAMS)")
        monkeypatch.chdir(tmp_path / kind / "images")  # inputs are found by basename, as in the sandbox
        capsys.readouterr()
        module.solve(params)
        assert answer_from_output(capsys.readouterr().out) == task.turns[0].answer, kind
        seen.add(module.__name__)
    assert len(seen) == len(modules)
