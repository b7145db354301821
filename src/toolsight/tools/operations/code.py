"""The image operations in model-written Python (PIL, OpenCV, NumPy), found by an AST pass.

Recognised: the library calls in `KNOWN_CALLS` (import aliases resolved, including imports made
later in the code, as in a notebook cell that follows another), a few calls recognised only with
certain arguments (`cv2.cvtColor` unless it only reorders channels, `cv2.convertScaleAbs`,
`cv2.add` / `cv2.subtract` of a constant, `cv2.warpAffine`, `numpy.clip` of arithmetic on
constants, `numpy.where` of a comparison, `Image.eval`), methods of PIL images (`PIL_METHODS`,
`transpose`, `convert`, `filter`, `point`), methods of `ImageDraw.Draw` objects (`DRAW_METHODS`),
and slicing of image-like names (a region read, an axis reversed, a region written).

Decisions: `getRotationMatrix2D` + `warpAffine` is one operation (the warp, qualified as a
rotation); BGR<->RGB conversions are I/O, not operations; slicing names such as `stats`,
`contours` or `lines` is not image slicing. Unparsable or absurdly deep code has no operations.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from toolsight.tools.operations.operation import (
    FLIP,
    MODE,
    ROTATE,
    ROTATION,
    SCALE,
    SHIFT,
    SLICE,
    SLICE_ASSIGNMENT,
    SLICE_FLIP,
    THRESHOLD,
    Operation,
)


def _names(module: str, names: str) -> frozenset[str]:
    return frozenset(f"{module}.{n}" for n in names.split())


#: library calls that are an operation whatever their arguments (canonical dotted names)
KNOWN_CALLS: frozenset[str] = (
    _names("PIL.ImageEnhance", "Brightness Contrast Sharpness Color")
    | _names("PIL.ImageOps", "autocontrast equalize grayscale invert mirror flip exif_transpose fit contain cover "
                             "scale pad crop expand posterize solarize colorize")
    | _names("PIL.ImageFilter", "GaussianBlur BoxBlur BLUR SMOOTH SMOOTH_MORE MedianFilter ModeFilter MinFilter "
                                "MaxFilter SHARPEN UnsharpMask DETAIL EDGE_ENHANCE EDGE_ENHANCE_MORE FIND_EDGES CONTOUR")
    | _names("PIL.Image", "blend composite alpha_composite")
    | _names("cv2", "resize pyrDown pyrUp rotate getRotationMatrix2D transpose flip warpPerspective equalizeHist "
                    "createCLAHE normalize LUT threshold adaptiveThreshold morphologyEx erode dilate GaussianBlur "
                    "blur medianBlur bilateralFilter boxFilter filter2D detailEnhance fastNlMeansDenoising "
                    "fastNlMeansDenoisingColored inpaint inRange floodFill Canny Sobel Scharr Laplacian HoughLines "
                    "HoughLinesP HoughCircles matchTemplate watershed grabCut connectedComponents "
                    "connectedComponentsWithStats dft findContours drawContours contourArea arcLength approxPolyDP "
                    "line arrowedLine circle ellipse rectangle polylines fillPoly putText drawMarker addWeighted "
                    "copyMakeBorder bitwise_not goodFeaturesToTrack cornerHarris ORB_create SIFT_create "
                    "FastFeatureDetector_create")
    | _names("numpy", "rot90 flip fliplr flipud fft.fft2 fft.fft")
)
#: methods of a PIL image recognised by name alone (on any object that is not a known module)
PIL_METHODS: frozenset[str] = frozenset({"crop", "resize", "thumbnail", "reduce", "rotate", "paste"})
#: methods of an `ImageDraw.Draw` object
DRAW_METHODS: frozenset[str] = frozenset({
    "line", "ellipse", "circle", "arc", "rectangle", "rounded_rectangle", "polygon", "regular_polygon", "text",
    "multiline_text", "point",
})
#: `Image.convert` target modes that change the pixels (grey, colour spaces, palette, bilevel);
#: RGB / RGBA conversions only normalise the format
CONVERT_MODES: frozenset[str] = frozenset({"L", "LA", "HSV", "LAB", "YCbCr", "CMYK", "I", "P", "1"})
DEFAULT_ALIASES = {
    "cv2": "cv2", "cv": "cv2", "np": "numpy", "numpy": "numpy", "Image": "PIL.Image",
    "ImageEnhance": "PIL.ImageEnhance", "ImageOps": "PIL.ImageOps", "ImageFilter": "PIL.ImageFilter",
    "ImageDraw": "PIL.ImageDraw", "PIL": "PIL",
}
CHANNEL_ORDER = re.compile(r"^COLOR_(BGR|RGB)A?2(BGR|RGB)A?$")
IMAGE_LOADERS = {"cv2.imread", "numpy.array", "numpy.asarray"}
NOT_IMAGES = {"stats", "centroids", "contours", "cnts", "lines", "circles", "corners", "points", "pts", "kps",
              "keypoints", "boxes", "coords", "df", "data", "rows", "cols", "text", "words", "items", "values",
              "areas", "results", "sorted_contours", "approx", "hierarchy", "args", "argv", "s", "name", "path"}
_DRAW = "PIL.ImageDraw.Draw"


def code_operations(code: str) -> tuple[Operation, ...]:
    """The operations of `code`, ordered by line (a syntax error or absurd nesting: none)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    try:
        return _tree_operations(tree)
    except RecursionError:  # absurdly deep code: name nothing rather than fail a report
        return ()


