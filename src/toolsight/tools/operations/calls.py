"""The operations one tool call performed: an OpenCV interface tool, a crop / zoom tool, or code.

`call_operations(tool, arguments)` recognises the 35 `opencv_*` interface tools (qualified by
their `param`: a zoom with scaling, convertScaleAbs's alpha / beta), crop and zoom tools by name,
and any call with a string `code` argument, whose code goes to `code_operations`. Other calls
(calculator, search, ...) performed no image operation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolsight.log.arguments import ArgumentsError, load_arguments
from toolsight.tools.operations.code import code_operations
from toolsight.tools.operations.operation import (
    CROP_TOOL,
    INTERFACE_PREFIX,
    SCALE,
    SCALED,
    SHIFT,
    ZOOM_TOOL,
    Operation,
)

#: the interface operations (`opencv_<op>`, toolsight.tools.opencv), also recognised without the prefix
INTERFACE_OPS: frozenset[str] = frozenset({
    "colorspace_gray", "colorspace_hsv", "colorspace_lab", "resize", "rotate", "translate", "flip", "crop",
    "zoom_in", "blur", "denoise", "canny", "gradients", "threshold", "morphology", "contours", "contour_area",
    "arc_length", "approx_poly", "watershed", "grabcut", "floodfill", "connected_components_with_stats",
    "histogram", "convertscaleabs", "features", "hough_lines", "hough_circles", "template_match", "dft",
    "pyramid", "inpaint", "inrange_color", "draw_line", "draw_circle",
})
CROP_TOOLS: frozenset[str] = frozenset({"crop", "image_crop", "crop_image"})
ZOOM_TOOLS: frozenset[str] = frozenset({"image_zoom_in_tool", "zoom_in", "image_zoom_in"})


def call_operations(tool_name: str, arguments: Mapping[str, Any] | str | None) -> tuple[Operation, ...]:
    """The operations of one call, in order; `arguments` as a mapping or its JSON (bad JSON: none)."""
    args = _args(arguments)
    name = tool_name.strip()
    op = name.removeprefix(INTERFACE_PREFIX)
    if op in INTERFACE_OPS and (name.startswith(INTERFACE_PREFIX) or op not in CROP_TOOLS | ZOOM_TOOLS):
        param = args.get("param", {})
        if isinstance(param, str):
            param = _args(param)
        return (_interface(op, param if isinstance(param, Mapping) else {}),)
    if name in CROP_TOOLS:
        return (Operation(0, CROP_TOOL),)
    if name in ZOOM_TOOLS:
        return (Operation(0, ZOOM_TOOL),)
    code = args.get("code")
    if isinstance(code, str):
        return code_operations(code)
    return ()


def _interface(op: str, param: Mapping[str, Any]) -> Operation:
    quals: set[str] = set()
    if op == "zoom_in" and (param.get("scale") not in (None, 1, 1.0) or "target_width" in param
                            or "target_height" in param):
        quals.add(SCALED)
    if op == "convertscaleabs":
        if _num(param.get("alpha"), 1.0) != 1.0:
            quals.add(SCALE)
        if _num(param.get("beta"), 0.0) != 0.0:
            quals.add(SHIFT)
    return Operation(0, INTERFACE_PREFIX + op, frozenset(quals))


def _num(v: Any, default: float) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _args(arguments: Mapping[str, Any] | str | None) -> Mapping[str, Any]:
    if isinstance(arguments, Mapping):
        return arguments
    if not arguments:
        return {}
    try:
        val = load_arguments(arguments)
    except ArgumentsError:
        return {}
    return val if isinstance(val, dict) else {}
