"""A realistic synthetic run directory (records, real PNG artifacts, dataset) for tests and bench.

Test support, not part of the package (it writes run directories through the store, which the
report layer never needs): tests import it as `runfixture` (`tests/` is on their path), bench
scripts put `tests/` on `sys.path` first.

`make_fixture_run` writes what the runner writes — manifest.json, records.jsonl, artifacts/ — plus
the dataset folder the manifest points to, with a fixed mix of task shapes: no tool call; a
crop→rotate chain with a dead-end resize; a code call plus a failed call; a two-turn task whose
second turn builds on the first turn's image; a run error; a score error. Deterministic per seed.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

from toolsight.engine.store import RECORDS, artifact_dir, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import ImagePart, Message, TextPart, ToolCall, Usage
from toolsight.scoring.base import JudgeCall, Score
from toolsight.tasks.dataset import write_dataset
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn
from toolsight.tools.base import Artifact

CATEGORIES = ("ocr", "color", "counting")
DIFFICULTIES = ("easy", "hard")


def png_bytes(width: int, height: int, seed: int) -> bytes:
    """A small PNG with a seeded pattern (distinct bytes per seed)."""
    rnd = random.Random(seed)
    im = Image.new("RGB", (width, height), (rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    d = ImageDraw.Draw(im)
    for _ in range(4):
        x0, y0 = rnd.randrange(width // 2), rnd.randrange(height // 2)
        d.rectangle([x0, y0, x0 + width // 3, y0 + height // 3],
                    fill=(rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)))
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    return buf.getvalue()


class _TaskBuilder:
    """Builds one trajectory, writing each artifact's PNG into the task's artifact folder."""

    def __init__(self, run_dir: Path, task_id: str, seed: int, images: bool) -> None:
        self.dir = artifact_dir(run_dir, task_id)
        self.images = images
        self.seed = seed
        self.n = 0
        self.traj = Trajectory()
        if images:
            self.dir.mkdir(parents=True, exist_ok=True)

    def artifact(self, *, parents: tuple[str, ...] = (), source: str = "tool", call: str | None = None,
                 tool: str | None = None, name: str | None = None, size: tuple[int, int] = (64, 48)) -> Artifact:
        self.n += 1
        aid = f"img-{self.seed:06d}{self.n:06d}"
        file = name or f"{aid}.png"
        if self.images:
            (self.dir / file).write_bytes(png_bytes(size[0], size[1], self.seed * 100 + self.n))
        art = Artifact(id=aid, sha256=aid * 2, file=file, width=size[0], height=size[1], parents=parents,
                       source="input" if source == "input" else "tool", tool_call_id=call, tool=tool)
        self.traj.artifacts.append(art)
        return art

    def image_part(self, art: Artifact) -> ImagePart:
        return ImagePart(path=str(self.dir / art.file), artifact_id=art.id)

    def call(self, turn: int, rnd: int, name: str, args: dict[str, object], inputs: list[Artifact],
             ok: bool = True, outputs: int = 1, text: str = "") -> tuple[ToolCallRecord, list[Artifact]]:
        cid = f"call_{turn}_{rnd}_{len(self.traj.tool_calls)}"
        produced = []
        if ok:
            for _ in range(outputs):
                produced.append(self.artifact(parents=tuple(a.id for a in inputs), call=cid, tool=name))
        rec = ToolCallRecord(
            id=cid, turn=turn, round=rnd, name=name, arguments=json.dumps(args), ok=ok,
            error=None if ok else "ToolError: box outside the image",
            text=(text or ("done" if ok else "ToolError: box outside the image"))
            + ("\nProduced image(s): " + ", ".join(a.id for a in produced) if produced else ""),
            artifacts=[a.id for a in produced], inputs=[a.id for a in inputs], duration_s=0.01,
            image_feedback="tool" if produced else "none",
        )
        self.traj.tool_calls.append(rec)
        return rec, produced

    def assistant(self, text: str, calls: list[ToolCallRecord] | None = None) -> None:
        self.traj.messages.append(Message(
            role="assistant", content=[TextPart(text=text)] if text else [],
            tool_calls=[ToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in calls or []],
        ))

    def tool_msg(self, rec: ToolCallRecord, produced: list[Artifact]) -> None:
        self.traj.messages.append(Message(
            role="tool", tool_call_id=rec.id, name=rec.name,
            content=[TextPart(text=rec.text), *[self.image_part(a) for a in produced]],
        ))


_REFS: tuple[list[list[str]], ...] = (
    [[]], [["crop", "rotate"]], [["crop", "resize", "colorspace_hsv"]], [["crop"], ["crop", "zoom_in"]],
)


def _shape(i: int, tools: bool) -> str:
    shape = ("direct", "chain", "code", "multi")[i % 4]
    if tools:
        return shape
    return "multi-direct" if shape == "multi" else "direct"


def _build(run_dir: Path, i: int, seed: int, images: bool, rng: random.Random, tools: bool = True
           ) -> tuple[Task, Trajectory, list[str]]:
    tid = f"task-{i:05d}"
    shape = _shape(i, tools)
    b = _TaskBuilder(run_dir, tid, seed * 1_000_003 + i, images)
    inp = b.artifact(source="input", name=f"input_{i}.png", size=(80, 60))
    b.traj.messages.append(Message.system("You are a careful visual reasoner. Use tools when they help."))
    answers: list[str] = []
    turns: list[Turn] = []
    results: list[TurnResult] = []
    letter = "ABCD"[i % 4]
    guess = letter if rng.random() < 0.6 else "ABCD"[(i + 1) % 4]
    opts = {"A": "red", "B": "blue", "C": "green", "D": "none"}
    prompt = f"Task {i}: which colour dominates the marked region?"
    b.traj.messages.append(Message.user(prompt, images=[b.image_part(inp)]))
    seen = [inp.id]
    if shape == "direct":
        b.assistant(f"<answer>{guess}</answer>")
        results.append(TurnResult(index=0, response=f"<answer>{guess}</answer>", answer=guess, rounds=1,
                                  seen_images=seen))
    elif shape == "chain":
        r_res, res_out = b.call(0, 1, "resize", {"image": inp.id, "param": {"width": 40, "height": 30}}, [inp])
        b.assistant("Let me look at a smaller copy first.", [r_res])
        b.tool_msg(r_res, res_out)
        seen += [a.id for a in res_out]
        c_rec, c_out = b.call(0, 2, "crop", {"image": inp.id, "param": {"x": 4, "y": 4, "width": 30, "height": 20}},
                              [inp])
        b.assistant("Cropping the region.", [c_rec])
        b.tool_msg(c_rec, c_out)
        seen += [a.id for a in c_out]
        t_rec, t_out = b.call(0, 3, "rotate", {"image": c_out[0].id, "param": {"angle": 90}}, c_out)
        b.assistant("Rotating it upright.", [t_rec])
        b.tool_msg(t_rec, t_out)
        seen += [a.id for a in t_out]
        b.assistant(f"The region is mostly {opts[guess]}. <answer>{guess}</answer>")
        results.append(TurnResult(index=0, response=f"The region is mostly {opts[guess]}. <answer>{guess}</answer>",
                                  answer=guess, rounds=4, tool_calls=3, seen_images=seen))
    elif shape == "code":
        code = (f"img = cv2.imread(path)  # task {i}\nimg = img[10:{40 + i % 7}, 10:60]\n"
                "cv2.imwrite('transformed_image_0.png', img)")
        p_rec, p_out = b.call(0, 1, "python_image_processing", {"code": code}, [inp])
        f_rec, _ = b.call(0, 1, "crop", {"image": inp.id, "param": {"x": 500, "y": 0, "width": 9, "height": 9}},
                          [inp], ok=False)
        b.assistant("I will crop with code and with the crop tool.", [p_rec, f_rec])
        b.tool_msg(p_rec, p_out)
        b.tool_msg(f_rec, [])
        seen += [a.id for a in p_out]
        b.assistant(f"<answer>{guess}</answer>")
        results.append(TurnResult(index=0, response=f"<answer>{guess}</answer>", answer=guess, rounds=2,
                                  tool_calls=2, seen_images=seen))
    elif shape == "multi-direct":
        b.assistant(f"<answer>{guess}</answer>")
        results.append(TurnResult(index=0, response=f"<answer>{guess}</answer>", answer=guess, rounds=1,
                                  seen_images=seen))
        b.traj.messages.append(Message.user("And after zooming in further, which colour?"))
        b.assistant(f"<answer>{letter}</answer>")
        results.append(TurnResult(index=1, response=f"<answer>{letter}</answer>", answer=letter, rounds=1))
    else:
        c_rec, c_out = b.call(0, 1, "crop", {"image": inp.id, "param": {"x": 0, "y": 0, "width": 40, "height": 30}},
                              [inp])
        b.assistant("", [c_rec])
        b.tool_msg(c_rec, c_out)
        b.assistant(f"<answer>{guess}</answer>")
        results.append(TurnResult(index=0, response=f"<answer>{guess}</answer>", answer=guess, rounds=2,
                                  tool_calls=1, seen_images=[*seen, c_out[0].id]))
        b.traj.messages.append(Message.user("And after zooming in further, which colour?"))
        z_rec, z_out = b.call(1, 1, "zoom_in", {"image": c_out[0].id, "param": {"x": 0, "y": 0, "width": 20,
                                                                             "height": 15, "scale": 2}}, c_out)
        b.assistant("", [z_rec])
        b.tool_msg(z_rec, z_out)
        b.assistant(f"<answer>{letter}</answer>")
        results.append(TurnResult(index=1, response=f"<answer>{letter}</answer>", answer=letter, rounds=2,
                                  tool_calls=1, seen_images=[z_out[0].id]))
    refs = _REFS[i % 4]
    multi = shape.startswith("multi")
    gold = [letter] + ([letter] if multi else [])
    turns.append(Turn(prompt=prompt, images=[ImageRef(path=f"images/input_{i}.png")], answer=letter, options=opts,
                      answer_type="choice", reference_steps=[ToolStep(tool=t) for t in refs[0]]))
    if multi:
        turns.append(Turn(prompt="And after zooming in further, which colour?", answer=letter, options=opts,
                          answer_type="choice", reference_steps=[ToolStep(tool=t) for t in refs[1]]))
    b.traj.turns = results
    b.traj.model_calls = sum(r.rounds for r in results)
    b.traj.usage = Usage(input_tokens=1000 + 10 * i % 700, output_tokens=100 + i % 50, reasoning_tokens=i % 20)
    task = Task(id=tid, benchmark="fixture", turns=turns, tags={
        "category": CATEGORIES[i % 3], "difficulty": DIFFICULTIES[(i // 3) % 2],
    })
    return task, b.traj, answers + gold


def _score(task: Task, traj: Trajectory, i: int) -> Score:
    turns = []
    for t, tr in zip(task.turns, traj.turns, strict=False):
        ok = tr.answer == t.answer
        turns.append(Score(value=1.0 if ok else 0.0, passed=ok, answer=tr.answer, scorer="choice",
                           explanation=f"extracted {tr.answer!r}, gold {t.answer!r}"))
    value = sum(s.value for s in turns) / len(turns)
    details: dict[str, object] = {}
    judge: list[JudgeCall] = []
    if i % 5 == 1:
        details["rubrics"] = [
            {"id": "r1", "met": value >= 1.0, "kind": "objective", "weight": 4},
            {"id": "r2", "met": True, "kind": "subjective", "weight": 1},
        ]
        judge.append(JudgeCall(model="mock/judge", prompt="Rubric: names the dominant colour",
                               reply='{"judge_result": "Met"}', seed=0, temperature=0.0))
    return Score(value=value, passed=value >= 1.0, answer=traj.turns[-1].answer, scorer="choice",
                 explanation="; ".join(s.explanation for s in turns), turns=turns if len(turns) > 1 else [],
                 details=details, judge_calls=judge)


def make_fixture_run(
    root: Path,
    *,
    name: str = "run",
    model: str = "mock/alpha",
    setting: str = "code",
    n_tasks: int = 12,
    seed: int = 0,
    images: bool = True,
    error_every: int = 11,
    score_error_every: int = 13,
    tools: bool = True,
) -> Path:
    """Write a run directory `root/name` (and its dataset `root/name-data`); return the run dir.

    Task i has shape ('direct', 'chain', 'code', 'multi')[i % 4]; every `error_every`-th task
    (i % error_every == error_every - 1) is a model-error record and every `score_error_every`-th a
    score error. `tools=False` makes the single-turn tasks answer directly (a
    no-tool setting, same tasks). `images=False` skips writing PNGs (for the 10,000-record benchmark).
    """
    run_dir = root / name
    data_dir = root / f"{name}-data"
    rng = random.Random(seed)
    tasks: list[Task] = []
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = (run_dir / RECORDS).open("w", encoding="utf-8")  # no per-line fsync: fixtures, not runs
    try:
        for i in range(n_tasks):
            task, traj, gold = _build(run_dir, i, seed, images, rng, tools)
            tasks.append(task)
            if images:
                src = artifact_dir(run_dir, task.id) / f"input_{i}.png"
                dst = data_dir / "images" / f"input_{i}.png"
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(src.read_bytes())
            error = None
            score: Score | None = _score(task, traj, i)
            if error_every and i % error_every == error_every - 1:
                error, score = "model error: HTTP 500 after 5 retries", None
                traj.stop_reason = "model_error"
            elif score_error_every and i % score_error_every == score_error_every - 1 and score is not None:
                score = score.model_copy(update={"error": "judge reply never parsed", "value": 0.0})
            writer.write(Record(
                task_id=task.id, benchmark="fixture", setting=setting, model=model, tags=task.tags,
                trajectory=traj, score=score, error=error, started_at=1.7e9 + i, duration_s=1.5,
                extra={"gold": gold, "reference_chain_lengths": [len(t.reference_steps) for t in task.turns],
                       "reference_tools": [[s.tool for s in t.reference_steps] for t in task.turns]},
            ).model_dump_json() + "\n")
    finally:
        writer.close()
    write_dataset(data_dir, tasks)
    write_manifest(run_dir, Manifest.model_validate({
        "run_id": f"fixture-{setting}-{seed}", "benchmark": "fixture", "setting": setting, "model": model,
        "created": "2026-01-01T00:00:00Z", "toolsight_version": "0.0.0",
        "dataset": {"path": str(data_dir.resolve()), "hash": "fixture", "n_tasks": n_tasks},
        "config": {}, "tools": [], "prompts": {}, "isolation": {},
    }))
    return run_dir