def _tree_operations(tree: ast.AST) -> tuple[Operation, ...]:
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
    return tuple(sorted(_one_rotation(v.ops), key=lambda o: o.line))


def _one_rotation(ops: list[Operation]) -> list[Operation]:
    """getRotationMatrix2D + warpAffine is one rotation; keep the warp when both are present."""
    if any(o.api == "cv2.warpAffine" and o.has(ROTATION) for o in ops):
        return [o for o in ops if o.api != "cv2.getRotationMatrix2D"]
    return ops


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
        self.ops: list[Operation] = []
        self.has_rotation_matrix = False

    def add(self, node: ast.AST, api: str, *qualifiers: str) -> None:
        self.ops.append(Operation(getattr(node, "lineno", 0), api, frozenset(qualifiers)))

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
            if name == _DRAW:
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
            drawn = isinstance(recv, ast.Call) and self.canonical(recv.func)[0] == _DRAW
            self.method_call(node, ["<draw>" if drawn else "<expr>", node.func.attr])
        self.generic_visit(node)

    def known_call(self, node: ast.Call, name: str) -> None:
        if name in KNOWN_CALLS:
            self.add(node, name)
        elif name == "cv2.cvtColor":
            flag = node.args[1] if len(node.args) > 1 else None
            flag_name = flag.attr if isinstance(flag, ast.Attribute) else ""
            if not CHANNEL_ORDER.match(flag_name):
                self.add(node, name)
        elif name == "cv2.convertScaleAbs":
            self.add(node, name, *_alpha_beta(node))
        elif name in ("cv2.add", "cv2.subtract") and any(_is_number_like(a) for a in node.args[1:2]):
            self.add(node, name, SHIFT)
        elif name == "cv2.warpAffine":
            self.add(node, name, *((ROTATION,) if self.has_rotation_matrix else ()))
        elif name == "numpy.clip" and node.args:
            quals = _arithmetic(node.args[0])
            if quals:
                self.add(node, name, *quals)
        elif name == "numpy.where" and node.args and isinstance(node.args[0], ast.Compare):
            self.add(node, name, THRESHOLD)
        elif name == "PIL.Image.eval" and len(node.args) > 1:
            self._point(node, node.args[1])

    def method_call(self, node: ast.Call, parts: list[str]) -> None:
        obj, meth = parts[0], parts[-1]
        if (obj in self.draw_objects or obj == "<draw>") and meth in DRAW_METHODS:
            self.add(node, f"ImageDraw.{meth}")
            return
        if meth == "transpose" and node.args:
            arg = node.args[0]
            flag = arg.attr if isinstance(arg, ast.Attribute) else ""
            if flag.startswith("FLIP"):
                self.add(node, "Image.transpose", FLIP)
            elif flag.startswith(("ROTATE", "TRANSPOSE", "TRANSVERSE")):
                self.add(node, "Image.transpose", ROTATE)
            return
        if meth == "convert" and node.args and isinstance(node.args[0], ast.Constant):
            mode = str(node.args[0].value)
            if mode in CONVERT_MODES:
                self.add(node, "Image.convert", MODE + mode)
            return
        if meth == "filter" and node.args:
            arg = node.args[0]
            fname, _ = self.canonical(arg.func if isinstance(arg, ast.Call) else arg)
            if fname is None or fname not in KNOWN_CALLS:
                self.add(node, "Image.filter")
            elif not isinstance(arg, ast.Call):  # ImageFilter.SHARPEN is a constant, not a call
                self.add(node, fname)
            return
        if meth == "point" and node.args:
            self._point(node, node.args[0])
            return
        if meth in PIL_METHODS and not (meth == "resize" and self.aliases.get(parts[0]) == "numpy"):
            self.add(node, f"Image.{meth}")

    def _point(self, node: ast.Call, fn: ast.AST) -> None:
        """`im.point(fn)` / `Image.eval(im, fn)`: a threshold, a scale / shift, or another mapping."""
        if any(isinstance(n, ast.Compare) for n in ast.walk(fn)):
            self.add(node, "Image.point", THRESHOLD)
            return
        self.add(node, "Image.point", *_arithmetic(fn.body if isinstance(fn, ast.Lambda) else fn))

    # slicing: a region read, an axis reversed, a region written
    def visit_Subscript(self, node: ast.Subscript) -> None:
        loaded = isinstance(node.value, ast.Call) and self.canonical(node.value.func)[0] in IMAGE_LOADERS
        if not (loaded or _image_like(node.value)):
            self.generic_visit(node)
            return
        idx = node.slice
        dims = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        flips = [i for i, d in enumerate(dims) if isinstance(d, ast.Slice) and _const(d.step) == -1]
        if flips and isinstance(node.ctx, ast.Load):
            # `img[..., ::-1]` (BGR<->RGB) reverses channels, not an axis of the picture
            if any(i < 2 for i in flips) and not any(isinstance(d, ast.Constant) and d.value is Ellipsis
                                                     for d in dims[:1]):
                self.add(node, SLICE_FLIP)
        elif (isinstance(idx, ast.Tuple) and len(dims) >= 2 and all(isinstance(d, ast.Slice) for d in dims[:2])
              and any(d.lower is not None or d.upper is not None for d in dims[:2] if isinstance(d, ast.Slice))):
            self.add(node, SLICE if isinstance(node.ctx, ast.Load) else SLICE_ASSIGNMENT)
        self.generic_visit(node)


