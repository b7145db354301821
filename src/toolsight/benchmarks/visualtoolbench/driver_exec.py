"""The reference's `exec` of model code, rebuilt inside toolsight's sandbox (the official code tools).

`VisionTools.python_image_processing` and `python_interpreter` (reference `scripts/tools.py` @
d4f200a0) run model code with `exec(compile(code, "<llm_code>", "exec"), safe_globals, {})`: restricted
`__builtins__` (no `sum`, `round`, `open`, `class`), separate globals and locals, a `SafeImage` wrapper
whose `open` is broken (`Image.Image.open`), a `SafePyplot` with a no-op `show`; a raised exception
is printed with `traceback.print_exc()` into the tool's `stderr`.

Here the same namespace runs in the sandbox, and so does the traceback: the part of the reference's
module that can appear in one (`SafeImage`, `SafePyplot`, the `exec` line) is compiled from source
laid out at the reference's line numbers under the reference's file name, relative
(`scripts/tools.py`), so Python prints the frames the driver prints — the `exec` line, the model's
`<llm_code>` frames, the broken `open` line with its `^^^` markers — and the model reads the same
error text. toolsight's own helpers (lazy imports, the namespace builder) are left out of the
printed stack; frames of installed libraries keep their paths on this machine.
"""

from __future__ import annotations

#: the exit code of the sandboxed process when the model's code raised (the reference's ok = "false")
CODE_EXIT = 86
#: the reference file the frames name, relative to the driver's folder
DRIVER_FILE = "scripts/tools.py"

#: scripts/tools.py @ d4f200a0: the lines a traceback can show, at their line numbers; the other
#: lines only keep the blocks valid (what they say never appears in a traceback)
_DRIVER_LINES: dict[int, str] = {
    61: "class VisionTools:",
    64: "    @staticmethod",
    65: "    def python_image_processing(code, _env):",
    90: "        class SafeImage:",
    91: "            def __init__(self, *args, **kwargs):",
    92: "                self._image = Image.Image(*args, **kwargs)",
    94: "            def __getattr__(self, name):",
    96: "                return getattr(self._image, name)",
    98: "            def show(self, *args, **kwargs):",
    100: "                pass",
    102: "            @staticmethod",
    103: "            def open(*args, **kwargs):",
    105: "                img = Image.Image.open(*args, **kwargs)",
    106: "                safe_img = SafeImage()",
    107: "                safe_img._image = img",
    108: "                return safe_img",
    112: "        class SafePyplot:",
    113: "            def __getattr__(self, name):",
    114: "                return getattr(plt, name)",
    116: "            def show(self, *args, **kwargs):",
    118: "                pass",
    120: "        safe_plt = SafePyplot()",
    123: "        safe_globals = _env(\"image\", SafeImage, safe_plt)",
    138: "        safe_locals = {}",
    142: "        ok = True",
    148: "        if True:",
    149: "            try:",
    150: "                exec(compile(code, \"<llm_code>\", \"exec\"), safe_globals, safe_locals)",
    151: "            except Exception:",
    152: "                ok = False",
    153: "                _print_exc()",
    174: "        return ok",
    176: "    @staticmethod",
    177: "    def python_interpreter(code, _env):",
    196: "        class SafeImage:",
    197: "            def __init__(self, *args, **kwargs):",
    198: "                self._image = Image.Image(*args, **kwargs)",
    200: "            def __getattr__(self, name):",
    202: "                return getattr(self._image, name)",
    204: "            def show(self, *args, **kwargs):",
    206: "                pass",
    208: "            @staticmethod",
    209: "            def open(*args, **kwargs):",
    211: "                img = Image.Image.open(*args, **kwargs)",
    212: "                safe_img = SafeImage()",
    213: "                safe_img._image = img",
    214: "                return safe_img",
    218: "        class SafePyplot:",
    219: "            def __getattr__(self, name):",
    220: "                return getattr(plt, name)",
    222: "            def show(self, *args, **kwargs):",
    224: "                pass",
    226: "        safe_plt = SafePyplot()",
    229: "        safe_globals = _env(\"interpreter\", SafeImage, safe_plt)",
    262: "        safe_locals = {}",
    265: "        if True:",
    266: "            try:",
    267: "                exec(compile(code, \"<llm_code>\", \"exec\"), safe_globals, safe_locals)",
    268: "            except Exception:",
    269: "                _print_exc()",
    270: "                return False",
    271: "        return True",
}


