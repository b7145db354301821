"""FROZEN ORACLE — do not edit: `src/toolsight/tools/taxonomy.py` as of commit 7c2be25, the last
version that classified calls into VisualToolBench's categories and VTC-Bench's groups in one place.

`test_vocabulary_equivalence.py` checks that the generic recognizer
(`toolsight.tools.operations`) with the two benchmark vocabularies gives exactly the labels this
module gives, over a large corpus of calls. Only the module docstring differs from the original
(the original follows, unchanged).

Original docstring:
Name the image operations a tool call performed, in two vocabularies, without an LLM.

* VisualToolBench's 8 categories (paper §5, Fig. 6): crop, resize, rotate, flip, brightness,
  contrast, editing (annotation, inpainting, drawing, pasting), other.
* VTC-Bench's tool groups: the 4-group vocabulary of its tool-chain analysis prompt plus the
  labels its ground-truth chains use ("Zoom in") and Table 6's "Keypoint Features".

`classify_call(tool, arguments)` handles the 35 `opencv_*` interface tools (refined by their
arguments), crop/zoom tools, and code tools (any call with a `code` argument), whose code goes to
`classify_code`: an AST pass over PIL / OpenCV / NumPy calls, PIL image methods, ImageDraw
objects and NumPy slicing. Iterating an `Operations` yields its VisualToolBench categories.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

VTB_CATEGORIES: tuple[str, ...] = ("crop", "resize", "rotate", "flip", "brightness", "contrast", "editing", "other")

VTC_GROUPS: dict[str, tuple[str, ...]] = {
    "Geometry": ("Rotate", "Crop", "Resize", "Flip", "Translate", "Image Pyramid", "Zoom in"),
    "Enhancement": ("Convert Color", "Adjust Brightness", "Histogram Eq", "Binarize", "Morphology", "Blur",
                    "Denoise", "Sharpen", "Inpaint", "Color Filter", "Flood Fill"),
    "Feature Extraction": ("Edge Detect", "Line Detect", "Circle Detect", "Compute Gradients", "Template Match",
                           "Watershed", "GrabCut", "Connected Components", "Frequency Transform",
                           "Keypoint Features"),
    "Draw": ("Draw Contours", "Measure Area", "Measure Perimeter", "Approximate Polygon", "Draw Line",
             "Draw Circle"),
}
VTC_TOOL_GROUPS: tuple[str, ...] = tuple(g for groups in VTC_GROUPS.values() for g in groups)


@dataclass(frozen=True)
class OpStep:
    """One recognised operation: where (code line, 0 for interface calls), what API, its labels."""

    line: int
    api: str
    vtb: tuple[str, ...]
    vtc: tuple[str, ...]


@dataclass(frozen=True)
class Operations:
    """The operations of one call, in order of appearance, each label once."""

    vtb: list[str] = field(default_factory=list)
    vtc: list[str] = field(default_factory=list)
    steps: list[OpStep] = field(default_factory=list)

    def __iter__(self) -> Iterator[str]:
        return iter(self.vtb)

    def __len__(self) -> int:
        return len(self.vtb)

    @classmethod
    def of(cls, steps: list[OpStep]) -> Operations:
        vtb: list[str] = []
        vtc: list[str] = []
        for s in steps:
            vtb.extend(v for v in s.vtb if v not in vtb)
            vtc.extend(v for v in s.vtc if v not in vtc)
        return cls(vtb, vtc, steps)


def _l(vtb: str | tuple[str, ...], vtc: str | tuple[str, ...] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ((vtb,) if isinstance(vtb, str) else vtb, (vtc,) if isinstance(vtc, str) else vtc)


# ---- the 35 interface tools -------------------------------------------------------------------

INTERFACE: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "colorspace_gray": _l("other", "Convert Color"),
    "colorspace_hsv": _l("other", "Convert Color"),
    "colorspace_lab": _l("other", "Convert Color"),
    "resize": _l("resize", "Resize"),
    "rotate": _l("rotate", "Rotate"),
    "translate": _l("other", "Translate"),
    "flip": _l("flip", "Flip"),
    "crop": _l("crop", "Crop"),
    "zoom_in": _l("crop", "Zoom in"),
    "blur": _l("other", "Blur"),
    "denoise": _l("other", "Denoise"),
    "canny": _l("other", "Edge Detect"),
    "gradients": _l("other", "Compute Gradients"),
    "threshold": _l("other", "Binarize"),
    "morphology": _l("other", "Morphology"),
    "contours": _l("editing", "Draw Contours"),
    "contour_area": _l("editing", "Measure Area"),
    "arc_length": _l("editing", "Measure Perimeter"),
    "approx_poly": _l("editing", "Approximate Polygon"),
    "watershed": _l("other", "Watershed"),
    "grabcut": _l("other", "GrabCut"),
    "floodfill": _l("editing", "Flood Fill"),
    "connected_components_with_stats": _l("other", "Connected Components"),
    "histogram": _l("contrast", "Histogram Eq"),
    "convertscaleabs": _l("brightness", "Adjust Brightness"),
    "features": _l("other", "Keypoint Features"),
    "hough_lines": _l("other", "Line Detect"),
    "hough_circles": _l("other", "Circle Detect"),
    "template_match": _l("other", "Template Match"),
    "dft": _l("other", "Frequency Transform"),
    "pyramid": _l("resize", "Image Pyramid"),
    "inpaint": _l("editing", "Inpaint"),
    "inrange_color": _l("other", "Color Filter"),
    "draw_line": _l("editing", "Draw Line"),
    "draw_circle": _l("editing", "Draw Circle"),
}

CROP_TOOLS = {"crop", "image_crop", "crop_image"}
ZOOM_TOOLS = {"image_zoom_in_tool", "zoom_in", "image_zoom_in"}


def interface_groups(tool_name: str) -> list[str]:
    """The VTC-Bench tool group(s) of one of the 35 interface tools (`opencv_rotate` or `rotate`)."""
    entry = INTERFACE.get(tool_name.removeprefix("opencv_"))
    return list(entry[1]) if entry else []


def _num(v: Any, default: float) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _interface(op: str, param: dict[str, Any]) -> OpStep:
    vtb, vtc = INTERFACE[op]
    if op == "zoom_in" and (param.get("scale") not in (None, 1, 1.0) or "target_width" in param
                            or "target_height" in param):
        vtb = ("crop", "resize")
    if op == "convertscaleabs":
        alpha, beta = _num(param.get("alpha"), 1.0), _num(param.get("beta"), 0.0)
        picked = tuple(c for c, on in (("contrast", alpha != 1.0), ("brightness", beta != 0.0)) if on)
        vtb = picked or ("brightness",)
    return OpStep(0, "opencv_" + op, vtb, vtc)


def classify_call(tool_name: str, arguments: dict[str, Any] | str | None) -> Operations:
    """Operations performed by one tool call: an interface call, a crop tool or model-written code."""
    args = _args(arguments)
    name = tool_name.strip()
    op = name.removeprefix("opencv_")
    if op in INTERFACE and (name.startswith("opencv_") or op not in CROP_TOOLS | ZOOM_TOOLS):
        param = args.get("param", {})
        if isinstance(param, str):
            param = _args(param)
        return Operations.of([_interface(op, param if isinstance(param, dict) else {})])
    if name in CROP_TOOLS:
        return Operations.of([OpStep(0, name, ("crop",), ("Crop",))])
    if name in ZOOM_TOOLS:
        return Operations.of([OpStep(0, name, ("crop", "resize"), ("Zoom in",))])
    code = args.get("code")
    if isinstance(code, str):
        return classify_code(code)
    return Operations()


def _args(arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if not arguments:
        return {}
    try:
        val = json.loads(arguments)
    except (TypeError, ValueError):
        return {}
    return val if isinstance(val, dict) else {}


# ---- code ------------------------------------------------------------------------------------

Label = tuple[tuple[str, ...], tuple[str, ...]]

# canonical dotted names -> labels (the module part after alias resolution)
CALLS: dict[str, Label] = {
    # PIL
    "PIL.ImageEnhance.Brightness": _l("brightness", "Adjust Brightness"),
    "PIL.ImageEnhance.Contrast": _l("contrast", "Adjust Brightness"),
    "PIL.ImageEnhance.Sharpness": _l("other", "Sharpen"),
    "PIL.ImageEnhance.Color": _l("other"),
    "PIL.ImageOps.autocontrast": _l("contrast", "Histogram Eq"),
    "PIL.ImageOps.equalize": _l("contrast", "Histogram Eq"),
    "PIL.ImageOps.grayscale": _l("other", "Convert Color"),
    "PIL.ImageOps.invert": _l("other"),
    "PIL.ImageOps.mirror": _l("flip", "Flip"),
    "PIL.ImageOps.flip": _l("flip", "Flip"),
    "PIL.ImageOps.exif_transpose": _l("rotate", "Rotate"),
    "PIL.ImageOps.fit": _l(("crop", "resize"), ("Crop", "Resize")),
    "PIL.ImageOps.contain": _l("resize", "Resize"),
    "PIL.ImageOps.cover": _l("resize", "Resize"),
    "PIL.ImageOps.scale": _l("resize", "Resize"),
    "PIL.ImageOps.pad": _l(("resize", "other"), "Resize"),
    "PIL.ImageOps.crop": _l("crop", "Crop"),
    "PIL.ImageOps.expand": _l("other"),
    "PIL.ImageOps.posterize": _l("other"),
    "PIL.ImageOps.solarize": _l("other"),
    "PIL.ImageOps.colorize": _l("other", "Convert Color"),
    "PIL.ImageFilter.GaussianBlur": _l("other", "Blur"),
    "PIL.ImageFilter.BoxBlur": _l("other", "Blur"),
    "PIL.ImageFilter.BLUR": _l("other", "Blur"),
    "PIL.ImageFilter.SMOOTH": _l("other", "Blur"),
    "PIL.ImageFilter.SMOOTH_MORE": _l("other", "Blur"),
    "PIL.ImageFilter.MedianFilter": _l("other", "Blur"),
    "PIL.ImageFilter.ModeFilter": _l("other", "Blur"),
    "PIL.ImageFilter.MinFilter": _l("other", "Morphology"),
    "PIL.ImageFilter.MaxFilter": _l("other", "Morphology"),
    "PIL.ImageFilter.SHARPEN": _l("other", "Sharpen"),
    "PIL.ImageFilter.UnsharpMask": _l("other", "Sharpen"),
    "PIL.ImageFilter.DETAIL": _l("other", "Sharpen"),
    "PIL.ImageFilter.EDGE_ENHANCE": _l("other", "Sharpen"),
    "PIL.ImageFilter.EDGE_ENHANCE_MORE": _l("other", "Sharpen"),
    "PIL.ImageFilter.FIND_EDGES": _l("other", "Edge Detect"),
    "PIL.ImageFilter.CONTOUR": _l("other", "Edge Detect"),
    "PIL.Image.blend": _l("editing"),
    "PIL.Image.composite": _l("editing"),
    "PIL.Image.alpha_composite": _l("editing"),
    # OpenCV
    "cv2.resize": _l("resize", "Resize"),
    "cv2.pyrDown": _l("resize", "Image Pyramid"),
    "cv2.pyrUp": _l("resize", "Image Pyramid"),
    "cv2.rotate": _l("rotate", "Rotate"),
    "cv2.getRotationMatrix2D": _l("rotate", "Rotate"),
    "cv2.transpose": _l("rotate", "Rotate"),
    "cv2.flip": _l("flip", "Flip"),
    "cv2.warpPerspective": _l("other"),
    "cv2.equalizeHist": _l("contrast", "Histogram Eq"),
    "cv2.createCLAHE": _l("contrast", "Histogram Eq"),
    "cv2.normalize": _l("contrast"),
    "cv2.LUT": _l("brightness", "Adjust Brightness"),
    "cv2.threshold": _l("other", "Binarize"),
    "cv2.adaptiveThreshold": _l("other", "Binarize"),
    "cv2.morphologyEx": _l("other", "Morphology"),
    "cv2.erode": _l("other", "Morphology"),
    "cv2.dilate": _l("other", "Morphology"),
    "cv2.GaussianBlur": _l("other", "Blur"),
    "cv2.blur": _l("other", "Blur"),
    "cv2.medianBlur": _l("other", "Blur"),
    "cv2.bilateralFilter": _l("other", "Blur"),
    "cv2.boxFilter": _l("other", "Blur"),
    "cv2.filter2D": _l("other", "Sharpen"),
    "cv2.detailEnhance": _l("other", "Sharpen"),
    "cv2.fastNlMeansDenoising": _l("other", "Denoise"),
    "cv2.fastNlMeansDenoisingColored": _l("other", "Denoise"),
    "cv2.inpaint": _l("editing", "Inpaint"),
    "cv2.inRange": _l("other", "Color Filter"),
    "cv2.floodFill": _l("editing", "Flood Fill"),
    "cv2.Canny": _l("other", "Edge Detect"),
    "cv2.Sobel": _l("other", "Compute Gradients"),
    "cv2.Scharr": _l("other", "Compute Gradients"),
    "cv2.Laplacian": _l("other", "Compute Gradients"),
    "cv2.HoughLines": _l("other", "Line Detect"),
    "cv2.HoughLinesP": _l("other", "Line Detect"),
    "cv2.HoughCircles": _l("other", "Circle Detect"),
    "cv2.matchTemplate": _l("other", "Template Match"),
    "cv2.watershed": _l("other", "Watershed"),
    "cv2.grabCut": _l("other", "GrabCut"),
    "cv2.connectedComponents": _l("other", "Connected Components"),
    "cv2.connectedComponentsWithStats": _l("other", "Connected Components"),
    "cv2.dft": _l("other", "Frequency Transform"),
    "cv2.findContours": _l("other", "Draw Contours"),
    "cv2.drawContours": _l("editing", "Draw Contours"),
    "cv2.contourArea": _l("other", "Measure Area"),
    "cv2.arcLength": _l("other", "Measure Perimeter"),
    "cv2.approxPolyDP": _l("other", "Approximate Polygon"),
    "cv2.line": _l("editing", "Draw Line"),
    "cv2.arrowedLine": _l("editing", "Draw Line"),
    "cv2.circle": _l("editing", "Draw Circle"),
    "cv2.ellipse": _l("editing", "Draw Circle"),
    "cv2.rectangle": _l("editing", "Draw Contours"),
    "cv2.polylines": _l("editing", "Draw Contours"),
    "cv2.fillPoly": _l("editing", "Draw Contours"),
    "cv2.putText": _l("editing"),
    "cv2.drawMarker": _l("editing"),
    "cv2.addWeighted": _l("editing"),
    "cv2.copyMakeBorder": _l("other"),
    "cv2.bitwise_not": _l("other"),
    "cv2.goodFeaturesToTrack": _l("other", "Keypoint Features"),
    "cv2.cornerHarris": _l("other", "Keypoint Features"),
    "cv2.ORB_create": _l("other", "Keypoint Features"),
    "cv2.SIFT_create": _l("other", "Keypoint Features"),
    "cv2.FastFeatureDetector_create": _l("other", "Keypoint Features"),
    # NumPy
    "numpy.rot90": _l("rotate", "Rotate"),
    "numpy.flip": _l("flip", "Flip"),
    "numpy.fliplr": _l("flip", "Flip"),
    "numpy.flipud": _l("flip", "Flip"),
    "numpy.fft.fft2": _l("other", "Frequency Transform"),
    "numpy.fft.fft": _l("other", "Frequency Transform"),
}

# methods of a PIL image (called on any object that is not a known module)
METHODS: dict[str, Label] = {
    "crop": _l("crop", "Crop"),
    "resize": _l("resize", "Resize"),
    "thumbnail": _l("resize", "Resize"),
    "reduce": _l("resize", "Resize"),
    "rotate": _l("rotate", "Rotate"),
    "paste": _l("editing"),
}
DRAW_METHODS: dict[str, Label] = {
    "line": _l("editing", "Draw Line"),
    "ellipse": _l("editing", "Draw Circle"),
    "circle": _l("editing", "Draw Circle"),
    "arc": _l("editing", "Draw Circle"),
    "rectangle": _l("editing", "Draw Contours"),
    "rounded_rectangle": _l("editing", "Draw Contours"),
    "polygon": _l("editing", "Draw Contours"),
    "regular_polygon": _l("editing", "Draw Contours"),
    "text": _l("editing"),
    "multiline_text": _l("editing"),
    "point": _l("editing"),
}
DEFAULT_ALIASES = {
    "cv2": "cv2", "cv": "cv2", "np": "numpy", "numpy": "numpy", "Image": "PIL.Image",
    "ImageEnhance": "PIL.ImageEnhance", "ImageOps": "PIL.ImageOps", "ImageFilter": "PIL.ImageFilter",
    "ImageDraw": "PIL.ImageDraw", "PIL": "PIL",
}
CONVERT_MODES = {"L": "Convert Color", "LA": "Convert Color", "HSV": "Convert Color", "LAB": "Convert Color",
                 "YCbCr": "Convert Color", "CMYK": "Convert Color", "I": "Convert Color", "P": "Convert Color",
                 "1": "Binarize"}
CHANNEL_ORDER = re.compile(r"^COLOR_(BGR|RGB)A?2(BGR|RGB)A?$")


def _dotted(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.aliases = dict(DEFAULT_ALIASES)
        self.draw_objects: set[str] = set()
        self.steps: list[OpStep] = []
        self.has_rotation_matrix = False

    def add(self, node: ast.AST, api: str, label: Label) -> None:
        self.steps.append(OpStep(getattr(node, "lineno", 0), api, label[0], label[1]))

    # imports
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                self.aliases[a.name.split(".")[0]] = a.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        for a in node.names:
            self.aliases[a.asname or a.name] = f"{mod}.{a.name}" if mod else a.name

    def canonical(self, node: ast.AST) -> tuple[str | None, list[str] | None]:
        parts = _dotted(node)
        if not parts:
            return None, parts
        root = self.aliases.get(parts[0])
        if root is None:
            return None, parts
        full = ".".join([root, *parts[1:]])
        return full.replace("numpy.core.", "numpy.").replace("cv2.cv2.", "cv2."), parts

    def visit_Assign(self, node: ast.Assign) -> None:
        if isinstance(node.value, ast.Call):
            name, _ = self.canonical(node.value.func)
            if name == "PIL.ImageDraw.Draw":
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.draw_objects.add(t.id)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name, parts = self.canonical(node.func)
        if name is not None:
            self.known_call(node, name)
        elif parts and len(parts) >= 2:
            self.method_call(node, parts)
        elif isinstance(node.func, ast.Attribute):  # a method on a call result: Image.open(p).convert("L")
            recv = node.func.value
            drawn = isinstance(recv, ast.Call) and self.canonical(recv.func)[0] == "PIL.ImageDraw.Draw"
            self.method_call(node, ["<draw>" if drawn else "<expr>", node.func.attr])
        self.generic_visit(node)

    def known_call(self, node: ast.Call, name: str) -> None:
        if name == "cv2.getRotationMatrix2D":
            self.has_rotation_matrix = True
        if name in CALLS:
            self.add(node, name, CALLS[name])
        elif name == "cv2.cvtColor":
            flag = node.args[1] if len(node.args) > 1 else None
            flag_name = flag.attr if isinstance(flag, ast.Attribute) else ""
            if not CHANNEL_ORDER.match(flag_name):
                self.add(node, name, _l("other", "Convert Color"))
        elif name == "cv2.convertScaleAbs":
            self.add(node, name, (self._alpha_beta(node), ("Adjust Brightness",)))
        elif name in ("cv2.add", "cv2.subtract") and any(_is_number_like(a) for a in node.args[1:2]):
            self.add(node, name, _l("brightness", "Adjust Brightness"))
        elif name == "cv2.warpAffine":
            self.add(node, name, _l("rotate", "Rotate") if self.has_rotation_matrix else _l("other", "Translate"))
        elif name == "numpy.clip" and node.args:
            label = _arith_label(node.args[0])
            if label:
                self.add(node, name, label)
        elif name == "numpy.where" and node.args and isinstance(node.args[0], ast.Compare):
            self.add(node, name, _l("other", "Binarize"))
        elif name in ("PIL.Image.eval",) and len(node.args) > 1:
            self._point(node, node.args[1])
        elif name.startswith("PIL.ImageDraw.Draw"):
            return

    def method_call(self, node: ast.Call, parts: list[str]) -> None:
        obj, meth = parts[0], parts[-1]
        if (obj in self.draw_objects or obj == "<draw>") and meth in DRAW_METHODS:
            self.add(node, f"ImageDraw.{meth}", DRAW_METHODS[meth])
            return
        if meth == "transpose" and node.args:
            arg = node.args[0]
            flag = arg.attr if isinstance(arg, ast.Attribute) else ""
            if flag.startswith("FLIP"):
                self.add(node, "Image.transpose", _l("flip", "Flip"))
            elif flag.startswith(("ROTATE", "TRANSPOSE", "TRANSVERSE")):
                self.add(node, "Image.transpose", _l("rotate", "Rotate"))
            return
        if meth == "convert" and node.args and isinstance(node.args[0], ast.Constant):
            mode = str(node.args[0].value)
            if mode in CONVERT_MODES:
                vtc = CONVERT_MODES[mode]
                self.add(node, "Image.convert", _l("other", vtc))
            return
        if meth == "filter" and node.args:
            arg = node.args[0]
            fname, _ = self.canonical(arg.func if isinstance(arg, ast.Call) else arg)
            if fname is None or fname not in CALLS:
                self.add(node, "Image.filter", _l("other"))
            elif not isinstance(arg, ast.Call):  # ImageFilter.SHARPEN is a constant, not a call
                self.add(node, fname, CALLS[fname])
            return
        if meth == "point" and node.args:
            self._point(node, node.args[0])
            return
        if meth in METHODS and not (meth == "resize" and self._numpy_receiver(parts)):
            self.add(node, f"Image.{meth}", METHODS[meth])

    def _numpy_receiver(self, parts: list[str]) -> bool:
        return self.aliases.get(parts[0]) == "numpy"

    def _point(self, node: ast.Call, fn: ast.AST) -> None:
        if any(isinstance(n, ast.Compare) for n in ast.walk(fn)):
            self.add(node, "Image.point", _l("other", "Binarize"))
            return
        label = _arith_label(fn.body if isinstance(fn, ast.Lambda) else fn)
        self.add(node, "Image.point", label or _l("other"))

    @staticmethod
    def _alpha_beta(node: ast.Call) -> tuple[str, ...]:
        vals: dict[str, ast.AST] = {k.arg: k.value for k in node.keywords if k.arg}
        pos = node.args[1:]
        for key, i in (("alpha", 1), ("beta", 2)):
            if key not in vals and len(pos) >= i and not _is_none(pos[i - 1]):
                vals[key] = pos[i - 1]
        out = []
        if "alpha" in vals and _const(vals["alpha"]) != 1:
            out.append("contrast")
        if "beta" in vals and _const(vals["beta"]) != 0:
            out.append("brightness")
        return tuple(out) or ("brightness",)

    # slicing: crop, flip, and pasting into a region
    def visit_Subscript(self, node: ast.Subscript) -> None:
        loaded = isinstance(node.value, ast.Call) and self.canonical(node.value.func)[0] in IMAGE_LOADERS
        if not (loaded or _image_like(node.value)):
            self.generic_visit(node)
            return
        idx = node.slice
        dims = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        flips = [i for i, d in enumerate(dims) if isinstance(d, ast.Slice) and _const(d.step) == -1]
        if flips and isinstance(node.ctx, ast.Load):
            if any(i < 2 for i in flips) and not any(isinstance(d, ast.Constant) and d.value is Ellipsis
                                                     for d in dims[:1]):
                self.add(node, "slice[::-1]", _l("flip", "Flip"))
        elif (isinstance(idx, ast.Tuple) and len(dims) >= 2 and all(isinstance(d, ast.Slice) for d in dims[:2])
              and any(d.lower is not None or d.upper is not None for d in dims[:2] if isinstance(d, ast.Slice))):
            if isinstance(node.ctx, ast.Load):
                self.add(node, "slice", _l("crop", "Crop"))
            else:
                self.add(node, "slice assignment", _l("editing"))
        self.generic_visit(node)


IMAGE_LOADERS = {"cv2.imread", "numpy.array", "numpy.asarray"}
NOT_IMAGES = {"stats", "centroids", "contours", "cnts", "lines", "circles", "corners", "points", "pts", "kps",
              "keypoints", "boxes", "coords", "df", "data", "rows", "cols", "text", "words", "items", "values",
              "areas", "results", "sorted_contours", "approx", "hierarchy", "args", "argv", "s", "name", "path"}


def _image_like(value: ast.AST) -> bool:
    """Slicing counts on names and attributes (not on call results), except names of known non-images."""
    if isinstance(value, ast.Name):
        return value.id not in NOT_IMAGES and not value.id.endswith(("_list", "_str", "_path", "_name"))
    return isinstance(value, ast.Attribute | ast.Subscript)


def _is_none(n: ast.AST) -> bool:
    return isinstance(n, ast.Constant) and n.value is None


def _const(n: ast.AST | None) -> Any:
    if isinstance(n, ast.Constant):
        return n.value
    if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant):
        v = n.operand.value
        return -v if isinstance(v, int | float) else None
    return None


def _is_number_like(n: ast.AST) -> bool:
    if isinstance(_const(n), int | float):
        return True
    return isinstance(n, ast.Tuple) and all(isinstance(_const(e), int | float) for e in n.elts)


def _arith_label(expr: ast.AST) -> Label | None:
    """Brightness/contrast from arithmetic with constants: `img * 1.3` (contrast), `img + 40` (brightness)."""
    mult = add = False
    for n in ast.walk(expr):
        if isinstance(n, ast.BinOp) and (_is_number_like(n.left) or _is_number_like(n.right)):
            if isinstance(n.op, ast.Mult | ast.Div):
                mult = True
            elif isinstance(n.op, ast.Add | ast.Sub):
                add = True
    picked = tuple(c for c, on in (("contrast", mult), ("brightness", add)) if on)
    return (picked, ("Adjust Brightness",)) if picked else None


def classify_code(code: str) -> Operations:
    """Operations performed by model-written Python (PIL, OpenCV, NumPy), found by AST analysis."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Operations()
    try:
        return _classify_tree(tree)
    except RecursionError:  # absurdly deep code: name nothing rather than fail a report
        return Operations()


def _classify_tree(tree: ast.AST) -> Operations:
    v = _Visitor()
    # imports first, so aliases apply to calls that come before them in a later cell
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            v.visit_Import(node)
        elif isinstance(node, ast.ImportFrom):
            v.visit_ImportFrom(node)
    v.has_rotation_matrix = any(
        isinstance(n, ast.Call) and v.canonical(n.func)[0] == "cv2.getRotationMatrix2D" for n in ast.walk(tree))
    v.visit(tree)
    steps = sorted(_dedupe_rotation(v.steps), key=lambda s: s.line)
    return Operations.of(steps)


def _dedupe_rotation(steps: list[OpStep]) -> list[OpStep]:
    """getRotationMatrix2D + warpAffine is one rotation; keep the warp when both are present."""
    if any(s.api == "cv2.warpAffine" and "rotate" in s.vtb for s in steps):
        return [s for s in steps if s.api != "cv2.getRotationMatrix2D"]
    return steps
