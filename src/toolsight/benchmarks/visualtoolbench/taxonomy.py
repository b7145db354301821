"""VisualToolBench's image-operation categories (paper §5, Fig. 6) as a `Vocabulary`.

Eight categories: crop, resize, rotate, flip, brightness, contrast, editing (annotation,
inpainting, drawing, flood fill, pasting into a region) and other. Every recognised operation gets
at least one; a few get two (a zoom that rescales is crop + resize; `ImageOps.fit` crops and
resizes; `ImageOps.pad` resizes and pads). Intensity changes are contrast when they scale and
brightness when they shift (convertScaleAbs alpha / beta, `img * a + b`), brightness when neither
is given.
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
    SCALED,
    SHIFT,
    SLICE,
    SLICE_ASSIGNMENT,
    SLICE_FLIP,
    THRESHOLD,
    ZOOM_TOOL,
)

CATEGORIES: tuple[str, ...] = ("crop", "resize", "rotate", "flip", "brightness", "contrast", "editing", "other")


def _table(prefix: str, rows: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """`category: "api api ..."` rows -> prefix + api -> (category,)."""
    return {prefix + api: (cat,) for cat, apis in rows.items() for api in apis.split()}


_INTERFACE = _table(INTERFACE_PREFIX, {
    "crop": "crop zoom_in",
    "resize": "resize pyramid",
    "rotate": "rotate",
    "flip": "flip",
    "brightness": "convertscaleabs",
    "contrast": "histogram",
    "editing": "contours contour_area arc_length approx_poly floodfill inpaint draw_line draw_circle",
    "other": "colorspace_gray colorspace_hsv colorspace_lab translate blur denoise canny gradients threshold "
             "morphology watershed grabcut connected_components_with_stats features hough_lines hough_circles "
             "template_match dft inrange_color",
})
_PIL = {
    **_table("PIL.ImageEnhance.", {"brightness": "Brightness", "contrast": "Contrast", "other": "Sharpness Color"}),
    **_table("PIL.ImageOps.", {
        "crop": "crop", "resize": "contain cover scale", "rotate": "exif_transpose", "flip": "mirror flip",
        "contrast": "autocontrast equalize", "other": "grayscale invert expand posterize solarize colorize",
    }),
    **_table("PIL.ImageFilter.", {
        "other": "GaussianBlur BoxBlur BLUR SMOOTH SMOOTH_MORE MedianFilter ModeFilter MinFilter MaxFilter SHARPEN "
                 "UnsharpMask DETAIL EDGE_ENHANCE EDGE_ENHANCE_MORE FIND_EDGES CONTOUR",
    }),
    **_table("PIL.Image.", {"editing": "blend composite alpha_composite"}),
    **_table("Image.", {
        "crop": "crop", "resize": "resize thumbnail reduce", "rotate": "rotate", "editing": "paste",
        "other": "convert filter",
    }),
}
_CV2 = _table("cv2.", {
    "resize": "resize pyrDown pyrUp",
    "rotate": "rotate getRotationMatrix2D transpose",
    "flip": "flip",
    "brightness": "LUT add subtract",
    "contrast": "equalizeHist createCLAHE normalize",
    "editing": "inpaint floodFill drawContours line arrowedLine circle ellipse rectangle polylines fillPoly putText "
               "drawMarker addWeighted",
    "other": "warpPerspective threshold adaptiveThreshold morphologyEx erode dilate GaussianBlur blur medianBlur "
             "bilateralFilter boxFilter filter2D detailEnhance fastNlMeansDenoising fastNlMeansDenoisingColored "
             "inRange Canny Sobel Scharr Laplacian HoughLines HoughLinesP HoughCircles matchTemplate watershed "
             "grabCut connectedComponents connectedComponentsWithStats dft findContours contourArea arcLength "
             "approxPolyDP copyMakeBorder bitwise_not goodFeaturesToTrack cornerHarris ORB_create SIFT_create "
             "FastFeatureDetector_create cvtColor",
})
_NUMPY = _table("numpy.", {"rotate": "rot90", "flip": "flip fliplr flipud", "other": "fft.fft2 fft.fft where"})
_SLICES = {SLICE: ("crop",), SLICE_FLIP: ("flip",), SLICE_ASSIGNMENT: ("editing",)}
_DRAW = _table("ImageDraw.", {
    "editing": "line ellipse circle arc rectangle rounded_rectangle polygon regular_polygon text multiline_text point",
})
_TWO = {
    ZOOM_TOOL: ("crop", "resize"),
    "PIL.ImageOps.fit": ("crop", "resize"),
    "PIL.ImageOps.pad": ("resize", "other"),
}
_FIXED: dict[str, tuple[str, ...]] = {
    **_INTERFACE, **_PIL, **_CV2, **_NUMPY, **_SLICES, **_DRAW, **_TWO, CROP_TOOL: ("crop",),
}


def _intensity(op: Operation) -> tuple[str, ...]:
    return tuple(c for c, q in (("contrast", SCALE), ("brightness", SHIFT)) if op.has(q))


def categories(op: Operation) -> tuple[str, ...]:
    """The categories of one operation (every recognised operation has at least one)."""
    if op.api == "opencv_zoom_in" and op.has(SCALED):
        return ("crop", "resize")
    if op.api in ("opencv_convertscaleabs", "cv2.convertScaleAbs"):
        return _intensity(op) or ("brightness",)
    if op.api == "numpy.clip":
        return _intensity(op)
    if op.api == "Image.point":
        return ("other",) if op.has(THRESHOLD) else _intensity(op) or ("other",)
    if op.api == "cv2.warpAffine":
        return ("rotate",) if op.has(ROTATION) else ("other",)
    if op.api == "Image.transpose":
        return ("flip",) if op.has(FLIP) else ("rotate",) if op.has(ROTATE) else ()
    return _FIXED.get(op.api, ())


CATEGORY_VOCABULARY = Vocabulary(
    name="visualtoolbench-categories",
    title="Image-operation share % (VisualToolBench categories)",
    order=CATEGORIES,
    labels=categories,
)
