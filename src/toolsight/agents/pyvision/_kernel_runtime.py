"""PyVision's code executor, run inside a toolsight sandbox kernel (sent there as the text of a cell).

Standalone: it imports nothing of toolsight, and everything it defines starts with `_pv` so it stays
out of the way of the kernel's own names (model code never runs in the kernel's namespace: it runs in
the runtime's own dict, as in PyVision). It reproduces `inference_engine/safe_persis_shared_vis_python_exe.py`
of agents-x-project/PyVision @ d08b4502:

- `_PVRuntime` is `ImageRuntime`: a plain `exec` namespace with the HEADERS run in it (matplotlib on
  Agg, `plt`, `Image`, `io`, `base64`, `np`, `_captured_figures`) and `image_clue_i` = the task's images
  as RGB PIL images (the harness gives each file with its index: the first images are 0, 1, …, as in
  the original; an image of a later turn takes the next `<image_clue_k>` label of the conversation);
  `_captured_figures` starts with one entry per input image (base64 of its raw
  pixels, as the original stores them), so a block's new figures are the ones after that count;
- `exec_code`: the forbidden-call check (`(\\s|^)?(input|os\\.system|subprocess)\\(` anywhere in the
  code: "Forbidden function calls detected"), then `plt.show()` replaced by the original's text
  (savefig to PNG, base64 into `_captured_figures`, close) and `exec`;
- a block runs with stdout captured (`redirect_stdout`); the result is `{'text': out, 'images': new}`
  without the empty parts, or the error as `str(e)`; then `batch_apply`'s post-processing (strip, cut
  to 200 + "..." + 200 above 400 characters).

Both loop modes run a block through `PersistentWorker`'s protocol — a worker thread (the original's
process) with an input and an output queue, the cell waiting `timeout` seconds for the result, else
reporting "Timeout Error" while the worker goes on — and differ in what follows (`_pv_setup(mode, ...)`):

- `official`: the runtime is made by the worker at the first block; after a timeout the worker is left
  running, so the next block gets the previous block's result (the original's stale worker); an
  exception the worker loop does not catch (SystemExit) ends the worker, and every later block times out;
- `toolsight`: the runtime is made at set-up (loading the images does not count against a block's
  time); the payload says `timed_out` and the harness restarts the kernel, so no stale result can
  arrive; SystemExit & co. are reported as errors; `plt.show()` becomes a call (`_pv_show()`), so it
  works inside an indented block too.

No `from __future__` import here: `exec` compiles model code with the caller's future features.

Each block's result is written as one line `@@pyvision-result@@ ` + JSON to the kernel's stdout stream as it
was when `_pv_setup` ran (a stale block's `redirect_stdout` cannot swallow it); figures are written
as PNG files under `.pyvision/` in the workspace by the cell that reports them.
"""

import base64 as _pv_base64
import io as _pv_io
import json as _pv_json
import os as _pv_os
import queue as _pv_queue
import re as _pv_re
import sys as _pv_sys
import threading as _pv_threading
import traceback as _pv_traceback
from collections.abc import Callable
from contextlib import redirect_stderr as _pv_redirect_stderr
from contextlib import redirect_stdout as _pv_redirect_stdout
from typing import Any

_PV_MARK = "@@pyvision-result@@ "
_PV_FORBIDDEN = _pv_re.compile(r"(\s|^)?(input|os\.system|subprocess)\(")
_PV_SHOW_ORIGINAL = """
# Capture current figure
buf = io.BytesIO()
plt.savefig(buf, format='png')
buf.seek(0)
_captured_image = base64.b64encode(buf.read()).decode('utf-8')
_captured_figures.append(_captured_image)
plt.close()
"""
_PV_HEADERS = [
    "import matplotlib",
    "matplotlib.use('Agg')",
    "import matplotlib.pyplot as plt",
    "from PIL import Image",
    "import io",
    "import base64",
    "import numpy as np",
    "_captured_figures = []",
]
_PV_STATE: dict[str, Any] = {"mode": "official", "timeout": 20.0, "root": ".", "out": None, "worker": None, "figures": 0}


