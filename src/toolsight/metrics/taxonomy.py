"""Image-operation categories of a tool call, from `toolsight.tools.taxonomy`.

The taxonomy gives two vocabularies per call: VisualToolBench's categories (crop, resize, rotate,
flip, brightness, contrast, editing, other) and VTC-Bench's tool groups ("Crop", "Rotate",
"Zoom in", ...). A call that performs no image operation (calculator, search) has no category.
The taxonomy is a plain import: a bug in it surfaces as an error, never as a silent fallback to
tool names.
"""

from __future__ import annotations

from functools import lru_cache

from toolsight.tools.taxonomy import classify_call


def call_operations(name: str, arguments: str) -> tuple[list[str], list[str]]:
    """(categories, VTC tool groups) of one call; a call may do several operations (code)."""
    cats, groups = _cached_operations(name, arguments)
    return list(cats), list(groups)


@lru_cache(maxsize=512)  # small: keys hold whole argument strings (model code up to 5,000 chars)
def _cached_operations(name: str, arguments: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    cats, groups = _operations(name, arguments)
    return tuple(cats), tuple(groups)


def _operations(name: str, arguments: str) -> tuple[list[str], list[str]]:
    # classify_call parses the JSON arguments itself (bad JSON = no arguments) and classifies
    # model-written code (`arguments["code"]`) by AST; unparsable code names no operation
    ops = classify_call(name, arguments)
    return list(ops.vtb), list(ops.vtc)


def call_categories(name: str, arguments: str) -> list[str]:
    """The categories of one call (see `call_operations`)."""
    return call_operations(name, arguments)[0]