def _alpha_beta(node: ast.Call) -> tuple[str, ...]:
    """convertScaleAbs(src, dst, alpha, beta): SCALE when alpha != 1, SHIFT when beta != 0 (given
    and not a literal 1 / 0; a variable counts as a change)."""
    vals: dict[str, ast.AST] = {k.arg: k.value for k in node.keywords if k.arg}
    pos = node.args[1:]
    for key, i in (("alpha", 1), ("beta", 2)):
        if key not in vals and len(pos) >= i and not _is_none(pos[i - 1]):
            vals[key] = pos[i - 1]
    out: list[str] = []
    if "alpha" in vals and _const(vals["alpha"]) != 1:
        out.append(SCALE)
    if "beta" in vals and _const(vals["beta"]) != 0:
        out.append(SHIFT)
    return tuple(out)


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


def _arithmetic(expr: ast.AST) -> tuple[str, ...]:
    """SCALE / SHIFT from arithmetic with constants: `img * 1.3` (scale), `img + 40` (shift)."""
    mult = add = False
    for n in ast.walk(expr):
        if isinstance(n, ast.BinOp) and (_is_number_like(n.left) or _is_number_like(n.right)):
            if isinstance(n.op, ast.Mult | ast.Div):
                mult = True
            elif isinstance(n.op, ast.Add | ast.Sub):
                add = True
    return tuple(q for q, on in ((SCALE, mult), (SHIFT, add)) if on)
