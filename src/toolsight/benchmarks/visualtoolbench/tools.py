"""VisualToolBench's tools as the reference driver presents and runs them (the official loop's tool layer).

The official loop (`vtb_loop`) does not show the model toolsight's own tool texts: it offers the
reference's descriptors (`VisionTools.get_tools`: the image-path list and save folder inside the
`python_image_processing` description, names and schemas verbatim) and returns the reference's
observation dicts as `str(dict)` (`{'ok': 'true', 'stdout': …, 'output_paths': […]}`). Model code
still runs in toolsight's sandbox, but inside the reference's `exec` namespace (`driver_exec.py`: the
restricted `__builtins__`, separate globals and locals, the `SafeImage` wrapper whose `open` is
broken, lazily imported packages), so code that failed in the reference fails here too, with the
traceback the driver prints (its `scripts/tools.py` frames, relative). New images are found as the
reference finds them: `transformed_image_<i>.png` names that were not in the save folder before
the call (an overwritten file is not new). The calculator is the reference's AST evaluator
(`^` is XOR → error, one-argument functions, `str(result)`), with a size guard on powers.

Tools a setting offers come from the run's toolbox (the setting's tool sets): a toolbox tool named
like a reference tool is shown and run the reference's way — the web tools (`web_search`, shown as
`google_search`, `browser_get_page_text`, `historical_weather`) by `vtb_web`, which returns the
reference's result dicts from the run's web session; any other tool is shown with its own spec (or
the reference descriptor of its official name) and its result passed through as `{'result': text}`
unless the tool puts a ready `official_observation` dict in its result's `extra`.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight import sandbox
from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.benchmarks.visualtoolbench.driver_exec import CODE_EXIT, wrap_code
from toolsight.benchmarks.visualtoolbench.web import OFFICIAL_WEB
from toolsight.log.toolspec import ToolSpec
from toolsight.sandbox.models import ExecResult, Limits
from toolsight.tools.base import Artifact, Tool, Toolbox, ToolResult

IMAGE_TOOL = "python_image_processing"
INTERPRETER_TOOL = "python_interpreter"
CALCULATOR_TOOL = "calculator"
#: toolsight tool name -> the reference's name for it
OFFICIAL_NAMES = {"web_search": "google_search"}
_TRANSFORMED = re.compile(r"^transformed_image_(\d+)\.png$", re.IGNORECASE)
MAX_IMAGE_BYTES = 20 << 20
MAX_IMAGE_PIXELS = 40_000_000

_DESCRIPTORS: dict[str, tuple[str, dict[str, Any]]] = {
    INTERPRETER_TOOL: (P.INTERPRETER_DESCRIPTION, P.CODE_PARAMETERS),
    "google_search": (P.SEARCH_DESCRIPTION, P.SEARCH_PARAMETERS),
    "browser_get_page_text": (P.PAGE_TEXT_DESCRIPTION, P.PAGE_TEXT_PARAMETERS),
    "historical_weather": (P.WEATHER_DESCRIPTION, P.WEATHER_PARAMETERS),
    CALCULATOR_TOOL: (P.CALCULATOR_DESCRIPTION, P.CALCULATOR_PARAMETERS),
}

# ---------------------------------------------------------------------------------------- calculator

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: operator.neg}
_FUNCS: dict[str, Callable[[Any], Any]] = {
    "sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "log": math.log, "exp": math.exp,
}
MAX_INT_EXPONENT = 10_000  # guard (not in the reference): 9**9**9 would hang the harness


def _eval(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        fn = _BINARY.get(type(node.op))
        left, right = _eval(node.left), _eval(node.right)
        if fn is None:  # the reference's OPERATORS[type(node.op)] → KeyError(<class 'ast.BitXor'>)
            raise KeyError(type(node.op))
        if fn is operator.pow and isinstance(left, int) and isinstance(right, int) and abs(right) > MAX_INT_EXPONENT:
            raise OverflowError(f"exponent {right} is too large")
        return fn(left, right)
    if isinstance(node, ast.UnaryOp):
        ufn = _UNARY.get(type(node.op))
        operand = _eval(node.operand)
        if ufn is None:
            raise KeyError(type(node.op))
        return ufn(operand)
    if isinstance(node, ast.Call):
        name = node.func.id  # type: ignore[attr-defined]  # AttributeError for `math.sqrt(…)`, as in the reference
        if name not in _FUNCS:
            raise ValueError(f"Function {name} not allowed.")
        if len(node.args) != 1:
            raise ValueError("Only one argument permitted.")
        return _FUNCS[name](_eval(node.args[0]))
    raise ValueError("Unsupported expression element.")


def official_calculator(expression: str) -> dict[str, str]:
    """`VisionTools.safe_calculator`: the result as `str()`, or the error text."""
    try:
        tree = ast.parse(expression, mode="eval")
        result = _eval(tree.body)
        return {"result": str(result), "expression": expression, "status": "success"}
    except Exception as e:
        return {"result": "Error", "expression": expression, "status": "error", "error": str(e)}


# ---------------------------------------------------------------------------------------- argument binding
# The reference calls `function_to_call(**json.loads(arguments))`; a wrong argument raises a TypeError that
# becomes `{"error": str(e)}`. These stand-ins carry the reference's qualnames so the message is the same.

def _image_sig(code: str) -> str:
    return code


def _interp_sig(code: str) -> str:
    return code


def _calc_sig(expression: str) -> str:
    return expression


_image_sig.__qualname__ = "VisionTools.python_image_processing"
_interp_sig.__qualname__ = "VisionTools.python_interpreter"
_calc_sig.__qualname__ = "VisionTools.safe_calculator"
_SIGNATURES: dict[str, Callable[..., str]] = {IMAGE_TOOL: _image_sig, INTERPRETER_TOOL: _interp_sig,
                                               CALCULATOR_TOOL: _calc_sig}


def _stderr(res: ExecResult) -> str:
    """The model-visible stderr: the code's own, plus why the sandbox stopped it (a limit), if it did."""
    err = res.stderr
    if not res.ok and res.error and res.error != f"SystemExit: {CODE_EXIT}":
        err += ("" if not err or err.endswith("\n") else "\n") + f"{res.error}\n"
    return err


