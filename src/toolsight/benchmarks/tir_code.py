"""TIR-Bench's `code` setting in the official loop: a stateful code interpreter on the sandbox kernel.

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

from toolsight.tools.base import ToolContext, ToolResult, ToolSpec
from toolsight.tools.python_tools import PythonKernel
from toolsight.tools.sandbox import Limits

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
