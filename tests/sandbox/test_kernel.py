"""The stateful IPython kernel in the sandbox: Jupyter's raw outputs, state, limits, confinement.

The expected pieces are the ones a real Jupyter kernel produced in the VTC-Bench golden transcript
(`shared/golden-wire/vtc-bench/s8-code-outputs.code.json`): print + expression value, cv2.imwrite's
`True`, display(Image(...)), plt.show(), and IPython's traceback for an exception.

Every test that takes `backend` runs the kernel on each sandbox backend (`open_kernel` goes through the
backend in force); the confinement test is the fork server's alone.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from sandboxkit import need

from sharedfiles import shared_file
from toolsight import sandbox
from toolsight.sandbox import Kernel, KernelResult, Limits
from toolsight.tools.base import ArtifactStore, Toolbox
from toolsight.tools.python_tools import kernel_tools

GOLDEN = "golden-wire/vtc-bench/s8-code-outputs.code.json"


def with_kernel(ws: Path, body: Callable[[Kernel], Awaitable[Any]], limits: Limits | None = None) -> Any:
    async def go() -> Any:
        k = sandbox.open_kernel(ws, limits or Limits(wall_s=20))
        try:
            return await body(k)
        finally:
            await k.aclose()

    return asyncio.run(go())


def test_outputs_match_what_jupyter_sends(ws: Path, backend: str) -> None:
    Image.fromarray(np.full((80, 100, 3), 120, np.uint8)).save(ws / "in.jpg")

    async def body(k: Kernel) -> list[KernelResult]:
        cells = [
            "import cv2\nimg = cv2.imread('in.jpg')\nprint('loaded')\nimg.shape",
            "gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)\ncv2.imwrite('gray.png', gray)",
            "import os\nprint(os.path.abspath('gray.png'))",
            "from IPython.display import Image, display\ndisplay(Image(filename='gray.png'))",
            "plt.figure(figsize=(4, 3))\nplt.hist(gray.ravel(), bins=32)\nplt.show()",
            "print(gray.shape)\nvalue = gray[5000, 5000]",
        ]
        return [await k.execute(c, 20) for c in cells]

    r = with_kernel(ws, body)
    assert [x.ok for x in r] == [True, True, True, True, True, False]
    assert {x.exec.backend for x in r} == {backend}
    assert [(o.kind, o.text) for o in r[0].outputs] == [("stream", "loaded\n"), ("execute_result", "(80, 100, 3)")]
    assert r[0].stdout == "loaded\n" and r[0].execution_count == 1
    assert [(o.kind, o.text) for o in r[1].outputs] == [("execute_result", "True")]
    assert r[2].stdout.strip() == str((ws / "gray.png").resolve())  # the real workspace path, as Jupyter prints
    for res in (r[3], r[4]):
        [img] = res.outputs
        assert img.kind == "display_data" and img.mime == "image/png" and img.image
        with Image.open(ws / img.image) as im:
            assert im.format == "PNG" and im.size[0] > 10
    with Image.open(ws / r[3].outputs[0].image) as im:  # type: ignore[operator]
        assert im.size == (100, 80)
    err = r[5].error
    assert err is not None and err.ename == "IndexError"
    assert err.evalue == "index 5000 is out of bounds for axis 0 with size 80"
    assert err.traceback[0] == "-" * 75
    assert err.traceback[1].startswith("IndexError") and err.traceback[1].endswith("Traceback (most recent call last)")
    assert err.traceback[2].startswith("Cell In[6], line 2\n") and "----> 2 value = gray[5000, 5000]" in err.traceback[2]
    assert err.traceback[-1] == "IndexError: index 5000 is out of bounds for axis 0 with size 80"
    assert not any("\x1b[" in line for line in err.traceback)
    assert [o.kind for o in r[5].outputs] == ["stream", "error"] and r[5].stdout == "(80, 100)\n"
    golden = shared_file(GOLDEN).read_text()  # the same structure as the recorded Jupyter traceback
    assert "Traceback (most recent call last)\\nCell In[12], line 3\\n" in golden
    assert "IndexError: index 5000 is out of bounds for axis 0 with size 800" in golden


def test_state_persists_display_of_pil_and_cv2_gui_calls_return(ws: Path, backend: str) -> None:
    async def body(k: Kernel) -> list[KernelResult]:
        return [await k.execute("x = 41", 20),
                await k.execute("x += 1\nx", 20),
                await k.execute("from PIL import Image as I\ndisplay(I.new('RGB', (7, 5), 'red'))", 20),
                await k.execute("cv2.imshow('w', np.zeros((3, 3)))\ncv2.waitKey(0)", 20),
                await k.execute("def f(:\n    pass", 20)]

    r = with_kernel(ws, body)
    assert r[0].ok and r[0].outputs == []
    assert r[1].outputs[0].text == "42" and r[1].execution_count == 2
    [pil] = r[2].outputs
    with Image.open(ws / pil.image) as im:  # type: ignore[operator]
        assert im.size == (7, 5) and im.convert("RGB").getpixel((0, 0)) == (255, 0, 0)
    assert r[3].ok and r[3].outputs[-1].text == "-1"  # no window, no hang
    assert not r[4].ok and r[4].error is not None and r[4].error.ename == "SyntaxError"


def test_context_lines_image_values_and_images_under_the_workspace_root(ws: Path, backend: str) -> None:
    """As a Jupyter kernel: a traceback shows the cell's trailing blank line (ipykernel's cell file names),
    an image value keeps its text/plain, and displayed images stay under the workspace root when a
    cell changes directory."""
    async def body(k: Kernel) -> list[KernelResult]:
        return [await k.execute("import os\nos.makedirs('sub', exist_ok=True)\nos.chdir('sub')", 20),
                await k.execute("from PIL import Image as I\nI.new('RGB', (6, 4), 'blue')", 20),
                await k.execute("a = 1\nb = [][0]\n\n", 20)]

    r = with_kernel(ws, body)
    [img] = r[1].outputs
    assert img.kind == "execute_result" and img.text == "<PIL.Image.Image image mode=RGB size=6x4>"
    assert img.image is not None and img.image.startswith(".display/")
    with Image.open(ws / img.image) as im:
        assert im.size == (6, 4)
    assert not (ws / "sub" / ".display").exists()
    err = r[2].error
    assert err is not None and err.traceback[2] == "Cell In[3], line 2\n      1 a = 1\n----> 2 b = [][0]\n      3 \n"


def test_timeout_restarts_the_kernel_and_restart_clears_state(ws: Path, backend: str) -> None:
    async def body(k: Kernel) -> list[KernelResult]:
        out = [await k.execute("y = 1", 20), await k.execute("import time\ntime.sleep(60)", 2),
               await k.execute("print('y' in globals())", 20), await k.execute("z = 3", 20)]
        await k.restart()
        out.append(await k.execute("print('z' in globals())", 20))
        return out

    r = with_kernel(ws, body)
    assert r[0].ok and not r[0].ended
    assert r[1].timed_out and not r[1].ok and r[1].exec.limit == "wall_time" and r[1].ended
    assert not r[2].ended
    assert r[2].ok and r[2].stdout.strip() == "False" and r[2].restarted and r[2].execution_count == 1
    assert not r[3].restarted and r[3].execution_count == 2
    assert r[4].ok and r[4].stdout.strip() == "False"


def test_kernel_is_confined_like_every_sandboxed_call(ws: Path, iso: dict[str, Any]) -> None:
    need(iso, "uid_separation", "seccomp_allowlist", "landlock_fs")

    async def body(k: Kernel) -> KernelResult:
        return await k.execute(
            "import os, socket\n"
            "print('uid', os.getuid())\n"
            "try:\n    socket.socket(socket.AF_INET); print('SOCKET')\nexcept OSError as e:\n    print('socket denied')\n"
            "try:\n    open('/proc/self/environ').read(); print('ENVIRON')\nexcept OSError:\n    print('environ denied')\n"
            "sorted(os.environ)", 20)

    r = with_kernel(ws, body)
    assert r.ok, r
    assert "socket denied" in r.stdout and "environ denied" in r.stdout
    assert int(r.stdout.split("uid ")[1].split()[0]) not in (0, os.getuid())
    assert "API" not in (r.outputs[-1].text or "")


def test_python_kernel_tool_returns_images_as_artifacts(tmp_path: Path, backend: str) -> None:
    store = ArtifactStore(tmp_path / "ws")
    box = Toolbox(kernel_tools(Limits(wall_s=20)), store, "t1")

    async def go() -> list[Any]:
        try:
            return [await box.call("python_kernel", {"code": "import numpy as np\nplt.plot([1, 3, 2])\nplt.show()\n6 * 7"}),
                    await box.call("python_kernel", {"code": "1/0"}),
                    await box.call("python_kernel", {"code": "from PIL import Image as I\nI.new('L', (9, 4))"})]
        finally:
            await box.aclose()

    plot, err, value = asyncio.run(go())
    assert value.ok and "Out[3]: <PIL.Image.Image image mode=L size=9x4>" in value.text  # an image value: both
    assert [(a.width, a.height) for a in value.artifacts] == [(9, 4)]
    assert plot.ok and "Out[1]: 42" in plot.text and len(plot.artifacts) == 1
    assert plot.artifacts[0].tool == "python_kernel" and plot.artifacts[0].width > 100
    assert plot.extra["backend"] == backend and plot.extra["files_written"] == [".display/cell1-1.png"]
    assert not err.ok and "ZeroDivisionError" in err.text and "Cell In[2], line 1" in err.text