# ---------------------------------------------------------------------------------------- per-turn state


@dataclass
class TurnFiles:
    """One turn's save folder (the reference's `turn_{t}` scratch dir) and its image-path list."""

    folder: Path
    image_list: list[str] = field(default_factory=list)
    #: file name in `folder` -> artifact id (the input copy and every harvested image)
    artifacts: dict[str, str] = field(default_factory=dict)

    @property
    def save_path(self) -> str:
        return str(self.folder)


def start_turn(toolbox: Toolbox, index: int, first_image: Artifact | None, name: str | None) -> TurnFiles:
    """Make the turn's folder, copy the turn's (first) input image into it, start its image list."""
    folder = (toolbox.store.workspace / f"turn_{index}").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    files = TurnFiles(folder)
    if first_image is not None:
        fname = name or first_image.file
        dest = folder / fname
        if not dest.exists():  # a copy, never a link: the model may write over it (the reference could)
            dest.write_bytes(toolbox.store.path(first_image).read_bytes())
        files.image_list.append(str(dest))
        files.artifacts[fname] = first_image.id
    return files


# ---------------------------------------------------------------------------------------- the tool layer


@dataclass
class Outcome:
    """One official tool call: the observation (str(dict) goes to the model), images, and the trace."""

    observation: dict[str, Any]
    artifacts: list[Artifact] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Success for the tool-use metrics: no error in the observation, and code that did not raise."""
        obs = self.observation
        if self.extra.get("ok") is False:
            return False
        return "error" not in obs and obs.get("ok") != "false" and obs.get("status") != "error"

    @property
    def error(self) -> str | None:
        if self.ok:
            return None
        obs = self.observation
        return str(obs.get("error") or obs.get("stderr") or "failed")[:2000]


class UnknownOfficialTool(KeyError):
    """The reference's `available_functions[name]` KeyError: ends the task with 'Processing Error'."""


def official_names(present: Iterable[str]) -> dict[str, str]:
    """Official name -> toolbox tool name of the tools `present`: in the reference's `get_tools`
    order (`web_search` as `google_search`), then any others by name."""
    present = set(present)
    names: dict[str, str] = {}
    for official in P.OFFICIAL_TOOL_ORDER:
        inner = next((n for n in present if OFFICIAL_NAMES.get(n, n) == official), None)
        if inner is not None:
            names[official] = inner
    for n in sorted(present):
        if OFFICIAL_NAMES.get(n, n) not in names:
            names[OFFICIAL_NAMES.get(n, n)] = n
    return names


def official_specs(names: Mapping[str, str], tools: Mapping[str, Tool], turn: TurnFiles) -> list[ToolSpec]:
    """The descriptors the reference sends for `names` (`official_names`) in `turn`: its own texts,
    the image tool's with the turn's image list and save folder; other tools' own specs."""
    out: list[ToolSpec] = []
    for official, inner in names.items():
        if official == IMAGE_TOOL:
            desc = P.IMAGE_DESCRIPTION.format(image_list=repr(turn.image_list), save_path=turn.save_path)
            out.append(ToolSpec(name=official, description=desc, parameters=P.CODE_PARAMETERS))
        elif official in _DESCRIPTORS:
            d, params = _DESCRIPTORS[official]
            out.append(ToolSpec(name=official, description=d, parameters=params))
        else:
            out.append(tools[inner].spec())
    return out


