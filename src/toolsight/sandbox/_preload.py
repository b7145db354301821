"""What the sandbox server imports once, before it forks (stdlib + the science packages; no toolsight).

Profiles: `image` (numpy, cv2, PIL: small, so each fork is cheap), `full` (also pandas, scipy,
sympy, matplotlib, bs4, tabulate) and `kernel` (`full` plus an IPython shell, for stateful kernels).
Everything else is imported lazily from the read-only site-packages on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from typing import TYPE_CHECKING, Any

PRELOADED: dict[str, Any] = {}


class Lazy:
    """A module imported on first attribute access (keeps the server small, so fork stays cheap)."""

    def __init__(self, name: str, attr: str | None = None) -> None:
        self._name, self._attr = name, attr
        self._obj: Any = None

    def _load(self) -> Any:
        if self._obj is None:
            if self._name == "matplotlib.pyplot":
                import matplotlib

                matplotlib.use("Agg")
            mod = importlib.import_module(self._name)
            if self._name == "matplotlib.pyplot":
                setattr(mod, "show", lambda *a, **k: None)  # noqa: B010  VisualToolBench: show is a no-op
            self._obj = getattr(mod, self._attr) if self._attr else mod
        return self._obj

    def __getattr__(self, key: str) -> Any:
        return getattr(self._load(), key)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._load()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self._name}>"


# name in the code's namespace -> (module, attribute)
EXTRA_NAMES = {
    "pd": ("pandas", None), "pandas": ("pandas", None), "scipy": ("scipy", None), "sympy": ("sympy", None),
    "tabulate": ("tabulate", None), "plt": ("matplotlib.pyplot", None), "BeautifulSoup": ("bs4", "BeautifulSoup"),
}


def preload(profile: str, eager: bool = True) -> Any:
    """Import the packages once. 'image': numpy, cv2, PIL; 'full' adds pandas, scipy, sympy, matplotlib;
    'kernel' also builds the IPython shell (returned). `eager=False` leaves the 'full' extras lazy (same
    names, imported on first use): for a process that runs one call and exits (`_child.py`)."""
    import numpy as np

    PRELOADED.update(np=np, numpy=np)
    with contextlib.suppress(Exception):
        import cv2

        cv2.setNumThreads(1)
        PRELOADED["cv2"] = cv2
    with contextlib.suppress(Exception):
        import io

        from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageOps

        buf = io.BytesIO()
        Image.new("RGB", (8, 8)).save(buf, "PNG")
        Image.open(io.BytesIO(buf.getvalue())).load()
        Image.preinit()
        PRELOADED.update(Image=Image, ImageDraw=ImageDraw, ImageEnhance=ImageEnhance, ImageFilter=ImageFilter,
                         ImageOps=ImageOps)
    if profile in ("full", "kernel") and eager:
        for mod in ("pandas", "scipy", "scipy.ndimage", "scipy.stats", "sympy", "tabulate", "bs4",
                    "matplotlib.pyplot"):
            if profile == "kernel" and mod == "matplotlib.pyplot":
                continue  # the kernel sets up pyplot itself, with the inline backend and a real show()
            with contextlib.suppress(Exception):
                Lazy(mod)._load()
    for name, (mod, attr) in EXTRA_NAMES.items():
        lazy = Lazy(mod, attr)
        if mod in sys.modules:
            with contextlib.suppress(Exception):
                PRELOADED[name] = lazy._load()
                continue
        PRELOADED[name] = lazy
    if profile == "kernel":
        if TYPE_CHECKING:
            from toolsight.sandbox._kernel import Kernel
        else:
            from _kernel import Kernel

        kernel = Kernel()
        with contextlib.suppress(Exception):  # after the kernel chose the inline backend: seaborn imports pyplot
            import seaborn  # noqa: F401  VTC-Bench's code interpreter imports it in every kernel's first cell
        return kernel
    return None