def _pv_show_into(ns: dict[str, Any]) -> Callable[..., None]:
    """The toolsight mode's `plt.show()`: the original's capture, as a call (valid at any indentation)."""
    def _pv_show(*args: Any, **kwargs: Any) -> None:
        plt = ns["plt"]
        buf = _pv_io.BytesIO()
        plt.savefig(buf, format="png")
        buf.seek(0)
        ns.setdefault("_captured_figures", []).append(_pv_base64.b64encode(buf.read()).decode("utf-8"))
        plt.close()
    return _pv_show


class _PVRuntime:
    """`ImageRuntime`: the namespace, HEADERS, `image_clue_i` and `_captured_figures`."""

    def __init__(self, files: list[list[Any]], fixed_show: bool) -> None:
        self.fixed_show = fixed_show
        self.ns: dict[str, Any] = {}
        self.loaded = 0
        for header in _PV_HEADERS:
            self.exec_code(header)
        if fixed_show:
            self.ns["_pv_show"] = _pv_show_into(self.ns)
        self.ns["_captured_figures"] = []
        self.add_images(files)

    def add_images(self, files: list[list[Any]]) -> None:
        """`image_clue_<k>` for the (file, k) pairs not loaded yet (the first call: the task's images so far)."""
        from PIL import Image

        figures = self.ns.setdefault("_captured_figures", [])
        for name, index in files[self.loaded:]:
            self.loaded += 1
            try:
                with open(name, "rb") as fh:
                    image = Image.open(_pv_io.BytesIO(fh.read())).convert("RGB")
            except Exception:  # the original skips an image it cannot decode (base64_to_image returns None)
                continue
            self.ns[f"image_clue_{index}"] = image
            figures.append(_pv_base64.b64encode(_pv_io.BytesIO(image.tobytes()).getvalue()).decode("utf-8"))

    def exec_code(self, code_piece: str) -> None:
        if _PV_FORBIDDEN.search(code_piece):
            raise RuntimeError("Forbidden function calls detected")
        if "plt.show()" in code_piece:
            modified = code_piece.replace("plt.show()", "_pv_show()" if self.fixed_show else _PV_SHOW_ORIGINAL)
            if "_captured_figures" not in self.ns:
                self.ns["_captured_figures"] = []
            exec(modified, self.ns)
        else:
            exec(code_piece, self.ns)


def _pv_execute(runtime: _PVRuntime, code_lines: list[str], catch_all: bool) -> dict[str, Any]:
    """The worker's `execute` branch (stdout answer), as a result dict with `status` and `report`."""
    err = _pv_io.StringIO()
    try:
        pre = len(runtime.ns.get("_captured_figures", []))
        out = _pv_io.StringIO()
        with _pv_redirect_stdout(out), _pv_redirect_stderr(err):
            runtime.exec_code("\n".join(code_lines))
        out.seek(0)
        text = out.read()
        new = runtime.ns.get("_captured_figures", [])[pre:]
        if new:
            result = {"text": text, "images": new} if text else {"images": new}
        else:
            result = {"text": text} if text else {}
        return {"status": "success", "result": result, "report": "Done", "stderr": err.getvalue()}
    except Exception as e:
        return {"status": "error", "error": str(e), "traceback": _pv_traceback.format_exc(),
                "report": f"Error: {e!s}", "stderr": err.getvalue()}
    except BaseException as e:  # SystemExit & co.: the original's worker dies of them
        if not catch_all:
            raise
        return {"status": "error", "error": f"{type(e).__name__} {e}".strip(), "traceback": _pv_traceback.format_exc(),
                "report": f"Error: {type(e).__name__} {e}".strip(), "stderr": err.getvalue()}


