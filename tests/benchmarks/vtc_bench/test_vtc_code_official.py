"""VTC-Bench's official `code_interpreter` on the sandbox kernel, in the situations the golden
transcripts do not reach: the reference's argument parsing, refused installs, dropped cv2 GUI lines,
empty and non-string code, `%xmode Minimal` tracebacks (the published init cell), `input()`, an image
value, a served image read back by path, the conversation's files, the 30 s alarm, the 300 s wait, a
fresh kernel after a kill, and the kernel kept across the driver's whole-task reruns. Real runs:
runner → OpenAI SDK → scripted server on 127.0.0.1 → the sandboxed IPython kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from vtckit import make_data, run_vtc, texts

from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.vtc_bench import loop as vtc_loop
from toolsight.benchmarks.vtc_bench.settings import SETTINGS, to_agent_settings
from toolsight.benchmarks.vtc_bench.tools import code as vtc_code
from toolsight.benchmarks.vtc_bench.tools.code import (
    FORBIDDEN_MESSAGE,
    official_cell,
    read_code,
    remove_blocking_calls,
)
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model

MODEL = "Qwen3-VL-30B-A3B-Thinking"


@pytest.fixture(autouse=True)
def _no_rerun_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vtc_loop, "RERUN_WAITS", (0.0, 0.0))


def call(code: Any, reasoning: str = "r") -> dict[str, Any]:
    return {"tool_calls": [{"name": "code_interpreter", "arguments": {"reasoning": reasoning, "code": code}}]}


def tool_texts(body: dict[str, Any]) -> list[str]:
    """The text items of the last tool message of a request."""
    tool = [m for m in body["messages"] if m["role"] == "tool"][-1]
    return texts(tool)


def test_reference_argument_parsing_and_code_edits() -> None:
    # a fenced block anywhere in the argument string wins (even inside the JSON)
    assert read_code('{"code": "```python\\nprint(1)\\n```"}') == "print(1)"
    assert read_code('{"reasoning": "r", "code": "  x = 1\\n"}') == "x = 1"
    assert read_code("{code: 'y = 2'}") == "y = 2"  # JSON5
    assert read_code("print(3)") == "print(3)"  # not JSON: the text itself
    assert read_code('[1, 2]') == "[1, 2]"  # JSON, not an object: extract_code's fallback
    # the reference's quirk: arguments with surrounding whitespace are "a block found", so the JSON is the code
    assert read_code(' {"code": "z = 3"} ') == '{"code": "z = 3"}'
    assert read_code('{"reasoning": "no code"}') == ""
    with pytest.raises(TypeError):
        read_code('{"code": 5}')  # the reference's regex fails on a number
    assert remove_blocking_calls("a = 1\ncv2.imshow('w', a)\n  k = cv2.waitKey(0)\ncv2.destroyAllWindows()\nb = 2") == \
        "a = 1\nb = 2"
    assert official_cell("sns.set_theme()\nx = 1") == ('_M6CountdownTimer.start(30)\nsns.set_theme()\n'
                                                        'plt.rcParams["font.family"] = _m6_font_prop.get_name()\n'
                                                        'x = 1\n\n')


def test_official_code_interpreter_end_to_end(tmp_path: Path) -> None:
    steps = [
        call("had_cv2 = 'cv2' in dir()\nimport cv2\nimg = cv2.imread('$input:t')\nfrom PIL import Image as I\n"
             "I.new('RGB', (7, 5), 'red')"),
        call("im2 = cv2.imread('$prev')\nprint(im2.shape, im2[0, 0].tolist())"),  # the served image, by its path
        call("import os\nprint(sorted(os.listdir('chart_1')))\nprint(os.getcwd())"),
        call("!pip install opencv-contrib-python\nprint('ran')"),
        call("print('a')\ncv2.imshow('w', img)\nk = cv2.waitKey(0)\nprint('b')"),
        call(""),
        call(5),
        call("y = [1][3]"),
        call("input('?')"),
        call("print('PILImage' in globals(), had_cv2, type(Image).__name__, sns.__name__, callable(display))"),
        {"text": "<answer>C</answer>"},
    ]
    out = run_vtc(tmp_path, [{"id": "chart_1", "question": "Which bar? [task:t]", "size": (120, 90)}],
                  {"tasks": {"t": steps}}, setting="code")
    bodies = out["bodies"]
    assert len(bodies) == 11
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["code_interpreter"]
    ws = out["ws"]["chart_1"]
    work = ws / "workspace" / "tools" / "code_interpreter" / MODEL / "chart_1"
    # 1: an image value: its text, then the image served from <work>/<task id>/<uuid>.png
    first = [m for m in bodies[1]["messages"] if m["role"] == "tool"][-1]["content"]
    assert first[0] == {"type": "text", "text": "execute_result:\n\n```\n<PIL.Image.Image image mode=RGB size=7x5>\n```"}
    assert first[1]["text"].startswith(f"The saved image path is: {work}/chart_1/") and first[1]["text"].endswith(".png")
    assert first[2]["type"] == "image_url"
    # 2: the kernel reads the file the harness served (a folder made before the kernel, so its overlay sees it)
    assert tool_texts(bodies[2]) == ["stdout:\n\n```\n(5, 7, 3) [0, 0, 255]\n\n```"]
    # 3: working folder <model>/<task id>; the conversation's images were copied into <task id>/
    listing, cwd = tool_texts(bodies[3])[0].split("```\n")[1].splitlines()[:2]
    assert "'chart_1.jpg'" in listing and listing.count(".png'") == 1 and cwd == str(work)
    assert tool_texts(bodies[4]) == [FORBIDDEN_MESSAGE.format(pattern=r"!pip\s+install")]
    assert tool_texts(bodies[5]) == ["stdout:\n\n```\na\nb\n\n```"]  # GUI lines dropped, not run
    tool6 = [m for m in bodies[6]["messages"] if m["role"] == "tool"][-1]
    assert tool6["content"] == []  # empty code: "" (not even "Finished execution.")
    assert tool_texts(bodies[7])[0].startswith("An error occurred when calling tool `code_interpreter`:\nTypeError: ")
    # the published init cell ran to its end: `%xmode Minimal`
    assert tool_texts(bodies[8]) == ["error:\n\n```\nIndexError: list index out of range\n\n```"]
    assert tool_texts(bodies[9]) == ["error:\n\n```\nNotImplementedError: Python input() function is disabled.\n\n```"]
    assert tool_texts(bodies[10]) == ["stdout:\n\n```\nFalse False module seaborn True\n\n```"]
    rec = out["records"]["chart_1"]
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "C"
    calls = rec["trajectory"]["tool_calls"]
    assert len(calls) == 10 and [len(c["artifacts"]) for c in calls][:3] == [1, 0, 0]
    arts = {a["id"]: a for a in rec["trajectory"]["artifacts"]}
    made = arts[calls[0]["artifacts"][0]]
    assert (made["width"], made["height"], made["tool"]) == (7, 5, "code_interpreter")
    assert [c["ok"] for c in calls] == [True, True, True, False, True, True, False, False, False, True]


def test_alarm_wait_timeout_and_a_fresh_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vtc_code, "CALL_TIMEOUT_S", 1)  # the reference's 30 s alarm, shortened
    monkeypatch.setattr(vtc_code, "IOPUB_TIMEOUT_S", 4.0)  # and its 300 s wait
    steps = [
        call("x = 1\nimport time\ntime.sleep(20)"),
        call("print(x)"),
        call("import signal, time\nsignal.alarm(0)\nprint('busy')\ntime.sleep(60)"),
        call("print(x)"),
        call("print(_M6CountdownTimer.__name__)"),
        {"text": "<answer>C</answer>"},
    ]
    out = run_vtc(tmp_path, [{"id": "chart_2", "question": "Which? [task:t]"}], {"tasks": {"t": steps}},
                  setting="code")
    bodies = out["bodies"]
    assert tool_texts(bodies[1]) == ["error:\n\n```\nTimeout: Code execution exceeded the time limit.\n```"]
    assert tool_texts(bodies[2]) == ["stdout:\n\n```\n1\n\n```"]  # the alarm keeps the kernel and its state
    assert tool_texts(bodies[3]) == ["stdout:\n\n```\nbusy\n\n```\n\nerror:\n\n```\nTimeout: Code execution "
                                     "exceeded 4 seconds.\n```"]
    # killed: a fresh kernel, started again with the init cell (its names exist, the old variables do not)
    assert tool_texts(bodies[4]) == ["error:\n\n```\nNameError: name 'x' is not defined\n\n```"]
    assert tool_texts(bodies[5]) == ["stdout:\n\n```\n_M6CountdownTimer\n\n```"]
    assert out["records"]["chart_2"]["error"] is None


def test_kernel_is_kept_across_the_drivers_whole_task_rerun(tmp_path: Path) -> None:
    steps = [call("x = 7"), {"text": "<answer>I am unable to tell.</answer>"},  # attempt 1: a refusal, rerun
             call("print(x)"), {"text": "<answer>C</answer>"}]  # attempt 2: the same kernel (one agent per task)
    out = run_vtc(tmp_path, [{"id": "chart_3", "question": "Which? [task:t]"}], {"tasks": {"t": steps}},
                  setting="code")
    bodies = out["bodies"]
    assert len(bodies) == 4 and len(bodies[2]["messages"]) == 2  # attempt 2 starts from the question again
    assert tool_texts(bodies[3]) == ["stdout:\n\n```\n7\n\n```"]
    assert out["records"]["chart_3"]["trajectory"]["turns"][0]["answer"] == "C"


def test_official_time_limits_and_task_timeout(tmp_path: Path) -> None:
    """The driver: 3600 s per attempt, 3 attempts, 5 s + 10 s between them. The runner's per-task limit
    defaults to that in official mode (it would otherwise end a task the driver still runs); an explicit
    --task-timeout wins; the toolsight loop keeps the runner's 1200 s."""
    assert to_agent_settings(SETTINGS["code"]).task_timeout_s == 3 * 3600 + 15
    assert to_agent_settings(SETTINGS["code"], "toolsight").task_timeout_s is None
    make_data(tmp_path / "data", [{"id": "chart_4", "question": "Which? [task:t]"}])
    bench = get_benchmark("vtc-bench")
    loaded = load_for_run(bench, str(tmp_path / "data"))

    def runner(**kw: Any) -> Runner:
        opts = RunOptions.of(benchmark="vtc-bench", model="openai/m", setting="code", data=str(tmp_path / "data"),
                          base_url="http://127.0.0.1:9/v1", out=str(tmp_path / "run"), **kw)
        return Runner(opts, bench, loaded, get_model(opts.model.spec, base_url=opts.model.base_url))

    assert runner().task_timeout == 10815.0 and runner().opts.control.task_timeout == 10815.0
    assert runner(task_timeout=50.0).task_timeout == 50.0
    assert runner(loop="toolsight").task_timeout == 1200.0
    assert json.loads(runner().settings.model_dump_json())["task_timeout_s"] == 10815.0


def test_a_failing_init_cell_is_a_clear_tool_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference refuses to start without its packages; here the tool says which ones and how to get
    them, the model reads it and the task goes on. Only the recorded variant's font line may fail."""
    real = vtc_code.init_cell
    monkeypatch.setattr(vtc_code, "init_cell",
                        lambda work, variant: real(work, variant).replace("import seaborn as sns",
                                                                          "import no_such_module_here as sns"))
    steps = [call("print(1)"), {"text": "<answer>C</answer>"}]
    out = run_vtc(tmp_path, [{"id": "chart_5", "question": "Which? [task:t]"}], {"tasks": {"t": steps}},
                  setting="code")
    text = tool_texts(out["bodies"][1])[0]
    assert text.startswith("An error occurred when calling tool `code_interpreter`:\nRuntimeError: the code "
                           "kernel's first cell failed (ModuleNotFoundError: No module named 'no_such_module_here')")
    assert "pip install 'toolsight[sandbox-libs]'" in text
    rec = out["records"]["chart_5"]
    assert rec["error"] is None and rec["trajectory"]["turns"][0]["answer"] == "C"
    assert [c["ok"] for c in rec["trajectory"]["tool_calls"]] == [False]
