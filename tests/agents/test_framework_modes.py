"""The two loop modes of `--agent pyvision` and `--agent deepeyes`, request by request, through the
runner and the OpenAI SDK against the scripted server (real sandbox, real pixels).

Each test pins one deviation of docs/fidelity.md: what the official loop sends or does (the
original's behaviour) and what the toolsight loop does instead. Scripts pick a task by the
`[task:KEY]` marker in its question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from agentwirekit import make_image, run_agent, write_tasks
from toolsight.agents.pyvision.agent import SAFETY_ROUNDS

FENCE = "```"


def code(text: str, after: str = "\nnever returned") -> str:
    return f"Let me look.\n<code>\n{FENCE}python\n{text}\n{FENCE}\n</code>{after}"


def _data(tmp: Path, turns: list[dict[str, Any]], key: str = "k") -> Path:
    data = tmp / "data"
    write_tasks(data, [{"id": key, "turns": turns}])
    return data


def _png(data: Path, name: str, w: int = 320, h: int = 240) -> str:
    make_image(data / "images" / name, w, h, "PNG")
    return f"images/{name}"


def _prefixes(body: dict[str, Any]) -> list[str]:
    return [p["image_url"]["url"].split(",", 1)[0] for m in body["messages"] if isinstance(m["content"], list)
            for p in m["content"] if p.get("type") == "image_url"]


def _text(message: dict[str, Any]) -> str:
    """A message's text: the toolsight loop sends text-only messages as strings (any provider's shape)."""
    c = message["content"]
    return c if isinstance(c, str) else "".join(p.get("text", "") for p in c)


def _run(tmp: Path, data: Path, steps: dict[str, list[dict[str, Any]]], agent: str, loop: str,
         caps: dict[str, Any] | None = None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    n = sum(1 for _ in tmp.glob("run-*"))
    run = tmp / f"run-{n}-{loop}"
    reqs, recs = run_agent(data, run, {"steps": [{"text": "unused"}], "tasks": steps}, "openai/test-model", agent,
                           loop, caps)
    [rec] = recs
    rec["run_dir"] = str(run)
    return [r.body for r in reqs], rec


# ---- PyVision -------------------------------------------------------------------------------------

def test_pyvision_image_labels(tmp_path: Path) -> None:
    data = _data(tmp_path, [{"prompt": "Q [task:k]", "images": [{"path": "images/a.png"}]}])
    _png(data, "a.png")
    steps = {"k": [{"text": code("import matplotlib.pyplot as plt\nplt.imshow(image_clue_0)\nplt.show()")},
                   {"text": "<answer>\n\\boxed{A}\n</answer>"}]}
    official, _ = _run(tmp_path, data, steps, "pyvision", "official")
    fixed, rec = _run(tmp_path, data, steps, "pyvision", "toolsight")
    # the input PNG and the figure PNG: labelled image/jpeg by the original, with their type by toolsight
    assert _prefixes(official[1]) == ["data:image/jpeg;base64"] * 2
    assert _prefixes(fixed[1]) == ["data:image/png;base64"] * 2
    assert rec["trajectory"]["turns"][0]["answer"] == "A"


def test_pyvision_empty_code_block(tmp_path: Path) -> None:
    data = _data(tmp_path, [{"prompt": "Q [task:k]", "images": [{"path": "images/a.png"}]}])
    _png(data, "a.png")
    steps = {"k": [{"text": f"<code>\n{FENCE}python\n{FENCE}\n</code>"}, {"text": "<answer>\n\\boxed{B}\n</answer>"}]}
    _, rec = _run(tmp_path, data, steps, "pyvision", "official")
    assert "without code" in rec["error"]  # the driver's IndexError ends the task
    bodies, rec = _run(tmp_path, data, steps, "pyvision", "toolsight")
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "B"
    assert _text(bodies[1]["messages"][-1]) == "<interpreter>Error: the <code> block holds no Python code</interpreter>\n"


def test_pyvision_reply_without_content(tmp_path: Path) -> None:
    data = _data(tmp_path, [{"prompt": "Q [task:k]", "images": [{"path": "images/a.png"}]}])
    _png(data, "a.png")
    steps = {"k": [{"fault": "empty"}]}
    _, rec = _run(tmp_path, data, steps, "pyvision", "official")
    assert "without content" in rec["error"]
    _, rec = _run(tmp_path, data, steps, "pyvision", "toolsight")
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["stop_reason"] == "no_answer"


def test_pyvision_later_turns_and_the_round_cap(tmp_path: Path) -> None:
    data = _data(tmp_path, [{"prompt": "First [task:k]", "images": [{"path": "images/a.png"}]},
                            {"prompt": "Second", "images": [{"path": "images/b.png"}]}])
    _png(data, "a.png", 320, 240)
    _png(data, "b.png", 100, 50)
    steps = {"k": [{"text": code("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()")},
                   {"text": "<answer>\n\\boxed{1}\n</answer>"},
                   {"text": code("print(image_clue_2.size, image_clue_0.size)")},
                   {"text": "<answer>\n\\boxed{2}\n</answer>"}]}
    bodies, rec = _run(tmp_path, data, steps, "pyvision", "toolsight")
    # turn 2: its image takes the next label (the figure was image_clue_1) and that name in the namespace
    turn2 = bodies[2]["messages"][-1]["content"]
    assert [turn2[0]["text"], turn2[2]["text"], turn2[3]["text"]] == ["<image_clue_2>", "</image_clue_2>\n\n", "Second"]
    assert "(100, 50) (320, 240)" in _text(bodies[3]["messages"][-1])
    assert [t["answer"] for t in rec["trajectory"]["turns"]] == ["1", "2"]
    # the original has no turn limit: a safety stop after 100 calls, whatever the setting's own cap (1 here)
    loop = {"k": [{"text": code("print(1)")}]}  # the last step repeats
    bodies, rec = _run(tmp_path / "cap", _data(tmp_path / "cap", [{"prompt": "Q [task:k]"}]), loop, "pyvision",
                       "official", caps={"max_rounds": 1})
    assert len(bodies) == SAFETY_ROUNDS == 100 and rec["trajectory"]["turns"][0]["stop_reason"] == "max_rounds"


# ---- DeepEyes -------------------------------------------------------------------------------------

def zoom(box: list[float], quote: str = '"') -> str:
    call = json.dumps({"name": "image_zoom_in_tool", "arguments": {"bbox_2d": box}}).replace('"', quote)
    return f"<think>zoom</think>\n<tool_call>\n{call}\n</tool_call>"


def _de(tmp: Path, w: int = 1600, h: int = 1200) -> Path:
    data = _data(tmp, [{"prompt": "Where is the bar? [task:k]", "images": [{"path": "images/a.png"}],
                        "options": {"A": "bottom", "B": "top"}}])
    _png(data, "a.png", w, h)
    return data


def test_deepeyes_schema_and_labels(tmp_path: Path) -> None:
    data = _de(tmp_path)
    steps = {"k": [{"text": zoom([0, 0, 100, 100])}, {"text": "<answer>A</answer>"}]}
    official, _ = _run(tmp_path, data, steps, "deepeyes", "official")
    fixed, rec = _run(tmp_path, data, steps, "deepeyes", "toolsight")
    assert '"required":["bbox"]}' in official[0]["messages"][0]["content"]
    assert '"required":["bbox_2d"]}' in fixed[0]["messages"][0]["content"]
    assert _prefixes(official[1]) == ["data:image/jpeg;base64"] * 2
    assert _prefixes(fixed[1]) == ["data:image/png;base64"] * 2
    assert _text(fixed[0]["messages"][1]).startswith(
        "Question: Where is the bar? [task:k]\nOptions: \nA. bottom\nB. top\n\n\nThink first")
    assert rec["trajectory"]["turns"][0]["answer"] == "A"


def test_deepeyes_box_past_the_edge(tmp_path: Path) -> None:
    data = _de(tmp_path)
    steps = {"k": [{"text": zoom([1500, 1100, 1700, 1300])}, {"text": "<answer>A</answer>"}]}
    for loop, size, black in (("official", (196, 196), True), ("toolsight", (112, 112), False)):
        _, rec = _run(tmp_path, data, steps, "deepeyes", loop)
        [crop] = [a for a in rec["trajectory"]["artifacts"] if a["source"] == "tool"]
        assert (crop["width"], crop["height"]) == size, loop
        image = Image.open(Path(rec["run_dir"]) / "artifacts" / "k" / crop["file"]).convert("RGB")
        corner = np.asarray(image)[-1, -1]
        assert (not corner.any()) == black, loop  # outside the image is black only when unclamped


def test_deepeyes_parsing_and_replies_without_a_call(tmp_path: Path) -> None:
    data = _de(tmp_path)
    # a Python-literal call: `eval` takes it; json.loads does not, and the model is told so
    steps = {"k": [{"text": zoom([0, 0, 200, 200], quote="'")}, {"text": "<answer>A</answer>"}]}
    _, rec = _run(tmp_path, data, steps, "deepeyes", "official")
    assert [c["ok"] for c in rec["trajectory"]["tool_calls"]] == [True]
    bodies, rec = _run(tmp_path, data, steps, "deepeyes", "toolsight")
    assert _text(bodies[1]["messages"][-1]).startswith("Error: Invalid tool call format:")
    assert rec["trajectory"]["turns"][0]["answer"] == "A"
    # a JSON `true` fails `eval` (task error); JSON reads it
    steps = {"k": [{"text": zoom([0, 0, 200, 200]).replace('"bbox_2d"', '"keep": true, "bbox_2d"')},
                   {"text": "<answer>A</answer>"}]}
    _, rec = _run(tmp_path, data, steps, "deepeyes", "official")
    turn = rec["trajectory"]["turns"][0]
    assert turn["stop_reason"] == "error" and "NameError: name 'true' is not defined" in rec["trajectory"]["tool_calls"][0]["error"]
    _, rec = _run(tmp_path, data, steps, "deepeyes", "toolsight")
    assert rec["trajectory"]["turns"][0]["answer"] == "A"
    # neither an answer nor a call: sent again until 11 calls (official); the reply ends the turn (toolsight)
    steps = {"k": [{"text": "I think it is at the bottom."}]}
    bodies, rec = _run(tmp_path, data, steps, "deepeyes", "official")
    assert len(bodies) == 11 and all(b == bodies[0] for b in bodies)
    assert rec["trajectory"]["turns"][0]["stop_reason"] == "max_rounds"
    bodies, rec = _run(tmp_path, data, steps, "deepeyes", "toolsight")
    assert len(bodies) == 1 and rec["trajectory"]["turns"][0]["answer"] == "I think it is at the bottom."


def test_deepeyes_eval_runs_in_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model's call text is `eval`ed in the sandbox (scrubbed environment), never in the harness."""
    monkeypatch.setenv("DEEPEYES_PROBE", "x" * 100)
    data = _de(tmp_path)
    text = ('<tool_call>\n{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [0, 0, 10 + '
            'len(__import__("os").environ.get("DEEPEYES_PROBE", "")), 10]}}\n</tool_call>')
    _, rec = _run(tmp_path, data, {"k": [{"text": text}, {"text": "<answer>A</answer>"}]}, "deepeyes", "official")
    [crop] = [a for a in rec["trajectory"]["artifacts"] if a["source"] == "tool"]
    assert (crop["width"], crop["height"]) == (56, 56)  # a 10x10 box; in the harness it would be 110x10