def driver_source() -> str:
    """The reference module's traceback-relevant lines at their line numbers (blank lines between)."""
    last = max(_DRIVER_LINES)
    return "\n".join(_DRIVER_LINES.get(n, "") for n in range(1, last + 1)) + "\n"


_PRELUDE = r'''
def _vtb_official(_code, _kind, _save):
    import builtins as _b, importlib as _il, linecache as _lc, sys as _sys, traceback as _tb
    from pathlib import Path as _Path
    from PIL import Image as _PILImage

    _here = _vtb_official.__code__.co_filename  # toolsight's own frames: never printed

    class _Lazy:
        def __init__(self, module, attr=None):
            self._m, self._a = module, attr
        def _t(self):
            obj = _il.import_module(self._m)
            return getattr(obj, self._a) if self._a else obj
        def __getattr__(self, name):
            return getattr(self._t(), name)
        def __call__(self, *args, **kwargs):
            return self._t()(*args, **kwargs)

    class _Pyplot:
        def __getattr__(self, name):
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            return getattr(plt, name)

    def _drop_own(te):
        while te is not None:
            te.stack = _tb.StackSummary.from_list([f for f in te.stack if f.filename != _here])
            _drop_own(te.__cause__)
            te = te.__context__

    def _print_exc():
        te = _tb.TracebackException(*_sys.exc_info()[:3])
        _drop_own(te)
        _sys.stderr.write("".join(te.format()))
        _sys.stderr.flush()

    def _env(kind, SafeImage, safe_plt):
        names = ("print", "range", "len", "min", "max", "abs", "float", "int", "str", "list", "dict", "set",
                 "tuple", "enumerate", "zip", "map", "filter", "__import__")
        g = {"__builtins__": {n: getattr(_b, n) for n in names}}
        import numpy as np
        if kind == "image":
            import cv2
            g.update({"Image": SafeImage, "np": np, "cv2": cv2, "plt": safe_plt,
                      "PROCESSED_IMAGE_SAVE_PATH": _Path(_save)})
        else:
            pd = _Lazy("pandas")
            g.update({"np": np, "pandas": pd, "pd": pd, "requests": _Lazy("requests"), "scipy": _Lazy("scipy.stats"),
                      "sklearn": _Lazy("sklearn"), "simpy": _Lazy("simpy"), "tabulate": _Lazy("tabulate", "tabulate"),
                      "BeautifulSoup": _Lazy("bs4", "BeautifulSoup"), "Image": SafeImage, "plt": safe_plt})
        return g

    _src = __SOURCE__
    _lc.cache[__FILE__] = (len(_src), None, _src.splitlines(True), __FILE__)
    _ns = {"__name__": "tools", "Image": _PILImage, "plt": _Pyplot(), "_print_exc": _print_exc}
    exec(compile(_src, __FILE__, "exec"), _ns)
    _tools = _ns["VisionTools"]
    ok = (_tools.python_image_processing(_code, _env) if _kind == "image"
          else _tools.python_interpreter(_code, _env))
    if not ok:
        raise SystemExit(__EXIT__)
'''.replace("__SOURCE__", repr(driver_source())).replace("__FILE__", repr(DRIVER_FILE)).replace(
    "__EXIT__", str(CODE_EXIT))


def wrap_code(code: str, kind: str, save_dir: str) -> str:
    """Model code wrapped in the reference's exec namespace (`kind` = 'image' or 'interpreter')."""
    return f"{_PRELUDE}\n_vtb_official({code!r}, {kind!r}, {save_dir!r})\n"