class OfficialTools:
    """The tools of one task as the reference shows and runs them, built over the run's toolbox."""

    def __init__(self, toolbox: Toolbox, limits: Limits | None = None) -> None:
        self.toolbox = toolbox
        self.limits = limits or Limits()
        self.names = official_names(toolbox.tools)

    def specs(self, turn: TurnFiles) -> list[ToolSpec]:
        return official_specs(self.names, self.toolbox.tools, turn)

    async def call(self, name: str, args: Any, call_id: str, turn: TurnFiles) -> Outcome:
        """Run one call. Raises UnknownOfficialTool for a name the setting does not offer."""
        inner = self.names.get(name)
        if inner is None:
            raise UnknownOfficialTool(name)
        sig = _SIGNATURES.get(name)
        if sig is not None:
            try:
                value = sig(**args)  # TypeError: missing / unexpected argument, the reference's message
            except Exception as e:
                return Outcome({"error": str(e)})
            if name == CALCULATOR_TOOL:
                return Outcome(official_calculator(value), extra={"expression": value})
            return await self._code(name, value, call_id, turn)
        web = OFFICIAL_WEB.get(name)
        if web is not None:  # the reference's dicts from the same web session calls (vtb_web)
            bind, run = web
            try:
                kwargs = bind(**args)
            except Exception as e:
                return Outcome({"error": str(e)})
            return Outcome(await run(**kwargs), extra={"tool": inner, "official": True})
        return await self._passthrough(name, inner, args, call_id)

    async def _code(self, name: str, code: str, call_id: str, turn: TurnFiles) -> Outcome:
        kind = "image" if name == IMAGE_TOOL else "interpreter"
        folder = turn.folder
        before = _transformed(folder)
        try:
            res = await sandbox.run_code(wrap_code(code, kind, turn.save_path), folder, self.limits,
                                         profile="image" if kind == "image" else "full")
        except Exception as exc:  # the reference had no sandbox to fail; report it as the code's error
            res = ExecResult(ok=False, error=f"sandbox failed: {type(exc).__name__}: {exc}")
        extra: dict[str, Any] = {"code": code, "ok": res.ok, **res.trace()}
        inputs = [turn.artifacts[f] for f in res.files_read if f in turn.artifacts]
        if kind == "interpreter":
            return Outcome({"stdout": res.stdout, "stderr": _stderr(res)}, inputs=inputs, extra=extra)
        new = sorted(_transformed(folder) - before, key=_index)  # the reference iterates a set: order arbitrary
        produced: list[Artifact] = []
        paths: list[str] = []
        notes: list[str] = []
        for fname in new:
            problem = _check(folder / fname)
            if problem:
                notes.append(f"toolsight: {fname} not returned: {problem}\n")
                continue
            try:
                art = self.toolbox.store.add_file(folder / fname, parents=inputs, tool_call_id=call_id,
                                                  tool=IMAGE_TOOL)
            except Exception as exc:
                notes.append(f"toolsight: {fname} not returned: not a readable image ({type(exc).__name__})\n")
                continue
            produced.append(art)
            turn.artifacts[fname] = art.id
            paths.append(str(folder / fname))
        extra["images"] = [a.id for a in produced]
        obs = {
            "ok": "true" if res.ok else "false",
            "stdout": res.stdout,
            "stderr": _stderr(res) + "".join(notes),
            "output_path": paths[0] if paths else "",
            "output_paths": paths,
        }
        return Outcome(obs, artifacts=produced, inputs=inputs, extra=extra)

    async def _passthrough(self, name: str, inner: str, args: Any, call_id: str) -> Outcome:
        raw = args if isinstance(args, dict) else json.dumps(args)
        result: ToolResult = await self.toolbox.call(inner, raw, call_id=call_id)
        official = result.extra.get("official_observation")
        if isinstance(official, dict):
            obs: dict[str, Any] = official
        elif result.ok:
            obs = {"result": result.text}
        else:
            obs = {"error": result.error or result.text}
        extra = {k: v for k, v in result.extra.items() if k not in ("official_observation", "inputs")}
        inputs = [i for i in result.extra.get("inputs", []) or [] if isinstance(i, str)]
        return Outcome(obs, artifacts=list(result.artifacts), inputs=inputs, extra={"tool": inner, **extra})


def _transformed(folder: Path) -> set[str]:
    try:
        return {e.name for e in os.scandir(folder) if _TRANSFORMED.match(e.name) and e.is_file()}
    except OSError:
        return set()


def _index(name: str) -> tuple[int, str]:
    m = _TRANSFORMED.match(name)
    return (int(m.group(1)) if m else 0, name)


def _check(path: Path) -> str | None:
    """Only a plain, bounded image file is read back (the model's code is not trusted)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot stat ({exc.strerror})"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_nlink != 1:
        return "hard links are not accepted"
    if st.st_size > MAX_IMAGE_BYTES:
        return f"{st.st_size >> 20} MiB is over the {MAX_IMAGE_BYTES >> 20} MiB limit"
    try:
        with Image.open(path) as im:
            w, h = im.size
    except Exception as exc:
        return f"not a readable image ({type(exc).__name__})"
    if w * h > MAX_IMAGE_PIXELS:
        return f"{w}x{h} is over the {MAX_IMAGE_PIXELS} pixel limit"
    return None
