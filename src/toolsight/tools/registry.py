"""Named tool sets a setting can ask for.

Built-in sets are listed once in `_builtins` by plain import (inside each factory, so `import
toolsight` stays light); third-party packages add sets through the `toolsight.toolsets`
entry-point group (`name = "package.module:factory"`, the factory returning a list of tools).
A benchmark with sets of its own (its official code tool, say) passes them to `build_tools` as
`extra`, so tools never hold benchmark knowledge and this module never imports a benchmark.
Each set says whether its tools run model-written code in the sandbox (the runner sizes the
sandbox pool and records its isolation only then) and whether they use the web layer (the runner
opens a web session — live, offline corpus or replay — only then).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points

from toolsight.errors import ToolsightError
from toolsight.tools.base import Tool

ToolSetFactory = Callable[[], list[Tool]]


@dataclass(frozen=True)
class ToolSet:
    name: str
    factory: ToolSetFactory
    description: str = ""
    needs_sandbox: bool = False
    needs_web: bool = False


class UnknownToolSet(ToolsightError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


_SETS: dict[str, ToolSet] = {}
_loaded = False


def register_toolset(name: str, factory: ToolSetFactory, description: str = "", *,
                     needs_sandbox: bool = False, needs_web: bool = False) -> None:
    """Add (or replace) tool set `name`."""
    _SETS[name] = ToolSet(name, factory, description, needs_sandbox, needs_web)


def _crop() -> list[Tool]:
    from toolsight.tools.crop import crop_tools

    return crop_tools()


def _python() -> list[Tool]:
    from toolsight.tools.python_tools import code_tools

    return code_tools()


def _python_image_processing() -> list[Tool]:
    from toolsight.tools.python_tools import image_processing_tools

    return image_processing_tools()


def _python_stateful() -> list[Tool]:
    from toolsight.tools.python_tools import stateful_code_tools

    return stateful_code_tools()


def _python_kernel() -> list[Tool]:
    from toolsight.tools.python_tools import kernel_tools

    return kernel_tools()


def _calculator() -> list[Tool]:
    from toolsight.tools.calculator import calculator_tools

    return calculator_tools()


def _opencv() -> list[Tool]:
    from toolsight.tools.opencv import opencv_tools

    return opencv_tools()


def _perception() -> list[Tool]:
    from toolsight.tools.perception import perception_tools

    return perception_tools()


def _detect() -> list[Tool]:
    from toolsight.tools.perception import detect_tools

    return detect_tools()


def _ocr() -> list[Tool]:
    from toolsight.tools.perception import ocr_tools

    return ocr_tools()
def _browse() -> list[Tool]:
    from toolsight.tools.web_tools import browse_tools

    return browse_tools()


def _browse_text() -> list[Tool]:
    from toolsight.tools.web_tools import browse_text_tools

    return browse_text_tools()


def _web_search() -> list[Tool]:
    from toolsight.tools.web_research import web_search_tools

    return web_search_tools()


def _page_text() -> list[Tool]:
    from toolsight.tools.web_research import page_text_tools

    return page_text_tools()


def _weather() -> list[Tool]:
    from toolsight.tools.web_research import weather_tools

    return weather_tools()


def _builtins() -> None:
    register_toolset("crop", _crop, "in-process crop with a relative or pixel bbox")
    register_toolset("python", _python, "python_image_processing, python_interpreter, calculator",
                     needs_sandbox=True)
    register_toolset("python_image_processing", _python_image_processing,
                     "python_image_processing only (model-written image code that saves transformed_image_<i>.png)",
                     needs_sandbox=True)
    register_toolset("python_stateful", _python_stateful,
                     "the python tools with a stateful interpreter (variables persist across a task's calls)",
                     needs_sandbox=True)
    register_toolset("python_kernel", _python_kernel,
                     "python_kernel (a stateful IPython kernel: display(), plt.show(), Out values) and calculator",
                     needs_sandbox=True)
    register_toolset("calculator", _calculator, "safe arithmetic expression evaluator")
    register_toolset("opencv", _opencv, "35 OpenCV image operations (interface tools)")
    register_toolset("perception", _perception, "detect_and_crop_objects and ocr (backends: toolsight.perception)")
    register_toolset("detect", _detect, "detect_and_crop_objects: detection (API / ONNX / replay / classical) + crops")
    register_toolset("ocr", _ocr, "ocr: text lines with boxes (RapidOCR offline, Tesseract when installed)")
    register_toolset("browse", _browse, "text_search, image_search, reverse_image_search, visit, image_crop "
                     "(web layer; also accepts crop_image / webpage_visit)", needs_web=True)
    register_toolset("browse_text", _browse_text, "text_search and visit only (web layer)", needs_web=True)
    register_toolset("web_search", _web_search, "web_search: numbered web results (web layer; alias google_search)",
                     needs_web=True)
    register_toolset("browser_get_page_text", _page_text,
                     "browser_get_page_text: a page's main text, 8,000 characters at a time (web layer)",
                     needs_web=True)
    register_toolset("historical_weather", _weather, "historical_weather: a place's weather on a past day "
                     "(Open-Meteo archive live, the corpus's weather.json offline)", needs_web=True)


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    _builtins()
    for ep in entry_points(group="toolsight.toolsets"):
        register_toolset(ep.name, ep.load(), f"from {ep.value}")


def _all(extra: Mapping[str, ToolSet] | None) -> dict[str, ToolSet]:
    _load()
    return {**_SETS, **(extra or {})}


def describe_toolsets(extra: Mapping[str, ToolSet] | None = None) -> dict[str, str]:
    return {k: v.description for k, v in _all(extra).items()}


def get_toolset(name: str, extra: Mapping[str, ToolSet] | None = None) -> ToolSet:
    sets = _all(extra)
    if name not in sets:
        raise UnknownToolSet(f"unknown tool set {name!r}; known: {', '.join(sorted(sets))}")
    return sets[name]


def needs_sandbox(names: list[str], extra: Mapping[str, ToolSet] | None = None) -> bool:
    """True when any of the named sets runs model-written code in the sandbox."""
    sets = _all(extra)
    return any(sets[n].needs_sandbox for n in names if n in sets)


def needs_web(names: list[str], extra: Mapping[str, ToolSet] | None = None) -> bool:
    """True when any of the named sets uses the web layer (search, page visits, hosted images)."""
    sets = _all(extra)
    return any(sets[n].needs_web for n in names if n in sets)


def build_tools(names: list[str], extra: Mapping[str, ToolSet] | None = None) -> list[Tool]:
    """Instantiate the tools of the named sets (a tool listed twice is kept once)."""
    tools: dict[str, Tool] = {}
    for n in names:
        for t in get_toolset(n, extra).factory():
            tools.setdefault(t.name, t)
    return list(tools.values())
