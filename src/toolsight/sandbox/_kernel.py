"""The in-process IPython kernel that runs inside a confined stateful sandbox child (no ZMQ, no sockets).

Imported by `_server.py` (a standalone script: this module must not import toolsight). The
server creates one `Kernel` when it preloads the `kernel` profile; the session child, once
confined, calls `execute(code)` per request. It captures what a Jupyter kernel would send as
iopub messages: stream output, `execute_result` (the last expression's `text/plain` repr),
`display_data` (images are written to the workspace as PNG/JPEG files, only their names are
reported; an `execute_result` keeps its `text/plain` next to the image, as Jupyter sends both),
and errors with IPython's formatted traceback (ANSI colour codes stripped). Cells are named as
ipykernel names them (`<tmp>/ipykernel_<pid>/<n>.py`, a file that does not exist), which is what
makes IPython print a traceback's context lines the way a Jupyter kernel does. Matplotlib uses the
inline backend, so `plt.show()` and figures left open become images.
"""

from __future__ import annotations

import base64
import contextlib
import os
import re
import sys
import zlib
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
IMAGE_MIMES = (("image/png", ".png"), ("image/jpeg", ".jpg"))
DISPLAY_DIR = ".display"


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


class _Capture:
    """Ordered outputs of the running cell, with caps on text and image bytes."""

    def __init__(self, text_cap: int, image_cap: int, max_images: int) -> None:
        self.text_cap, self.image_cap, self.max_images = text_cap, image_cap, max_images
        self.outputs: list[dict[str, Any]] = []
        self.text_bytes = 0
        self.images = 0
        self.count = 0
        self.notes: list[str] = []
        self.root = "."  # the workspace: set at bind, so a cell that changes directory does not move images

    def reset(self, count: int) -> None:
        self.outputs, self.text_bytes, self.images, self.count, self.notes = [], 0, 0, count, []

    def _clip(self, text: str) -> str:
        left = self.text_cap - self.text_bytes
        if left <= 0:
            return ""
        if len(text) > left:
            text = text[:left]
        self.text_bytes += len(text)
        return text

    def stream(self, name: str, text: str) -> None:
        text = self._clip(text)
        if not text:
            return
        if self.outputs and self.outputs[-1]["kind"] == "stream" and self.outputs[-1]["name"] == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"kind": "stream", "name": name, "text": text})

    def rich(self, kind: str, data: dict[str, Any]) -> None:
        for mime, ext in IMAGE_MIMES:
            if mime in data:
                text = data.get("text/plain") if kind == "execute_result" else None
                self._image(kind, mime, ext, data[mime], None if text is None else self._clip(str(text)))
                return
        text = data.get("text/plain")
        if text is not None:
            self.outputs.append({"kind": kind, "text": self._clip(str(text)), "mime": "text/plain"})

    def _image(self, kind: str, mime: str, ext: str, payload: Any, text: str | None = None) -> None:
        if self.images >= self.max_images:
            self.notes.append(f"only the first {self.max_images} images of a cell are kept")
            return
        raw = payload if isinstance(payload, bytes) else base64.b64decode(str(payload))
        if len(raw) > self.image_cap:
            self.notes.append(f"an image of {len(raw)} bytes was over the {self.image_cap} byte limit")
            return
        self.images += 1
        os.makedirs(os.path.join(self.root, DISPLAY_DIR), exist_ok=True)
        name = f"{DISPLAY_DIR}/cell{self.count}-{self.images}{ext}"
        with open(os.path.join(self.root, name), "wb") as fh:
            fh.write(raw)
        out: dict[str, Any] = {"kind": kind, "image": name, "mime": mime}
        if text is not None:
            out["text"] = text
        self.outputs.append(out)


