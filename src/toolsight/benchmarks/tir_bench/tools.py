"""Tools only TIR-Bench offers: `rotate_image(degrees)` (the `function` setting) and the official
`code` setting's `code_interpreter` (tool set `tir_code`).

`rotate_image`: TIR-Bench's predefined rotation function, clockwise, on the original image.

`code_interpreter`: a stateful code interpreter on the sandbox kernel.

The paper's tool-using rows ran a stateful code interpreter (OpenAI's hosted one for o3 / o4-mini:
`tir_official.HostedInterpreterAgent`, unchanged). App. D gives the prompts of its "write code"
setting but no tool schema, so this is toolsight's rendering, worded after App. D: one
`code_interpreter(code)` function whose description says what App. D's feedback says comes back
("the returning status and the processed image or text (if any) of the code"), names the task's
input image files, and lists a fixed set of packages — the same text on every machine (they are
what the sandbox kernel needs anyway; `tests/protocol/test_tir_code.py` imports each one in the
kernel). It runs on `sandbox.open_kernel` (IPython: variables persist across calls, `plt.show()` and
`display(...)` become images), one kernel per task.

The result text starts with the status (`Status: success` / `Status: error`), then what the cell
printed, `Out[n]: <value>` and IPython's traceback; the images it showed are the call's artifacts
(the official loop sends them with the strategy's feedback text). Registered as tool set `tir_code`.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from toolsight.log.toolspec import ToolSpec
from toolsight.sandbox import Limits
from toolsight.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from toolsight.tools.python_tools import PythonKernel


def rotate_clockwise(arr: np.ndarray, degrees: float) -> np.ndarray:
    """Rotate clockwise by any angle; the canvas grows to fit, the border is black."""
    h, w = arr.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -degrees, 1.0)
    cos, sin = abs(m[0, 0]), abs(m[0, 1])
    nw, nh = round(float(h * sin + w * cos)), round(float(h * cos + w * sin))
    m[0, 2] += nw / 2 - w / 2
    m[1, 2] += nh / 2 - h / 2
    return cv2.warpAffine(arr, m, (nw, nh), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))


@tool(name="rotate_image")
def rotate_image(ctx: ToolContext, degrees: float) -> ToolResult:
    """Rotate the original image CLOCKWISE by the given number of degrees and return the rotated image.

    Args:
        degrees: clockwise rotation in degrees, e.g. 90 or 235.
    """
    originals = [a for a in ctx.store.all() if a.source == "input"]
    if not originals:
        raise ToolError("this task has no input image to rotate")
    if not -3600 <= degrees <= 3600:
        raise ToolError(f"degrees must lie in [-3600, 3600], got {degrees}")
    art, arr = ctx.store.load_array(originals[0].id)
    out = ctx.store.add_array(rotate_clockwise(arr, degrees), parents=[art.id], tool_call_id=ctx.call_id,
                              tool="rotate_image")
    return ToolResult(text=f"Rotated the original image clockwise by {degrees:g} degrees.", artifacts=[out])


def rotate_tools() -> list[Tool]:
    return [rotate_image]


TOOLSET = "tir_code"
TOOL_NAME = "code_interpreter"
#: fixed, not probed: the prompt must not depend on the machine (issue 13 item 12)
PACKAGES = ("numpy", "opencv-python (cv2)", "Pillow (PIL)", "matplotlib", "scipy", "pandas", "sympy",
            "scikit-learn")
#: import names of PACKAGES, for the test that checks the list against the kernel
PACKAGE_MODULES = ("numpy", "cv2", "PIL", "matplotlib", "scipy", "pandas", "sympy", "sklearn")
DESCRIPTION = (
    "Write Python code to process the image and run it in a stateful Python interpreter (a Jupyter-style "
    "kernel: variables persist between calls). The returning status and the processed image or text (if any) "
    "of the code is returned: what the code prints, the value of its last expression, the error if it fails, "
    "and every image it shows with matplotlib's plt.show() or IPython.display.display().\n"
    "The input image files are in the working directory: {image_list}.\n"
    "Pre-installed packages: " + ", ".join(PACKAGES) + "."
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "The Python code to run."}},
    "required": ["code"],
}
#: the paper sets no limit; a cell gets two minutes, the task's kernel twenty CPU minutes
LIMITS = Limits(wall_s=120.0, session_cpu_s=1200)


class TIRCodeInterpreter(PythonKernel):
    """`code_interpreter(code)` for TIR-Bench's official `code` setting (see the module docstring)."""

    def __init__(self, limits: Limits | None = None) -> None:
        super().__init__(limits or LIMITS)
        self.name = TOOL_NAME
        self.description = DESCRIPTION
        self.parameters = PARAMETERS

    def spec(self, ctx: ToolContext | None = None) -> ToolSpec:
        if ctx is None:
            names = "<the task's image files>"
        else:  # the inputs only, so the description stays the same for the whole task
            names = ", ".join(a.file for a in ctx.store.all() if a.source == "input") or "(no images)"
        return ToolSpec(name=self.name, description=self.description.format(image_list=names),
                        parameters=self.parameters)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        res = await super().run(args, ctx)
        status = "Status: success" if res.ok else "Status: error"
        res.text = f"{status}\n{res.text}" if res.text else status
        return res


def tir_code_tools() -> list[TIRCodeInterpreter]:
    return [TIRCodeInterpreter()]


__all__ = ["DESCRIPTION", "PACKAGES", "PACKAGE_MODULES", "TOOLSET", "TIRCodeInterpreter", "tir_code_tools"]