class _PVWorker:
    """`PersistentWorker`, with a thread for the process: the original's queues and timeout."""

    def __init__(self, runtime: _PVRuntime | None, catch_all: bool) -> None:
        self.runtime = runtime
        self.catch_all = catch_all
        self.inq: _pv_queue.Queue[dict[str, Any] | None] = _pv_queue.Queue()
        self.outq: _pv_queue.Queue[dict[str, Any]] = _pv_queue.Queue()
        self.thread = _pv_threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            try:
                task = self.inq.get()
                if task is None:
                    break
                if self.runtime is None:
                    self.runtime = _PVRuntime(task["files"], fixed_show=False)
                else:
                    self.runtime.add_images(task["files"])
                self.outq.put(_pv_execute(self.runtime, task["code"], self.catch_all))
            except Exception as e:
                self.outq.put({"status": "error", "error": f"Worker error: {e!s}",
                               "traceback": _pv_traceback.format_exc()})

    def execute(self, code_lines: list[str], files: list[list[Any]], timeout: float) -> dict[str, Any]:
        self.inq.put({"type": "execute", "code": code_lines, "files": files})
        try:
            return self.outq.get(timeout=timeout)
        except _pv_queue.Empty:
            return {"status": "error", "error": "Execution timeout", "report": "Timeout Error", "timed_out": True}


def _pv_truncate(s: str, max_length: int = 400) -> str:
    half = max_length // 2
    if len(s) > max_length:
        s = s[:half] + "..." + s[-half:]
    return s


def _pv_setup(mode: str, files: list[list[Any]], timeout: float) -> None:
    """Start the executor of one task (again after a restart)."""
    official = mode == "official"
    _PV_STATE.update(mode=mode, timeout=float(timeout), root=_pv_os.getcwd(), out=_pv_sys.stdout, figures=0)
    runtime = None if official else _PVRuntime(list(files), fixed_show=True)
    _PV_STATE["worker"] = _PVWorker(runtime, catch_all=not official)


def _pv_write_figure(b64: Any) -> str | None:
    """A reported figure as a PNG file under .pyvision/ (None when it does not decode)."""
    try:
        data = _pv_base64.b64decode(b64)
    except Exception:
        return None
    folder = _pv_os.path.join(_PV_STATE["root"], ".pyvision")
    _pv_os.makedirs(folder, exist_ok=True)
    _PV_STATE["figures"] += 1
    name = f".pyvision/fig-{_PV_STATE['figures']}.png"
    with open(_pv_os.path.join(_PV_STATE["root"], name), "wb") as fh:
        fh.write(data)
    return name


def _pv_block(code: str, files: list[list[Any]]) -> None:
    """Run one block; write its result line (see the module docstring)."""
    raw = _PV_STATE["worker"].execute(code.split("\n"), list(files), _PV_STATE["timeout"])
    # PythonExecutor.execute, then batch_apply's post-processing
    res: dict[str, Any]
    if raw.get("status") == "success":
        res, report = raw["result"], raw.get("report", "Done")
    else:
        res = {"error": raw.get("error", "Unknown error"), "traceback": raw.get("traceback", "")}
        report = raw.get("report", f"Error: {raw.get('error', 'Unknown error')}")
    if "text" in res:
        res["text"] = _pv_truncate(str(res["text"]).strip())
    report = _pv_truncate(str(report).strip())
    payload: dict[str, Any] = {"report": report, "text": res.get("text"), "has_text": "text" in res,
               "timed_out": bool(raw.get("timed_out")),
               "images": None, "bad_images": 0, "stderr": (raw.get("stderr") or "")[-2000:],
               "traceback": (res.get("traceback") or "")[-4000:]}
    if "images" in res:
        names = [_pv_write_figure(b) for b in res["images"]]
        payload["images"] = [n for n in names if n is not None]
        payload["bad_images"] = sum(1 for n in names if n is None)
    _PV_STATE["out"].write(_PV_MARK + _pv_json.dumps(payload) + "\n")
