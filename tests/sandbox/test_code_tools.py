"""The code tools on real pixels: python_image_processing, python_interpreter, calculator, and the agent loop.

Every test that runs code takes `backend`, so it runs on each sandbox backend (the fork server and the
plain subprocess), except the protection of earlier outputs, which is the fork server's confinement.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from toolsight import sandbox
from toolsight.agents.inputs import register_inputs
from toolsight.agents.loop import Agent
from toolsight.agents.settings import AgentSettings
from toolsight.models.base import GenerateConfig, Message, Model, ModelOutput, TextPart, ToolCall, Usage
from toolsight.sandbox import ExecResult, Limits
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox, ToolContext, ToolResult, ToolSpec
from toolsight.tools.calculator import Calculator, evaluate
from toolsight.tools.python_tools import PythonImageProcessing, PythonInterpreter, code_tools

CROP_ROTATE = (
    "from PIL import Image\n"
    "import cv2, numpy as np\n"
    "img = np.array(Image.open('{name}').convert('RGB'))\n"
    "crop = img[{y0}:{y1}, {x0}:{x1}]\n"
    "rot = cv2.rotate(crop, cv2.ROTATE_90_CLOCKWISE)\n"
    "Image.fromarray(rot).save(f'{{PROCESSED_IMAGE_SAVE_PATH}}/transformed_image_{i}.png', 'PNG')\n"
    "print('saved', rot.shape)\n"
)


def _scene(path: Path) -> np.ndarray:
    """A 200x120 image with a red block at x 20..60, y 10..40 (RGB)."""
    rgb = np.zeros((120, 200, 3), np.uint8)
    rgb[:, :, 1] = 30
    rgb[10:40, 20:60] = (255, 0, 0)
    Image.fromarray(rgb).save(path)
    return rgb


def _ctx(tmp_path: Path) -> tuple[ToolContext, str]:
    store = ArtifactStore(tmp_path / "ws")
    _scene(tmp_path / "scene.png")
    art = store.add_file(tmp_path / "scene.png", source="input")
    return ToolContext(store=store, call_id="call-1", task_id="t1"), art.id


def _call(tool: PythonImageProcessing | PythonInterpreter | Calculator, args: dict[str, object],
          ctx: ToolContext) -> ToolResult:
    return asyncio.run(tool(args, ctx))


def test_crop_rotate_save_is_harvested_with_its_parent(tmp_path: Path, backend: str) -> None:
    ctx, src = _ctx(tmp_path)
    tool = PythonImageProcessing()
    spec = tool.spec(ctx)
    name = ctx.store.get(src).file  # type: ignore[union-attr]
    assert name in spec.description and str(ctx.workspace.resolve()) in spec.description
    assert "transformed_image_i.png" in spec.description and spec.parameters["required"] == ["code"]
    code = CROP_ROTATE.format(name=name, y0=10, y1=40, x0=20, x1=60, i=0)
    res = _call(tool, {"code": code}, ctx)
    assert res.ok, res.text
    assert "saved (40, 30, 3)" in res.text
    [art] = res.artifacts
    assert art.file == "transformed_image_0.png" and art.parents == (src,)
    assert (art.width, art.height) == (30, 40) and art.tool == "python_image_processing"
    assert art.tool_call_id == "call-1"
    pixels = np.array(Image.open(ctx.store.path(art)))
    assert (pixels == (255, 0, 0)).all()  # the red block, rotated, every pixel red
    assert res.extra["files_read"] == [name] and "transformed_image_0.png" in res.extra["files_written"]
    assert res.extra["code"] == code and res.extra["limit"] is None and res.extra["exit_code"] == 0
    assert res.extra["backend"] == backend
    assert ctx.state["python_image_processing.next_index"] == 1
    assert "transformed_image_1.png" in res.text

    # second call chains on the first output (read with OpenCV: the C-level read is recorded too)
    code2 = (
        "import cv2\n"
        "im = cv2.imread('transformed_image_0.png')\n"
        "cv2.imwrite('transformed_image_1.png', cv2.flip(im, 0))\n"
    )
    res2 = _call(tool, {"code": code2}, ToolContext(store=ctx.store, call_id="call-2", state=ctx.state))
    assert res2.ok, res2.text
    [art2] = res2.artifacts
    assert art2.parents == (art.id,) and art2.file == "transformed_image_1.png"


def test_earlier_outputs_and_inputs_are_not_overwritten(tmp_path: Path) -> None:
    ctx, src = _ctx(tmp_path)
    tool = PythonImageProcessing()
    name = ctx.store.get(src).file  # type: ignore[union-attr]
    first = _call(tool, {"code": CROP_ROTATE.format(name=name, y0=0, y1=50, x0=0, x1=50, i=0)}, ctx)
    assert first.ok
    before = ctx.store.path(first.artifacts[0]).read_bytes()
    again = _call(tool, {"code": CROP_ROTATE.format(name=name, y0=0, y1=20, x0=0, x1=20, i=0)}, ctx)
    assert not again.ok and "Permission denied" in again.text and again.artifacts == []
    assert ctx.store.path(first.artifacts[0]).read_bytes() == before
    clobber = _call(tool, {"code": f"open({name!r}, 'wb').write(b'x')"}, ctx)
    assert not clobber.ok
    assert Image.open(ctx.workspace / name).size == (200, 120)


def test_harvest_caps_and_bomb_guard(tmp_path: Path, backend: str) -> None:
    ctx, _ = _ctx(tmp_path)
    tool = PythonImageProcessing(max_pixels=1_000_000, max_images=2)
    code = (
        "import numpy as np\nfrom PIL import Image\n"
        "Image.fromarray(np.zeros((1100, 1000), np.uint8)).save('transformed_image_0.png')\n"
        "for i in (1, 2, 3):\n"
        "    Image.fromarray(np.full((8, 8), i * 50, np.uint8)).save(f'transformed_image_{i}.png')\n"
        "open('transformed_image_9.png', 'wb').write(b'not a png')\n"
        "Image.fromarray(np.zeros((8, 8), np.uint8)).save('other.png')\n"
    )
    res = _call(tool, {"code": code}, ctx)
    assert res.ok
    assert "transformed_image_0.png skipped" in res.text and "pixel limit" in res.text
    assert [a.file for a in res.artifacts] == ["transformed_image_1.png", "transformed_image_2.png"]
    assert "only the first 2 images" in res.text and "other.png" in res.text
    assert res.artifacts[0].parents == ()  # the input image was never opened


def test_errors_and_bad_arguments_are_text(tmp_path: Path, backend: str) -> None:
    ctx, _ = _ctx(tmp_path)
    tool = PythonImageProcessing(Limits(wall_s=2, cpu_s=1))
    res = _call(tool, {"code": "print('before')\n1/0"}, ctx)
    assert not res.ok and "before" in res.text and "ZeroDivisionError" in res.text
    assert res.extra["exit_code"] == 1
    slow = _call(tool, {"code": "import time\ntime.sleep(60)"}, ctx)
    assert not slow.ok and slow.extra["limit"] == "wall_time" and "wall-clock" in slow.text
    bad = asyncio.run(tool("{not json", ctx))
    assert not bad.ok and "JSON" in bad.text
    missing = _call(tool, {}, ctx)
    assert not missing.ok and "code" in missing.text
    long = _call(tool, {"code": "x" * 5001}, ctx)
    assert not long.ok and "5000" in long.text


def test_interpreter_is_stateless_by_default(tmp_path: Path, backend: str) -> None:
    ctx, _ = _ctx(tmp_path)
    tool = PythonInterpreter(Limits(wall_s=5))
    assert "numpy" in tool.description and "Pre-installed packages" in tool.description
    a = _call(tool, {"code": "x = 5\nimport pandas as pd\nprint(pd.Series([1, 2, 3]).sum())"}, ctx)
    assert a.ok and a.text.strip() == "6"
    b = _call(tool, {"code": "print(x)"}, ctx)
    assert not b.ok and "NameError" in b.text


def test_interpreter_stateful_keeps_variables_and_closes(tmp_path: Path, backend: str) -> None:
    ctx, _ = _ctx(tmp_path)
    box = Toolbox([PythonInterpreter(Limits(wall_s=2, cpu_s=2), stateful=True)], ctx.store, "t1")

    async def go() -> list[ToolResult]:
        out = [await box.call("python_interpreter", {"code": "x = 20"}),
               await box.call("python_interpreter", {"code": "x += 1\nprint(x * 2)"}),
               await box.call("python_interpreter", {"code": "import time\ntime.sleep(30)"}),
               await box.call("python_interpreter", {"code": "print('x' in globals())"}),
               await box.call("python_interpreter", {"code": "open('/etc/passwd').read()"}),
               await box.call("python_interpreter", {"code": "import os\nprint(os.getpid(), " + _START + ")"})]
        pid, start = (int(x) for x in out[5].text.split()[:2])
        host.extend(_host_pids(pid, start))  # while it runs (frozen between calls on forkserver)
        await box.aclose()
        return out

    host: list[int] = []
    r = asyncio.run(go())
    assert r[0].ok and r[1].ok and r[1].text.strip() == "42"
    assert not r[2].ok and r[2].extra["limit"] == "wall_time" and "state is lost" in r[2].text
    assert r[3].ok and "False" in r[3].text and "restarted" in r[3].text
    assert all(x.extra["backend"] == backend for x in r)
    if backend == "forkserver":  # hidden by the mount namespace (FileNotFoundError), or denied by Landlock
        assert not r[4].ok and ("FileNotFoundError" in r[4].text or "PermissionError" in r[4].text)
        assert "root:" not in r[4].text
    # closing the toolbox ended the interpreter process; on forkserver its pid is that of a PID namespace,
    # so the host's pid was found by that pid (the last of NSpid) and its start time together
    assert r[5].ok
    assert len(host) == 1, host
    assert not _running(host[0]), f"the interpreter {host[0]} outlived Toolbox.aclose()"


#: the code's expression for its own start time (clock ticks since boot, the same in every PID namespace)
_START = "open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]"


def _host_pids(ns_pid: int, start: int) -> list[int]:
    """Host pids of the running processes whose innermost pid is `ns_pid` and that started at `start`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        nspid = next((ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")), [])
        if nspid and int(nspid[-1]) == ns_pid and int(stat.rsplit(")", 1)[1].split()[19]) == start:
            found.append(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """The process exists and is not a zombie (a killed process its new parent has not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_interpreter_reports_the_files_it_wrote_and_read(tmp_path: Path, backend: str) -> None:
    """New files, in sub-folders too, are in the workspace after the call and named in the trace alike on
    every backend; the input the code opened is the one read."""
    ctx, src = _ctx(tmp_path)
    name = ctx.store.get(src).file  # type: ignore[union-attr]
    code = (f"from PIL import Image\nim = Image.open({name!r}).convert('L')\n"
            "import os\nos.makedirs('out', exist_ok=True)\n"
            "im.save('out/gray.png')\nopen('notes.txt', 'w').write(str(im.size))\n")
    res = _call(PythonInterpreter(Limits(wall_s=20)), {"code": code}, ctx)
    assert res.ok, res.text
    assert res.extra["files_written"] == ["notes.txt", "out/gray.png"]
    assert res.extra["files_read"] == [name]
    assert (ctx.workspace / "notes.txt").read_text() == "(200, 120)"
    gray = np.array(Image.open(ctx.workspace / "out" / "gray.png"))
    assert gray.shape == (120, 200) and gray[20, 30] > gray[100, 150]  # the red block is brighter than the green


def test_stateful_session_keeps_state_until_restart(ws: Path, backend: str) -> None:
    """sandbox.open_session on the backend in force: state persists, restart() throws it away, files land."""
    async def go() -> list[ExecResult]:
        s = sandbox.open_session(ws, Limits(wall_s=20))
        try:
            out = [await s.exec("import numpy as np\na = np.arange(6).reshape(2, 3)"),
                   await s.exec("np.save('a.npy', a * 7)\nprint(int(a.sum()))")]
            await s.restart()
            out.append(await s.exec("print('a' in globals())"))
            return out
        finally:
            await s.aclose()

    r = asyncio.run(go())
    assert [x.ok for x in r] == [True, True, True], r
    assert r[1].stdout.strip() == "15" and r[1].files_written == ["a.npy"]
    assert np.load(ws / "a.npy").tolist() == [[0, 7, 14], [21, 28, 35]]
    assert r[2].stdout.strip() == "False" and r[2].session_restarted
    assert {x.backend for x in r} == {backend}


def test_calculator() -> None:
    calc = Calculator()
    assert calc.spec().parameters["required"] == ["expression"]
    assert "^" in calc.description
    ctx = ToolContext(store=ArtifactStore(Path("/tmp") / "toolsight-calc-test"))
    assert _call(calc, {"expression": "2 ^ 10"}, ctx).text == "1024"
    assert _call(calc, {"expression": "(3 + 4) * 2 % 5 - 10 / 4"}, ctx).text == "1.5"
    assert _call(calc, {"expression": "sqrt(16) + exp(0) + log(e) + sin(0) + cos(0) + tan(0)"}, ctx).text == "7"
    assert _call(calc, {"expression": "2 × 3 ÷ 4"}, ctx).text == "1.5"
    assert abs(evaluate("2 * 3.14 * 5") - 31.4) < 1e-9
    for bad, word in (("1/0", "division by zero"), ("__import__('os')", "cannot evaluate"),
                      ("2 +", "cannot parse"), ("open('x')", "cannot evaluate"), ("9 ** 9 ** 9 ** 9", "cannot"), ("('a' * 10 ** 9).center(2 * 10 ** 9)", "cannot evaluate"), ("(1).real", "not allowed")):
        res = _call(calc, {"expression": bad}, ctx)
        assert not res.ok and word in res.text, (bad, res.text)
    assert not _call(calc, {}, ctx).ok


class _Scripted(Model):
    """Crops and rotates with python_image_processing, then answers with what it saw."""

    def __init__(self) -> None:
        super().__init__("test/scripted")
        self.seen_images: list[str] = []

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        tool_msgs = [m for m in messages if m.role == "tool"]
        usage = Usage(input_tokens=10, output_tokens=5)
        if not tool_msgs:
            spec = next(t for t in tools if t.name == "python_image_processing")
            name = spec.description.split("file list: ")[1].split("\n")[0].rstrip(".").split(", ")[0]
            code = CROP_ROTATE.format(name=name, y0=10, y1=40, x0=20, x1=60, i=0)
            call = ToolCall(id="c1", name="python_image_processing", arguments=json.dumps({"code": code}))
            return ModelOutput(message=Message(role="assistant", tool_calls=[call]), usage=usage,
                               finish_reason="tool_calls")
        for m in messages:
            for img in m.images:
                self.seen_images.append(img.path or "")
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text="<answer>red</answer>")]),
                           usage=usage)


def test_agent_loop_crops_and_rotates_with_the_scripted_model(tmp_path: Path, backend: str) -> None:
    ds = tmp_path / "ds"
    ds.mkdir()
    _scene(ds / "scene.png")
    task = Task.model_validate({"id": "t1", "turns": [{"prompt": "What colour is the block?",
                                                        "images": [{"path": "scene.png"}], "answer": "red"}]})
    box = Toolbox(code_tools(), ArtifactStore(tmp_path / "ws"), task.id)
    inputs = register_inputs(task, ds, box)
    model = _Scripted()
    traj = asyncio.run(Agent(model, AgentSettings(tools=["python"], answer_format="answer_tag")).run(task, box, inputs))
    assert traj.turns[0].answer == "red"
    produced = [a for a in traj.artifacts if a.tool == "python_image_processing"]
    assert len(produced) == 1 and produced[0].parents == (inputs["scene.png"].id,)
    assert (produced[0].width, produced[0].height) == (30, 40)
    # the model was sent the rotated crop: a 30x40 all-red image
    sent = [p for p in model.seen_images if p]
    assert len(sent) >= 2
    last = cv2.imread(sent[-1])
    assert last is not None and last.shape[:2] == (40, 30) and (last[:, :, 2] == 255).all()
