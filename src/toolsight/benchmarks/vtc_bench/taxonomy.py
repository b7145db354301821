"""VTC-Bench's vocabularies: its task catalogue and its tool groups.

* The task catalogue: categories (paper Table 4 order, tiers) and how a question carries its
  options. Shared by the VTC-Bench loader (`toolsight.benchmarks.vtc_bench.benchmark`) and the
  VTC-style generators, so the generators never import a benchmark module.
* The tool groups of the calls (`TOOL_GROUP_VOCABULARY`, a `Vocabulary` over recognised image
  operations): the 4-group vocabulary of VTC-Bench's tool-chain analysis prompt (`VTC_GROUPS`:
  Geometry, Enhancement, Feature Extraction, Draw) plus "Zoom in" (used by its ground-truth
  chains) and Table 6's "Keypoint Features" (for `opencv_features`, which the prompt lacks).
  Operations the vocabulary has no group for (`putText`, pasting, `ImageOps.invert`, ...) get none.
"""

from __future__ import annotations

from toolsight.tools.operations import Operation, Vocabulary
from toolsight.tools.operations.operation import (
    CROP_TOOL,
    FLIP,
    INTERFACE_PREFIX,
    ROTATE,
    ROTATION,
    SCALE,
    SHIFT,
    SLICE,
    SLICE_FLIP,
    THRESHOLD,
    ZOOM_TOOL,
)

# TSV category -> (the paper's task name, tier number, tier name); dict order = Table 4 column order
CATEGORIES: dict[str, tuple[str, int, str]] = {
    "ocr": ("Robust OCR", 1, "Visual Perception Enhancement"),
    "attention": ("Attention Focusing", 1, "Visual Perception Enhancement"),
    "perceptual": ("Perceptual Restoration", 1, "Visual Perception Enhancement"),
    "chart": ("Chart", 3, "Compositional Visual Reasoning"),
    "measure": ("Measurement", 2, "Quantitative Visual Estimation"),
    "counting": ("Counting", 2, "Quantitative Visual Estimation"),
    "math": ("Math", 3, "Compositional Visual Reasoning"),
    "spatial": ("Spatial Reasoning", 3, "Compositional Visual Reasoning"),
    "color": ("Color", 2, "Quantitative Visual Estimation"),
}
CATEGORY_ORDER: tuple[str, ...] = tuple(CATEGORIES)
CATEGORY_SHORT = {
    "ocr": "OCR", "attention": "Attn.", "perceptual": "Rest.", "chart": "Chart", "measure": "Meas.",
    "counting": "Count.", "math": "Math", "spatial": "Spat.", "color": "Color",
}


def question_with_options(question: str, options: dict[str, str]) -> str:
    """The question as the reference sends it: options appended as "\\n\\nOptions:\\n" + "A. x\\n" joined by "\\n"."""
    if not options:
        return question
    return question + "\n\nOptions:\n" + "\n".join(f"{k}. {v}\n" for k, v in options.items())


# ---- tool groups ------------------------------------------------------------------------------

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
TOOL_GROUPS: tuple[str, ...] = tuple(g for groups in VTC_GROUPS.values() for g in groups)