class _Stream:
    """sys.stdout/sys.stderr of the kernel: recorded in order, and written to the fd as well."""

    def __init__(self, name: str, fd: int, cap: _Capture) -> None:
        self.name, self.fd, self.cap = name, fd, cap
        self.encoding = "utf-8"
        self.errors = "backslashreplace"

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.cap.stream(self.name, s)
        with contextlib.suppress(OSError):
            os.write(self.fd, s.encode("utf-8", "backslashreplace"))
        return len(s)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self.fd

    @property
    def closed(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False


class Kernel:
    """An IPython InteractiveShell that records outputs the way a Jupyter kernel reports them."""

    def __init__(self, text_cap: int = 64 * 1024, image_cap: int = 20 << 20, max_images: int = 16) -> None:
        import matplotlib

        matplotlib.use("module://matplotlib_inline.backend_inline")
        from IPython.core.compilerop import CachingCompiler
        from IPython.core.displayhook import DisplayHook
        from IPython.core.displaypub import DisplayPublisher
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        cap = self.cap = _Capture(text_cap, image_cap, max_images)

        class Publisher(DisplayPublisher):
            def publish(self, data: dict[str, Any], metadata: Any = None, source: Any = None, *,
                        transient: Any = None, update: bool = False, **kw: Any) -> None:
                cap.rich("display_data", data)

            def clear_output(self, wait: bool = False) -> None:
                return None

        class Hook(DisplayHook):
            def start_displayhook(self) -> None:
                return None

            def write_output_prompt(self) -> None:
                return None

            def write_format_data(self, format_dict: dict[str, Any], md_dict: Any = None) -> None:
                cap.rich("execute_result", format_dict)

            def finish_displayhook(self) -> None:
                return None

        class Compiler(CachingCompiler):
            """ipykernel's cell names: a `.py` path that does not exist (no file is written)."""

            def get_code_name(self, raw_code: str, transformed_code: str, number: int) -> str:
                folder = f"/tmp/ipykernel_{os.getpid()}"  # the default temp folder: never the server's scratch
                return os.path.join(folder, f"{zlib.crc32(raw_code.encode('utf-8', 'replace'))}.py")

        class Shell(InteractiveShell):
            def enable_gui(self, gui: Any = None) -> None:
                return None

            def _showtraceback(self, etype: Any, evalue: Any, stb: list[str]) -> None:
                kernel.error = {"ename": getattr(etype, "__name__", str(etype)), "evalue": str(evalue),
                                "traceback": [strip_ansi(s) for s in stb]}
                cap.outputs.append({"kind": "error", "text": strip_ansi("\n".join(stb))})

            def init_io(self) -> None:
                return None

        kernel = self
        self.error: dict[str, Any] | None = None
        cfg = Config()
        cfg.HistoryManager.enabled = False  # no sqlite file in the workspace
        cfg.InteractiveShell.colors = "Linux"  # what a Jupyter kernel uses; the codes are stripped
        cfg.InteractiveShell.xmode = "Context"
        cfg.InteractiveShell.autoindent = False
        cfg.InteractiveShell.cache_size = 1000
        # the singleton: IPython.display.display() and the traceback's "Cell In[n]" labels look it up
        self.shell = Shell.instance(config=cfg, displayhook_class=Hook, display_pub_class=Publisher,
                                    compiler_class=Compiler)
        self.shell.enable_matplotlib("inline")  # type: ignore[no-untyped-call]
        # Jupyter (matplotlib-inline) defaults: PNG figures at 72 dpi... as a notebook shows them
        self.shell.run_cell(  # type: ignore[no-untyped-call]
            "import numpy as np\nimport cv2\nimport matplotlib.pyplot as plt\n"
                            "from PIL import Image as PILImage\n", store_history=False, silent=True)
        self.shell.execution_count = 1
        self._patch_cv2()

    def _patch_cv2(self) -> None:
        """cv2's GUI calls have no display here: make them no-ops instead of errors or hangs."""
        cv2 = self.shell.user_ns.get("cv2")
        if cv2 is None:
            return
        for name, value in (("imshow", None), ("waitKey", -1), ("destroyAllWindows", None),
                            ("destroyWindow", None), ("namedWindow", None)):
            setattr(cv2, name, (lambda v: (lambda *a, **k: v))(value))

    def bind(self, out_fd: int, err_fd: int) -> None:
        """In the confined child (its working folder is the workspace): route sys.stdout/sys.stderr
        through the capture, and keep displayed images in the workspace whatever folder a cell moves to."""
        self.cap.root = os.getcwd()
        sys.stdout = _Stream("stdout", out_fd, self.cap)
        sys.stderr = _Stream("stderr", err_fd, self.cap)

    def execute(self, code: str) -> dict[str, Any]:
        self.error = None
        count = int(self.shell.execution_count)
        self.cap.reset(count)
        ok = True
        try:
            result = self.shell.run_cell(code, store_history=True)  # type: ignore[no-untyped-call]
            ok = bool(result.success) and self.error is None
            if result.error_before_exec is not None and self.error is None:
                exc = result.error_before_exec
                self.error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": [f"{type(exc).__name__}: {exc}"]}
                ok = False
        except BaseException as exc:  # SystemExit, KeyboardInterrupt raised past IPython
            ok = False
            self.error = {"ename": type(exc).__name__, "evalue": str(exc), "traceback": [f"{type(exc).__name__}: {exc}"]}
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        err = self.error
        return {
            "ok": ok,
            "execution_count": count,
            "outputs": self.cap.outputs,
            "kernel_error": err,
            "error": f"{err['ename']}: {err['evalue']}"[:2000] if err else None,
            "exc_type": err["ename"] if err else None,
            "notes": self.cap.notes,
        }