def _table(prefix: str, rows: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """`group: "api api ..."` rows -> prefix + api -> (group,)."""
    return {prefix + api: (group,) for group, apis in rows.items() for api in apis.split()}


_INTERFACE = _table(INTERFACE_PREFIX, {
    "Convert Color": "colorspace_gray colorspace_hsv colorspace_lab", "Resize": "resize", "Rotate": "rotate",
    "Translate": "translate", "Flip": "flip", "Crop": "crop", "Zoom in": "zoom_in", "Blur": "blur",
    "Denoise": "denoise", "Edge Detect": "canny", "Compute Gradients": "gradients", "Binarize": "threshold",
    "Morphology": "morphology", "Draw Contours": "contours", "Measure Area": "contour_area",
    "Measure Perimeter": "arc_length", "Approximate Polygon": "approx_poly", "Watershed": "watershed",
    "GrabCut": "grabcut", "Flood Fill": "floodfill", "Connected Components": "connected_components_with_stats",
    "Histogram Eq": "histogram", "Adjust Brightness": "convertscaleabs", "Keypoint Features": "features",
    "Line Detect": "hough_lines", "Circle Detect": "hough_circles", "Template Match": "template_match",
    "Frequency Transform": "dft", "Image Pyramid": "pyramid", "Inpaint": "inpaint", "Color Filter": "inrange_color",
    "Draw Line": "draw_line", "Draw Circle": "draw_circle",
})
_PIL = {
    **_table("PIL.ImageEnhance.", {"Adjust Brightness": "Brightness Contrast", "Sharpen": "Sharpness"}),
    **_table("PIL.ImageOps.", {
        "Histogram Eq": "autocontrast equalize", "Convert Color": "grayscale colorize", "Flip": "mirror flip",
        "Rotate": "exif_transpose", "Resize": "contain cover scale pad", "Crop": "crop",
    }),
    "PIL.ImageOps.fit": ("Crop", "Resize"),
    **_table("PIL.ImageFilter.", {
        "Blur": "GaussianBlur BoxBlur BLUR SMOOTH SMOOTH_MORE MedianFilter ModeFilter",
        "Morphology": "MinFilter MaxFilter",
        "Sharpen": "SHARPEN UnsharpMask DETAIL EDGE_ENHANCE EDGE_ENHANCE_MORE",
        "Edge Detect": "FIND_EDGES CONTOUR",
    }),
    **_table("Image.", {"Crop": "crop", "Resize": "resize thumbnail reduce", "Rotate": "rotate"}),
    **_table("ImageDraw.", {
        "Draw Line": "line", "Draw Circle": "ellipse circle arc",
        "Draw Contours": "rectangle rounded_rectangle polygon regular_polygon",
    }),
}
_CV2 = _table("cv2.", {
    "Resize": "resize", "Image Pyramid": "pyrDown pyrUp", "Rotate": "rotate getRotationMatrix2D transpose",
    "Flip": "flip", "Histogram Eq": "equalizeHist createCLAHE", "Adjust Brightness": "LUT convertScaleAbs add subtract",
    "Binarize": "threshold adaptiveThreshold", "Morphology": "morphologyEx erode dilate",
    "Blur": "GaussianBlur blur medianBlur bilateralFilter boxFilter", "Sharpen": "filter2D detailEnhance",
    "Denoise": "fastNlMeansDenoising fastNlMeansDenoisingColored", "Inpaint": "inpaint", "Color Filter": "inRange",
    "Flood Fill": "floodFill", "Edge Detect": "Canny", "Compute Gradients": "Sobel Scharr Laplacian",
    "Line Detect": "HoughLines HoughLinesP", "Circle Detect": "HoughCircles", "Template Match": "matchTemplate",
    "Watershed": "watershed", "GrabCut": "grabCut", "Connected Components": "connectedComponents "
    "connectedComponentsWithStats", "Frequency Transform": "dft",
    "Draw Contours": "findContours drawContours rectangle polylines fillPoly", "Measure Area": "contourArea",
    "Measure Perimeter": "arcLength", "Approximate Polygon": "approxPolyDP", "Draw Line": "line arrowedLine",
    "Draw Circle": "circle ellipse", "Convert Color": "cvtColor",
    "Keypoint Features": "goodFeaturesToTrack cornerHarris ORB_create SIFT_create FastFeatureDetector_create",
})
_NUMPY = _table("numpy.", {
    "Rotate": "rot90", "Flip": "flip fliplr flipud", "Frequency Transform": "fft.fft2 fft.fft",
    "Adjust Brightness": "clip", "Binarize": "where",
})
_FIXED: dict[str, tuple[str, ...]] = {
    **_INTERFACE, **_PIL, **_CV2, **_NUMPY,
    CROP_TOOL: ("Crop",), ZOOM_TOOL: ("Zoom in",), SLICE: ("Crop",), SLICE_FLIP: ("Flip",),
}


def tool_groups(op: Operation) -> tuple[str, ...]:
    """The tool group(s) of one operation; none where VTC-Bench's vocabulary has no word for it."""
    if op.api == "cv2.warpAffine":
        return ("Rotate",) if op.has(ROTATION) else ("Translate",)
    if op.api == "Image.point":
        if op.has(THRESHOLD):
            return ("Binarize",)
        return ("Adjust Brightness",) if op.has(SCALE) or op.has(SHIFT) else ()
    if op.api == "Image.transpose":
        return ("Flip",) if op.has(FLIP) else ("Rotate",) if op.has(ROTATE) else ()
    if op.api == "Image.convert":
        return ("Binarize",) if op.mode == "1" else ("Convert Color",)
    return _FIXED.get(op.api, ())


TOOL_GROUP_VOCABULARY = Vocabulary(
    name="vtc-bench-tool-groups",
    title="Tool-group share % (VTC-Bench groups)",
    order=TOOL_GROUPS,
    labels=tool_groups,
)
