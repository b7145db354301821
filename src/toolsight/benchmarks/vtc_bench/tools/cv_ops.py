"""The 35 VTC-Bench interface operations exactly as the official driver runs them (official loop only).

The reference is `eval/qwen_agent/tools/opencv_interface.py` of zhuzil/VTC-Bench @ 484ef7c2. Every
operation here takes the BGR array and the `param` dict and returns (image, message) with the
reference's message text, INFO JSON (Python's `json.dumps`, so `95.0`, `[0, 255, 0]`), silent
defaults, clamps and error texts — including its quirks (rotate truncates the angle to int,
contours come from Canny edges, convertScaleAbs takes absolute values, ...). Errors are raised as
the same Python exceptions with the same messages, because the driver puts `str(exc)` in the text
the model reads. toolsight's own, validated operations are `toolsight.tools.opencv` (the toolsight
loop); docs/fidelity.md lists how the two differ.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import cv2 as _cv2
import numpy as np

# OpenCV's stubs reject several valid calls the reference makes (None outputs, keypoint lists); the
# operations mirror the reference call for call, so they go through an untyped alias
cv2: Any = _cv2

Img = np.ndarray[Any, Any]
Params = dict[str, Any]
Result = tuple[Img, str]


def _info(info: dict[str, Any]) -> str:
    return json.dumps(info)


def _color(value: Any, default: tuple[int, int, int]) -> tuple[int, ...]:
    """A BGR colour: three numbers clamped to 0-255 and truncated; anything else is the default."""
    if isinstance(value, list | tuple) and len(value) == 3:
        try:
            return tuple(int(max(0, min(255, v))) for v in value)
        except (TypeError, ValueError):
            pass
    return tuple(default)


def _thickness(p: Params) -> int:
    try:
        t = int(p.get("thickness", 2))
    except (TypeError, ValueError):
        t = 2
    return max(1, t)


def colorspace(img: Img, mode: str) -> Result:
    if mode == "gray":
        return cv2.cvtColor(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR), "Converted to grayscale."
    if mode == "hsv":
        return cv2.cvtColor(img, cv2.COLOR_BGR2HSV), "Converted to HSV."
    return cv2.cvtColor(img, cv2.COLOR_BGR2LAB), "Converted to LAB."


def resize(img: Img, p: Params) -> Result:
    h0, w0 = img.shape[:2]
    preset = p.get("preset")
    if preset:
        preset = str(preset).lower()
        if preset not in ("half", "double"):
            raise ValueError("resize preset must be one of: half, double.")
        scale = 0.5 if preset == "half" else 2.0
        target = (int(w0 * scale), int(h0 * scale))
    else:
        width, height = int(p.get("width", 0)), int(p.get("height", 0))
        if width <= 0 or height <= 0:
            raise ValueError(f"width and height must be positive integers, got width={width}, height={height}.")
        if width > 10000 or height > 10000:
            raise ValueError("width and height should not exceed 10000 pixels to prevent memory issues, "
                             f"got width={width}, height={height}.")
        target = (width, height)
    out = cv2.resize(img, target, interpolation=cv2.INTER_LINEAR)
    info = {"original_size": [w0, h0], "new_size": [target[0], target[1]],
            "scale": [target[0] / w0, target[1] / h0] if preset else None}
    return out, f"Resized from {w0}x{h0} to {target[0]}x{target[1]}. INFO: {_info(info)}"


def rotate(img: Img, angle_in: Any) -> Result:
    angle = float(angle_in) if angle_in is not None else 0.0
    if angle == 0:
        return img, "No rotation applied (angle=0)."
    h, w = img.shape[:2]
    center = (w / 2, h / 2)
    m = cv2.getRotationMatrix2D(center, -angle, 1.0)  # OpenCV turns counter-clockwise; the tool clockwise
    cos, sin = abs(m[0, 0]), abs(m[0, 1])
    new_w, new_h = int(h * sin + w * cos), int(h * cos + w * sin)
    m[0, 2] += new_w / 2 - center[0]
    m[1, 2] += new_h / 2 - center[1]
    out = cv2.warpAffine(img, m, (new_w, new_h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=(0, 0, 0))
    info = {"angle": angle, "center": [center[0], center[1]], "original_size": [w, h], "rotated_size": [new_w, new_h]}
    return out, f"Rotated by {angle} degrees clockwise. INFO: {_info(info)}"


def translate(img: Img, p: Params) -> Result:
    direction = str(p.get("direction", "right")).lower()
    distance = p.get("distance")
    if distance is not None:
        try:
            distance = int(distance)
            if distance < 0:
                raise ValueError(f"distance must be non-negative, got {distance}.")
            if distance > 10000:
                raise ValueError(f"distance should not exceed 10000 pixels, got {distance}.")
        except (TypeError, ValueError) as e:
            raise ValueError(f"distance must be a non-negative integer: {e}") from e
    else:
        distance = 32
    moves = {"left": (-distance, 0), "right": (distance, 0), "up": (0, -distance), "down": (0, distance)}
    if direction not in moves:
        raise ValueError(f"direction must be one of: left, right, up, down. Got: {direction}")
    dx, dy = moves[direction]
    h, w = img.shape[:2]
    out = cv2.warpAffine(img, np.array([[1, 0, dx], [0, 1, dy]], dtype=np.float32), (w, h), borderMode=cv2.BORDER_REPLICATE)
    info = {"direction": direction, "distance": distance, "translation": [int(dx), int(dy)],
            "total_pixels": abs(dx) + abs(dy)}
    return out, f"Translated {direction} by {distance} pixels. INFO: {_info(info)}"


def flip(img: Img, direction_in: Any) -> Result:
    direction = direction_in.lower()
    code = 1 if direction == "horizontal" else 0 if direction == "vertical" else None
    if code is None:
        raise ValueError("flip direction must be horizontal or vertical.")
    return cv2.flip(img, code), f"Flipped image {direction}."


def _ksize(p: Params, name: str) -> int:
    k = int(p.get("ksize", 5))
    if k < 3 or k > 51:
        raise ValueError(f"{name} blur ksize must be between 3 and 51, got {k}.")
    return k + 1 if k % 2 == 0 else k


def blur(img: Img, p: Params) -> Result:
    method = str(p.get("method", "gaussian")).lower()
    if method in ("average", "avg"):
        k = _ksize(p, "Average")
        info: dict[str, Any] = {"method": "average", "ksize": k}
        return cv2.blur(img, (k, k)), f"Applied average blur {k}x{k}. INFO: {_info(info)}"
    if method == "gaussian":
        k = int(p.get("ksize", 5))
        sx, sy = float(p.get("sigma_x", 0)), float(p.get("sigma_y", 0))
        if k < 3 or k > 51:
            raise ValueError(f"Gaussian blur ksize must be between 3 and 51, got {k}.")
        if k % 2 == 0:
            k += 1
        if sx < 0 or sx > 10:
            raise ValueError(f"Gaussian blur sigma_x must be between 0 and 10, got {sx}.")
        if sy < 0 or sy > 10:
            raise ValueError(f"Gaussian blur sigma_y must be between 0 and 10, got {sy}.")
        info = {"method": "gaussian", "ksize": k, "sigma_x": sx, "sigma_y": sy}
        return (cv2.GaussianBlur(img, (k, k), sx, sy),
                f"Applied Gaussian blur {k}x{k} (sigma_x={sx}, sigma_y={sy}). INFO: {_info(info)}")
    if method == "median":
        k = _ksize(p, "Median")
        info = {"method": "median", "ksize": k}
        return cv2.medianBlur(img, k), f"Applied median blur k={k}. INFO: {_info(info)}"
    if method == "bilateral":
        d = int(p.get("d", 9))
        sc, ss = float(p.get("sigma_color", 75)), float(p.get("sigma_space", 75))
        if d < 1 or d > 50:
            raise ValueError(f"Bilateral filter d must be between 1 and 50, got {d}.")
        if sc < 1 or sc > 200:
            raise ValueError(f"Bilateral filter sigma_color must be between 1 and 200, got {sc}.")
        if ss < 1 or ss > 200:
            raise ValueError(f"Bilateral filter sigma_space must be between 1 and 200, got {ss}.")
        info = {"method": "bilateral", "d": d, "sigma_color": sc, "sigma_space": ss}
        return (cv2.bilateralFilter(img, d, sc, ss),
                f"Applied bilateral filter (d={d}, sigma_color={sc}, sigma_space={ss}). INFO: {_info(info)}")
    raise ValueError(f"Blur method must be one of: average, gaussian, median, bilateral. Got: {method}.")


def _block(p: Params) -> tuple[int, int]:
    b = int(p.get("adaptive_block_size", 11))
    if b % 2 == 0:
        b += 1
    return max(3, min(b, 101)), int(p.get("adaptive_constant", 2))


def threshold(img: Img, p: Params) -> Result:
    mode = str(p.get("mode", "otsu")).lower()
    invert = bool(p.get("invert", False))
    color_mode = str(p.get("color_mode", "grayscale")).lower()
    if mode not in ("binary", "otsu", "adaptive_mean", "adaptive_gaussian"):
        raise ValueError("threshold mode must be binary, otsu, adaptive_mean, or adaptive_gaussian.")
    adaptive = {"adaptive_mean": cv2.ADAPTIVE_THRESH_MEAN_C, "adaptive_gaussian": cv2.ADAPTIVE_THRESH_GAUSSIAN_C}
    if color_mode == "grayscale":
        g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        if mode == "binary":
            t = max(0, min(255, int(p.get("threshold_value", 127))))
            used, th = cv2.threshold(g, t, 255, cv2.THRESH_BINARY)
        elif mode == "otsu":
            used, th = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        else:
            b, c = _block(p)
            used, th = -1, cv2.adaptiveThreshold(g, 255, adaptive[mode], cv2.THRESH_BINARY, b, c)
        if invert:
            th = 255 - th
        white = int(np.sum(th == 255))
        info = {"mode": mode, "color_mode": "grayscale", "threshold": float(used), "white_pixels": white,
                "white_ratio": float(white) / th.size, "invert": invert}
        return cv2.cvtColor(th, cv2.COLOR_GRAY2BGR), f"Applied {mode} threshold (grayscale mode). INFO: {_info(info)}"
    if color_mode == "bgr":
        channels = p.get("channels", [0, 1, 2])
        out = img.copy()
        if mode == "adaptive_mean" or mode == "adaptive_gaussian":
            b, c = _block(p)
        elif mode == "binary":
            t = max(0, min(255, int(p.get("threshold_value", 127))))
        for ch in channels:
            if 0 <= ch < 3:
                if mode == "binary":
                    _, out[:, :, ch] = cv2.threshold(img[:, :, ch], t, 255, cv2.THRESH_BINARY)
                elif mode == "otsu":
                    _, out[:, :, ch] = cv2.threshold(img[:, :, ch], 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
                else:
                    out[:, :, ch] = cv2.adaptiveThreshold(img[:, :, ch], 255, adaptive[mode], cv2.THRESH_BINARY, b, c)
        if invert:
            out = 255 - out
        white = int(np.sum(out == 255))
        info = {"mode": mode, "color_mode": "bgr", "channels": channels, "white_pixels": white,
                "white_ratio": float(white) / out.size, "invert": invert}
        return out, f"Applied {mode} threshold to BGR channels {channels}. INFO: {_info(info)}"
    raise ValueError("color_mode must be 'grayscale' or 'bgr'.")


def morphology(img: Img, p: Params) -> Result:
    op = str(p.get("op", "open")).lower()
    k = int(p.get("kernel_size", 3))
    iterations = int(p.get("iterations", 1))
    shape = str(p.get("kernel_shape", "rect")).lower()
    if k % 2 == 0:
        k += 1
    k = max(3, min(k, 21))
    iterations = max(1, min(int(iterations), 10))
    if shape not in ("ellipse", "rect"):
        raise ValueError("kernel_shape must be 'rect' or 'ellipse'.")
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE if shape == "ellipse" else cv2.MORPH_RECT, (k, k))
    if op == "erode":
        out = cv2.erode(img, kernel, iterations=iterations)
    elif op == "dilate":
        out = cv2.dilate(img, kernel, iterations=iterations)
    elif op in ("open", "close"):
        out = cv2.morphologyEx(img, cv2.MORPH_OPEN if op == "open" else cv2.MORPH_CLOSE, kernel, iterations=iterations)
    else:
        raise ValueError("morphology op must be 'erode', 'dilate', 'open', or 'close'.")
    info = {"op": op, "kernel_size": k, "kernel_shape": shape, "iterations": iterations}
    return out, f"Applied {op} with {shape} kernel {k}x{k} for {iterations} iterations. INFO: {_info(info)}"


def gradients(img: Img, mode_in: Any) -> Result:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    mode = mode_in.lower()
    if mode == "sobel_x":
        grad = cv2.Sobel(g, cv2.CV_64F, 1, 0, ksize=3)
    elif mode == "sobel_y":
        grad = cv2.Sobel(g, cv2.CV_64F, 0, 1, ksize=3)
    elif mode == "laplacian":
        grad = cv2.Laplacian(g, cv2.CV_64F)
    else:
        raise ValueError("gradient mode must be sobel_x, sobel_y, or laplacian.")
    return cv2.cvtColor(cv2.convertScaleAbs(grad), cv2.COLOR_GRAY2BGR), f"Computed {mode} gradient."


CANNY_PRESETS = {"low": (50, 100), "medium": (100, 200), "high": (150, 250)}


def canny(img: Img, p: Params) -> Result:
    color_mode = str(p.get("color_mode", "grayscale")).lower()
    preset = str(p.get("preset", "medium")).lower()
    if "threshold_low" in p and "threshold_high" in p:
        lo = max(0, min(255, int(p.get("threshold_low", 100))))
        hi = max(0, min(255, int(p.get("threshold_high", 200))))
        if lo > hi:
            lo, hi = hi, lo
        name = "custom"
    elif preset in CANNY_PRESETS:
        (lo, hi), name = CANNY_PRESETS[preset], preset
    else:
        (lo, hi), name = CANNY_PRESETS["medium"], "medium (default)"
    if color_mode == "grayscale":
        edges = cv2.Canny(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), lo, hi)
        n = int(np.count_nonzero(edges))
        info: dict[str, Any] = {"preset": name, "color_mode": "grayscale", "thresholds": [lo, hi], "edge_pixels": n,
                                "edge_ratio": float(n / edges.size if edges.size else 0)}
        return (cv2.cvtColor(edges, cv2.COLOR_GRAY2BGR),
                f"Applied Canny edges ({lo}, {hi}) in grayscale mode. INFO: {_info(info)}")
    if color_mode == "bgr":
        channels = p.get("channels", [0, 1, 2])
        out = np.zeros_like(img)
        n = 0
        for ch in channels:
            if 0 <= ch < 3:
                e = cv2.Canny(img[:, :, ch], lo, hi)
                out[:, :, ch] = e
                n += int(np.count_nonzero(e))
        info = {"preset": name, "color_mode": "bgr", "channels": channels, "thresholds": [lo, hi], "edge_pixels": n,
                "edge_ratio": float(n / out.size if out.size else 0)}
        return out, f"Applied Canny edges ({lo}, {hi}) to BGR channels {channels}. INFO: {_info(info)}"
    raise ValueError("color_mode must be 'grayscale' or 'bgr'.")


def pyramid(img: Img, mode_in: Any) -> Result:
    h0, w0 = img.shape[:2]
    mode = mode_in.lower()
    if mode not in ("pyr_down", "pyr_up"):
        raise ValueError("pyramid mode must be pyr_down or pyr_up.")
    out = cv2.pyrDown(img) if mode == "pyr_down" else cv2.pyrUp(img)
    h1, w1 = out.shape[:2]
    info = {"mode": mode, "original_size": [w0, h0], "new_size": [w1, h1]}
    word = "downsample" if mode == "pyr_down" else "upsample"
    return out, f"Pyramid {word} (1 level). INFO: {_info(info)}"


def _contours(img: Img, p: Params) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    lo, hi = int(p.get("canny_low", 100)), int(p.get("canny_high", 200))
    edges = cv2.Canny(g, lo, hi)
    mode = str(p.get("mode", "external")).lower()
    found, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL if mode == "external" else cv2.RETR_LIST,
                                cv2.CHAIN_APPROX_SIMPLE)
    recs: list[dict[str, Any]] = []
    for i, c in enumerate(found):
        x, y, w, h = cv2.boundingRect(c)
        recs.append({"index": i, "contour": c, "area": float(cv2.contourArea(c)),
                     "bbox": {"x": int(x), "y": int(y), "width": int(w), "height": int(h)}})
    recs.sort(key=lambda r: r["area"], reverse=True)
    rank = p.get("rank")
    try:
        max_contours = int(p.get("max_contours", 20))
    except (TypeError, ValueError):
        max_contours = 20
    if rank is not None:
        try:
            rank = int(rank)
        except (TypeError, ValueError):
            rank = 1
        if rank < 1 or rank > len(recs):
            rank = 1
        chosen = recs[rank - 1:rank] if recs else []
    else:
        chosen = recs[:max_contours] if max_contours > 0 else recs
    info = {"total_contours": len(found), "returned_contours": len(chosen), "mode": mode,
            "canny": {"low": int(lo), "high": int(hi)},
            "contours": [{"index": r["index"], "area": r["area"], "bbox": r["bbox"]} for r in chosen]}
    return found, chosen, info


def contours(img: Img, p: Params) -> Result:
    found, _chosen, info = _contours(img, p)
    canvas = img.copy()
    if found:
        canvas = cv2.drawContours(canvas, found, -1, (0, 255, 0), 2)
    return canvas, (f"Found {info['total_contours']} contours, returned {info['returned_contours']}. "
                    f"INFO: {_info(info)}")


def contour_area(img: Img, p: Params) -> Result:
    _found, chosen, info = _contours(img, p)
    color, t = _color(p.get("color", (255, 0, 0)), (255, 0, 0)), _thickness(p)
    canvas = img.copy()
    areas = []
    for r in chosen:
        area = float(r["area"])
        areas.append({"index": r["index"], "area": area, "bbox": r["bbox"]})
        cv2.drawContours(canvas, [r["contour"]], -1, color, t)
        b = r["bbox"]
        cv2.putText(canvas, f"{area:.1f}", (int(b["x"]), max(0, int(b["y"] - 5))), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                    color, 1, cv2.LINE_AA)
    info["areas"] = areas
    info["measurement"] = "contour_area"
    return canvas, f"Calculated contour areas with cv2.contourArea. INFO: {_info(info)}"


def arc_length(img: Img, p: Params) -> Result:
    _found, chosen, info = _contours(img, p)
    color, t = _color(p.get("color", (0, 0, 255)), (0, 0, 255)), _thickness(p)
    canvas = img.copy()
    perimeters = []
    for r in chosen:
        per = float(cv2.arcLength(r["contour"], True))
        perimeters.append({"index": r["index"], "perimeter": per, "bbox": r["bbox"]})
        cv2.drawContours(canvas, [r["contour"]], -1, color, t)
        b = r["bbox"]
        cv2.putText(canvas, f"{per:.1f}", (int(b["x"] + b["width"] / 2), int(b["y"] + b["height"] / 2)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 1, cv2.LINE_AA)
    info["perimeters"] = perimeters
    info["measurement"] = "arc_length"
    return canvas, f"Computed contour perimeters with cv2.arcLength. INFO: {_info(info)}"


def approx_poly(img: Img, p: Params) -> Result:
    _found, chosen, info = _contours(img, p)
    try:
        ratio = float(p.get("epsilon_ratio", 0.02))
    except (TypeError, ValueError):
        ratio = 0.02
    ratio = max(0.0, ratio)
    color, t = _color(p.get("color", (255, 0, 255)), (255, 0, 255)), _thickness(p)
    canvas = img.copy()
    out = []
    for r in chosen:
        eps = ratio * cv2.arcLength(r["contour"], True)
        approx = cv2.approxPolyDP(r["contour"], eps, True)
        points: list[Any] = []
        if approx is not None and approx.size > 0:
            cv2.drawContours(canvas, [approx], -1, color, t)
            cx, cy = np.mean(approx.reshape(-1, 2), axis=0)
            cv2.putText(canvas, f"{len(approx)}pts", (int(cx), int(cy)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, color, 1,
                        cv2.LINE_AA)
            points = approx.reshape(-1, 2).astype(int).tolist()
        out.append({"index": r["index"], "points_count": len(points), "points": points, "bbox": r["bbox"],
                    "epsilon": float(eps)})
    info["approx"] = out
    info["epsilon_ratio"] = float(ratio)
    info["measurement"] = "approx_poly_dp"
    return canvas, f"Approximated contours with cv2.approxPolyDP. INFO: {_info(info)}"


def draw_line(img: Img, p: Params) -> Result:
    try:
        x1, y1, x2, y2 = (int(p.get(k)) for k in ("x1", "y1", "x2", "y2"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError("x1, y1, x2, y2 must be valid integers.") from None
    color, t = _color(p.get("color", (0, 255, 0)), (0, 255, 0)), _thickness(p)
    canvas = img.copy()
    cv2.line(canvas, (x1, y1), (x2, y2), color, t)
    info = {"start": [x1, y1], "end": [x2, y2], "color": list(color), "thickness": t}
    return canvas, f"Drew line from ({x1}, {y1}) to ({x2}, {y2}). INFO: {_info(info)}"


def draw_circle(img: Img, p: Params) -> Result:
    h0, w0 = img.shape[:2]
    try:
        x, y, r = (int(p.get(k)) for k in ("x", "y", "radius"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError("x, y, and radius must be valid integers.") from None
    if r <= 0:
        raise ValueError(f"radius must be positive, got {r}.")
    if x < 0 or x >= w0 or y < 0 or y >= h0:
        raise ValueError(f"Circle center ({x}, {y}) is out of image bounds. Image size: {w0}x{h0}.")
    color = _color(p.get("color", (0, 255, 0)), (0, 255, 0))
    try:
        t = int(p.get("thickness", 2))
    except (TypeError, ValueError):
        t = 2
    canvas = img.copy()
    cv2.circle(canvas, (x, y), r, color, t)
    info = {"center": [x, y], "radius": r, "color": list(color), "thickness": t, "filled": t == -1}
    return canvas, f"Drew circle at ({x}, {y}) with radius {r}. INFO: {_info(info)}"


def histogram(img: Img, mode_in: Any, p: Params) -> Result:
    mode = mode_in.lower()
    color_mode = p.get("color_mode", "grayscale").lower()
    if mode not in ("equalize", "clahe"):
        raise ValueError("histogram mode must be 'equalize' or 'clahe'.")
    clip = p.get("clip_limit", 2.0)
    tiles = tuple(p.get("tile_grid_size", [8, 8]))
    if color_mode not in ("grayscale", "bgr", "hsv"):
        if mode == "clahe":
            cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles)  # the reference builds it (and may fail) first
        raise ValueError("color_mode must be 'grayscale', 'bgr', or 'hsv'.")
    if mode == "equalize":
        def apply(a: Img) -> Img:
            out: Img = cv2.equalizeHist(a)
            return out
        detail = ""
    else:
        clahe = cv2.createCLAHE(clipLimit=clip, tileGridSize=tiles)

        def apply(a: Img) -> Img:
            out: Img = clahe.apply(a)
            return out
        detail = f"clipLimit={clip}, tileGridSize={tiles}"
    if color_mode == "grayscale":
        out = cv2.cvtColor(apply(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)), cv2.COLOR_GRAY2BGR)
        msg = ("Applied histogram equalization (grayscale mode)." if mode == "equalize"
               else f"Applied CLAHE (grayscale mode, {detail}).")
    elif color_mode == "bgr":
        channels = p.get("channels", [0, 1, 2])
        out = img.copy()
        for ch in channels:
            if 0 <= ch < 3:
                out[:, :, ch] = apply(img[:, :, ch])
        msg = (f"Applied histogram equalization to BGR channels {channels}." if mode == "equalize"
               else f"Applied CLAHE to BGR channels {channels} ({detail}).")
    else:
        hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
        hsv[:, :, 2] = apply(hsv[:, :, 2])
        out = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)
        msg = ("Applied histogram equalization to HSV V channel." if mode == "equalize"
               else f"Applied CLAHE to HSV V channel ({detail}).")
    return out, msg


def dft(img: Img) -> Result:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    d = np.fft.fftshift(cv2.dft(np.float32(g), flags=cv2.DFT_COMPLEX_OUTPUT))
    mag = 20 * np.log(cv2.magnitude(d[:, :, 0], d[:, :, 1]) + 1e-5)
    mag = cv2.normalize(mag, None, 0, 255, cv2.NORM_MINMAX)
    return cv2.cvtColor(mag.astype(np.uint8), cv2.COLOR_GRAY2BGR), "Computed DFT magnitude spectrum."


def template_match(img: Img, p: Params, load: Callable[[str], Img]) -> Result:
    path = p.get("template_path")
    method = str(p.get("method", "ccorr")).lower()
    methods = {"sqdiff": cv2.TM_SQDIFF, "ccorr": cv2.TM_CCORR_NORMED, "ccoeff": cv2.TM_CCOEFF_NORMED}
    if method not in methods:
        raise ValueError("template match method must be sqdiff, ccorr, or ccoeff.")
    if not path:
        raise ValueError("template_path is required for template_match.")
    tmpl = load(path)
    res = cv2.matchTemplate(img, tmpl, methods[method])
    min_val, max_val, min_loc, max_loc = cv2.minMaxLoc(res)
    tl = min_loc if method == "sqdiff" else max_loc
    h, w = tmpl.shape[:2]
    br = (tl[0] + w, tl[1] + h)
    canvas = img.copy()
    cv2.rectangle(canvas, tl, br, (0, 0, 255), 2)
    score = min_val if method == "sqdiff" else max_val
    info = {"method": method, "score": float(score),
            "bbox": {"x": int(tl[0]), "y": int(tl[1]), "width": int(w), "height": int(h)},
            "top_left": {"x": int(tl[0]), "y": int(tl[1])}, "bottom_right": {"x": int(br[0]), "y": int(br[1])},
            "template_size": {"width": int(w), "height": int(h)}}
    return canvas, f"Template match ({method}) score {score:.3f}. INFO: {_info(info)}"


def hough_lines(img: Img, p: Params) -> Result:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    lo, hi = int(p.get("canny_low", 80)), int(p.get("canny_high", 200))
    edges = cv2.Canny(g, lo, hi)
    thr, min_len, gap = int(p.get("threshold", 80)), int(p.get("minLineLength", 50)), int(p.get("maxLineGap", 10))
    if thr <= 0:
        raise ValueError("threshold must be positive.")
    if min_len <= 0:
        raise ValueError("minLineLength must be positive.")
    if gap < 0:
        raise ValueError("maxLineGap must be non-negative.")
    lines = cv2.HoughLinesP(edges, 1, np.pi / 180, threshold=thr, minLineLength=min_len, maxLineGap=gap)
    canvas = img.copy()
    found: list[dict[str, Any]] = []
    if lines is not None:
        for line in lines:
            x1, y1, x2, y2 = line[0]
            found.append({"p1": {"x": int(x1), "y": int(y1)}, "p2": {"x": int(x2), "y": int(y2)},
                          "length": float(np.hypot(x2 - x1, y2 - y1))})
            cv2.line(canvas, (x1, y1), (x2, y2), (0, 0, 255), 2)
    found.sort(key=lambda r: r["length"], reverse=True)
    max_lines = int(p.get("max_lines", 20))
    chosen = found[:max_lines] if max_lines > 0 and len(found) > max_lines else found
    info = {"total_lines": len(found), "returned_lines": len(chosen), "lines": chosen,
            "parameters": {"threshold": thr, "minLineLength": min_len, "maxLineGap": gap, "canny_low": lo,
                           "canny_high": hi}}
    return canvas, (f"Detected {len(found)} line segments, returned {len(chosen)} (threshold={thr}, "
                    f"minLineLength={min_len}). INFO: {_info(info)}")


def hough_circles(img: Img, p: Params) -> Result:
    g = cv2.medianBlur(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), 5)
    dp, min_dist = float(p.get("dp", 1.2)), int(p.get("minDist", 50))
    p1, p2 = int(p.get("param1", 100)), int(p.get("param2", 50))
    rmin, rmax = int(p.get("minRadius", 10)), int(p.get("maxRadius", 0))
    for bad, text in ((dp <= 0, "dp must be positive."), (min_dist <= 0, "minDist must be positive."),
                      (p1 <= 0, "param1 must be positive."), (p2 <= 0, "param2 must be positive."),
                      (rmin < 0, "minRadius must be non-negative."), (rmax < 0, "maxRadius must be non-negative."),
                      (0 < rmax < rmin, "maxRadius must be >= minRadius.")):
        if bad:
            raise ValueError(text)
    circles = cv2.HoughCircles(g, cv2.HOUGH_GRADIENT, dp=dp, minDist=min_dist, param1=p1, param2=p2,
                               minRadius=rmin, maxRadius=rmax)
    canvas = img.copy()
    found: list[dict[str, Any]] = []
    if circles is not None:
        rounded: Any = np.uint16(np.around(circles))
        for c in rounded[0, :]:
            found.append({"center": {"x": int(c[0]), "y": int(c[1])}, "radius": int(c[2])})
            cv2.circle(canvas, (c[0], c[1]), c[2], (0, 255, 0), 2)
            cv2.circle(canvas, (c[0], c[1]), 2, (255, 0, 0), 3)
    found.sort(key=lambda r: r["radius"], reverse=True)
    max_c = int(p.get("max_circles", 20))
    if max_c > 0 and len(found) > max_c:
        found = found[:max_c]
    info = {"total_circles": len(found), "circles": found,
            "parameters": {"dp": dp, "minDist": min_dist, "param1": p1, "param2": p2, "minRadius": rmin,
                           "maxRadius": rmax if rmax > 0 else None}}
    return canvas, f"Detected {len(found)} circles (param2={p2}, minDist={min_dist}). INFO: {_info(info)}"


def watershed(img: Img, p: Params) -> Result:
    out = img.copy()
    g = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
    _, th = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    kernel = np.ones((3, 3), np.uint8)
    opening = cv2.morphologyEx(th, cv2.MORPH_OPEN, kernel, iterations=2)
    sure_bg = cv2.dilate(opening, kernel, iterations=3)
    dist = cv2.distanceTransform(opening, cv2.DIST_L2, 5)
    _, sure_fg = cv2.threshold(dist, 0.5 * dist.max(), 255, 0)
    sure_fg = np.uint8(sure_fg)
    unknown = cv2.subtract(sure_bg, sure_fg)
    _, markers = cv2.connectedComponents(sure_fg)
    markers = markers + 1
    markers[unknown == 255] = 0
    cv2.watershed(out, markers)
    out[markers == -1] = [255, 0, 0]
    labels = [int(v) for v in np.unique(markers.copy()) if v not in (-1, 1)]
    max_r = int(p.get("max_regions", 20))
    returned = labels[:max_r] if max_r > 0 and len(labels) > max_r else labels
    info = {"total_regions": len(labels), "returned_regions": len(returned), "labels": returned}
    return out, (f"Applied watershed segmentation. Found {len(labels)} regions, returned {len(returned)}. "
                 f"INFO: {_info(info)}")


def grabcut(img: Img, p: Params) -> Result:
    mode = str(p.get("preset", "center")).lower()
    h, w = img.shape[:2]
    presets = {"center": (int(w * 0.1), int(h * 0.1), int(w * 0.8), int(h * 0.8)),
               "tight": (int(w * 0.2), int(h * 0.2), int(w * 0.6), int(h * 0.6)),
               "loose": (int(w * 0.05), int(h * 0.05), int(w * 0.9), int(h * 0.9))}
    if mode not in presets:
        raise ValueError("grabcut preset must be center, tight, or loose.")
    rect = presets[mode]
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.grabCut(img, mask, rect, np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64), 5,
                cv2.GC_INIT_WITH_RECT)
    fg = np.where((mask == 2) | (mask == 0), 0, 1).astype("uint8")
    out = img * fg[:, :, np.newaxis]
    n = int(fg.sum())
    info = {"preset": mode, "rect": [int(v) for v in rect], "foreground_pixels": n,
            "foreground_ratio": float(n / (h * w) if h * w else 0)}
    return out, f"Applied GrabCut with {mode} rectangle. INFO: {_info(info)}"


def _max_points(p: Params) -> int:
    try:
        return int(p.get("max_points", 50)) if p and isinstance(p, dict) else 50
    except Exception:
        return 50


def features(img: Img, method_in: Any, p: Params) -> Result:
    method = method_in.lower()
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    canvas = img.copy()
    if method == "harris":
        dst = cv2.dilate(cv2.cornerHarris(np.float32(g), 2, 3, 0.04), None)
        corners = np.argwhere(dst > 0.01 * dst.max())
        mp = _max_points(p)
        strengths = sorted(((dst[y, x], (x, y)) for y, x in corners), reverse=True)
        chosen = strengths[:mp] if len(strengths) > mp else strengths
        pts = []
        for _s, (x, y) in chosen:
            cv2.circle(canvas, (x, y), 3, (0, 0, 255), -1)
            pts.append([int(x), int(y)])
        return canvas, f"Harris corners: {len(corners)} detected, returned {len(pts)}. Points: {json.dumps(pts)}"
    if method == "shi_tomasi":
        found = cv2.goodFeaturesToTrack(g, maxCorners=200, qualityLevel=0.01, minDistance=5)
        # the reference calls np.int0, which NumPy 2 removed: the same call fails the same way here
        corners = np.int0(found) if found is not None else []  # type: ignore[attr-defined]
        mp = _max_points(p)
        pts = []
        for c in corners[:mp]:
            x, y = c.ravel()
            cv2.circle(canvas, (x, y), 3, (0, 255, 0), -1)
            pts.append([int(x), int(y)])
        return canvas, f"Shi-Tomasi corners: {len(corners)}. Returned {len(pts)} points: {json.dumps(pts)}"
    if method in ("sift", "surf", "fast", "brief", "orb"):
        if method == "sift":
            if not hasattr(cv2, "SIFT_create"):
                raise ValueError("SIFT not available in this OpenCV build.")
            kps, _ = cv2.SIFT_create().detectAndCompute(g, None)
            canvas = cv2.drawKeypoints(img, kps, None, flags=cv2.DRAW_MATCHES_FLAGS_DRAW_RICH_KEYPOINTS)
        elif method == "surf":
            if not hasattr(cv2, "xfeatures2d") or not hasattr(cv2.xfeatures2d, "SURF_create"):
                raise ValueError("SURF requires xfeatures2d (contrib) build.")
            kps, _ = cv2.xfeatures2d.SURF_create().detectAndCompute(g, None)
            canvas = cv2.drawKeypoints(img, kps, None, flags=cv2.DRAW_MATCHES_FLAGS_DRAW_RICH_KEYPOINTS)
        elif method == "fast":
            kps = cv2.FastFeatureDetector_create().detect(g, None)
            canvas = cv2.drawKeypoints(img, kps, None, color=(255, 0, 0))
        elif method == "brief":
            if not hasattr(cv2, "xfeatures2d") or not hasattr(cv2.xfeatures2d, "BriefDescriptorExtractor_create"):
                raise ValueError("BRIEF requires xfeatures2d (contrib) build.")
            kps = cv2.FastFeatureDetector_create().detect(g, None)
            kps, _ = cv2.xfeatures2d.BriefDescriptorExtractor_create().compute(g, kps)
            canvas = cv2.drawKeypoints(img, kps, None, color=(0, 255, 0))
        else:
            kps, _ = cv2.ORB_create().detectAndCompute(g, None)
            canvas = cv2.drawKeypoints(img, kps, None, color=(0, 255, 0), flags=0)
        coords = [[int(k.pt[0]), int(k.pt[1])] for k in kps[:_max_points(p)]]
        return canvas, f"{method.upper()} keypoints: {len(kps)}. Returned {len(coords)} points: {json.dumps(coords)}"
    raise ValueError("feature method must be one of: harris, shi_tomasi, sift, surf, fast, brief, orb.")


def _window(val: Any, default: int, low: int, high: int) -> int:
    try:
        v = int(val)
    except Exception:
        v = default
    if v < low or v > high:
        v = default
    return v + 1 if v % 2 == 0 else v


def _float_or(p: Params, key: str, default: float) -> float:
    try:
        return float(p.get(key, default))
    except Exception:
        return default


def denoise(img: Img, p: Params) -> Result:
    mode = str(p.get("mode", "fast_means_color")).lower()
    if mode not in ("fast_means_gray", "fast_means_color", "fast_means_bgr_channel"):
        raise ValueError("denoise mode must be fast_means_gray, fast_means_color, or fast_means_bgr_channel.")
    channels = p.get("channels", [0, 1, 2]) if mode == "fast_means_bgr_channel" else None
    h = max(1.0, min(_float_or(p, "h", 10.0), 50.0))
    h_color = max(1.0, min(_float_or(p, "h_color", 10.0), 50.0)) if mode == "fast_means_color" else 0.0
    tw = _window(p.get("template_window", 7), 7, 3, 21)
    sw = _window(p.get("search_window", 21), 21, 3, 31)
    info: dict[str, Any] = {"mode": mode}
    if mode == "fast_means_gray":
        g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        out = cv2.cvtColor(cv2.fastNlMeansDenoising(g, None, h, tw, sw), cv2.COLOR_GRAY2BGR)
        info.update({"h": float(h), "template_window": int(tw), "search_window": int(sw)})
        return out, f"Applied fastNlMeansDenoising (grayscale). INFO: {_info(info)}"
    if mode == "fast_means_color":
        out = cv2.fastNlMeansDenoisingColored(img, None, h, h_color, tw, sw)
        info.update({"h": float(h), "h_color": float(h_color), "template_window": int(tw), "search_window": int(sw)})
        return out, f"Applied fastNlMeansDenoisingColored. INFO: {_info(info)}"
    out = img.copy()
    for ch in channels or []:
        if 0 <= ch < 3:
            out[:, :, ch] = cv2.fastNlMeansDenoising(img[:, :, ch], None, h, tw, sw)
    info.update({"channels": channels, "h": float(h), "template_window": int(tw), "search_window": int(sw)})
    return out, f"Applied fastNlMeansDenoising to BGR channels {channels}. INFO: {_info(info)}"


def inpaint(img: Img, p: Params) -> Result:
    strategy = str(p.get("preset", "canny")).lower()
    radius = max(1, min(int(p.get("radius", 3)), 10))
    method = str(p.get("method", "telea")).lower()
    if method not in ("telea", "ns"):
        raise ValueError("inpaint method must be 'telea' or 'ns'.")
    if strategy == "canny":
        lo = max(0, min(255, int(p.get("canny_low", 100))))
        hi = max(0, min(255, int(p.get("canny_high", 200))))
        if lo > hi:
            lo, hi = hi, lo
        edges = cv2.Canny(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), lo, hi)
        mask = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=1)
        detail = f"Canny ({lo}, {hi})"
    elif strategy == "threshold":
        t = max(0, min(255, int(p.get("threshold_value", 127))))
        _, mask = cv2.threshold(cv2.cvtColor(img, cv2.COLOR_BGR2GRAY), t, 255, cv2.THRESH_BINARY)
        detail = f"threshold ({t})"
    else:
        raise ValueError("inpaint preset must be 'canny' or 'threshold'.")
    out = cv2.inpaint(img, mask, radius, cv2.INPAINT_TELEA if method == "telea" else cv2.INPAINT_NS)
    info = {"preset": strategy, "mask_strategy": detail, "radius": radius, "method": method}
    return out, f"Inpainted regions using {strategy} mask. INFO: {_info(info)}"


def inrange_color(img: Img, p: Params) -> Result:
    space = str(p.get("colorspace", "hsv")).lower()
    fmt = str(p.get("output_format", "both")).lower()
    lower, upper = p.get("lower", None), p.get("upper", None)
    if not (isinstance(lower, list | tuple) and isinstance(upper, list | tuple) and len(lower) == 3
            and len(upper) == 3):
        raise ValueError("lower and upper must be lists of three integers, e.g., lower:[0,50,50], upper:[10,255,255]")
    lo, hi = np.array(lower, dtype=np.uint8), np.array(upper, dtype=np.uint8)
    if space == "hsv":
        proc = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
    elif space == "bgr":
        proc = img.copy()
    else:
        raise ValueError("colorspace must be 'hsv' or 'bgr'.")
    mask = cv2.inRange(proc, lo, hi)
    n = int(np.count_nonzero(mask))
    ratio = n / mask.size if mask.size else 0
    if fmt == "mask":
        out = cv2.cvtColor(mask, cv2.COLOR_GRAY2BGR)
    elif fmt == "masked_image":
        out = cv2.bitwise_and(img, img, mask=mask)
    elif fmt == "both":
        masked, as_bgr = cv2.bitwise_and(img, img, mask=mask), cv2.cvtColor(mask, cv2.COLOR_GRAY2BGR)
        out = masked if n > 0 else as_bgr
    else:
        raise ValueError("output_format must be 'mask', 'masked_image', or 'both'.")
    info = {"colorspace": space, "lower": lo.tolist(), "upper": hi.tolist(), "output_format": fmt, "mask_pixels": n,
            "mask_ratio": float(ratio)}
    return out, f"Applied color range mask ({space}). INFO: {_info(info)}"


def _region(img: Img, p: Params, what: str, label: str) -> tuple[int, int, int, int]:
    h0, w0 = img.shape[:2]
    try:
        x, y = int(p.get("x", 0)), int(p.get("y", 0))
        w, h = int(p.get("width", 0)), int(p.get("height", 0))
    except (ValueError, TypeError):
        raise ValueError(f"{what} parameters must be integers: x, y, width, height.") from None
    if w <= 0 or h <= 0:
        raise ValueError(f"width and height must be positive integers, got width={w}, height={h}.")
    if x < 0 or y < 0:
        raise ValueError(f"x and y must be non-negative integers, got x={x}, y={y}.")
    if x + w > w0 or y + h > h0:
        raise ValueError(f"{label} region exceeds image bounds. Image size: {w0}x{h0}, {what.split('_')[0]}: "
                         f"x={x}, y={y}, width={w}, height={h}.")
    return x, y, w, h


def crop(img: Img, p: Params) -> Result:
    h0, w0 = img.shape[:2]
    x, y, w, h = _region(img, p, "crop", "Crop")
    info = {"original_size": [w0, h0], "crop_region": {"x": x, "y": y, "width": w, "height": h},
            "cropped_size": [w, h]}
    return img[y:y + h, x:x + w], (f"Cropped region ({x}, {y}, {w}, {h}) from {w0}x{h0} image. "
                                   f"INFO: {_info(info)}")


def zoom_in(img: Img, p: Params) -> Result:
    h0, w0 = img.shape[:2]
    x, y, w, h = _region(img, p, "zoom_in", "Zoom")
    cropped = img[y:y + h, x:x + w]
    tw: int | None = None
    th: int | None = None
    scale = p.get("scale")
    if scale is not None:
        try:
            scale = float(scale)
            if scale <= 0 or scale > 10:
                raise ValueError(f"scale must be between 0 and 10, got {scale}.")
            tw, th = int(w * scale), int(h * scale)
        except (ValueError, TypeError):
            raise ValueError(f"scale must be a positive number, got {scale}.") from None
    elif "target_width" in p or "target_height" in p:
        try:
            tw, th = int(p.get("target_width", w)), int(p.get("target_height", h))
            if tw <= 0 or th <= 0:
                raise ValueError("target_width and target_height must be positive integers.")
            if tw > 10000 or th > 10000:
                raise ValueError("target_width and target_height should not exceed 10000 pixels.")
        except (ValueError, TypeError):
            raise ValueError("target_width and target_height must be positive integers.") from None
    if tw and th:
        out, size = cv2.resize(cropped, (tw, th), interpolation=cv2.INTER_LINEAR), [tw, th]
    else:
        out, size = cropped, [w, h]
    info = {"original_size": [w0, h0], "zoom_region": {"x": x, "y": y, "width": w, "height": h},
            "zoomed_size": size, "scale": scale if scale else None}
    return out, (f"Zoomed into region ({x}, {y}, {w}, {h}) from {w0}x{h0} image, result size: {size[0]}x{size[1]}. "
                 f"INFO: {_info(info)}")


def floodfill(img: Img, p: Params) -> Result:
    h0, w0 = img.shape[:2]
    try:
        x, y = int(p.get("x", 0)), int(p.get("y", 0))
    except (ValueError, TypeError):
        raise ValueError("floodFill parameters x and y must be integers.") from None
    if x < 0 or x >= w0 or y < 0 or y >= h0:
        raise ValueError(f"Seed point ({x}, {y}) is out of image bounds. Image size: {w0}x{h0}.")

    def triple(key: str, default: tuple[int, int, int]) -> Any:
        v = p.get(key, list(default))
        if isinstance(v, list):
            return tuple(v[:3]) if len(v) >= 3 else default
        return v

    lo, up, new = triple("loDiff", (10, 10, 10)), triple("upDiff", (10, 10, 10)), triple("newVal", (0, 255, 0))
    flags = p.get("flags", 4 | cv2.FLOODFILL_FIXED_RANGE)
    try:
        flags = int(flags)
    except (ValueError, TypeError):
        flags = 4 | cv2.FLOODFILL_FIXED_RANGE
    mask = np.zeros((h0 + 2, w0 + 2), np.uint8)
    _, out, mask_out, rect = cv2.floodFill(img.copy(), mask, (x, y), new, lo, up, flags)
    filled = int(np.sum(mask_out[1:-1, 1:-1] > 0))
    total = h0 * w0
    ratio = float(filled) / total if total > 0 else 0
    info = {"seed_point": {"x": x, "y": y}, "filled_pixels": filled, "fill_ratio": ratio,
            "new_color": list(new) if isinstance(new, tuple) else new,
            "rect": {"x": int(rect[0]), "y": int(rect[1]), "width": int(rect[2]), "height": int(rect[3])}
            if rect else None}
    return out, (f"Flood fill from seed point ({x}, {y}), filled {filled} pixels ({ratio * 100:.2f}%). "
                 f"INFO: {_info(info)}")


def connected_components(img: Img, p: Params) -> Result:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if len(img.shape) == 3 else img.copy()
    mode = str(p.get("threshold_mode", "otsu")).lower()
    conn = int(p.get("connectivity", 8))
    if mode == "otsu":
        _, binary = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    elif mode == "binary":
        _, binary = cv2.threshold(g, int(p.get("threshold_value", 127)), 255, cv2.THRESH_BINARY)
    elif mode == "none":
        binary = g
    else:
        raise ValueError("threshold_mode must be one of: otsu, binary, none.")
    if conn not in (4, 8):
        raise ValueError("connectivity must be 4 or 8.")
    n, _labels, stats, cents = cv2.connectedComponentsWithStats(binary, connectivity=conn)
    canvas = img.copy()
    comps: list[dict[str, Any]] = []
    for i in range(1, n):
        x, y = int(stats[i, cv2.CC_STAT_LEFT]), int(stats[i, cv2.CC_STAT_TOP])
        w, h = int(stats[i, cv2.CC_STAT_WIDTH]), int(stats[i, cv2.CC_STAT_HEIGHT])
        area = int(stats[i, cv2.CC_STAT_AREA])
        cx, cy = float(cents[i, 0]), float(cents[i, 1])
        cv2.rectangle(canvas, (x, y), (x + w, y + h), (0, 255, 0), 2)
        cv2.circle(canvas, (int(cx), int(cy)), 3, (0, 0, 255), -1)
        comps.append({"label": i, "bbox": {"x": x, "y": y, "width": w, "height": h}, "area": area,
                      "centroid": {"x": cx, "y": cy}})
    comps.sort(key=lambda c: c["area"], reverse=True)
    max_c = int(p.get("max_components", 20))
    if max_c > 0:
        comps = comps[:max_c]
    info = {"total_components": n - 1, "returned_components": len(comps), "connectivity": conn,
            "threshold_mode": mode, "components": comps}
    return canvas, f"Found {n - 1} connected components (connectivity={conn}). INFO: {_info(info)}"


def convert_scale_abs(img: Img, p: Params) -> Result:
    try:
        alpha, beta = float(p.get("alpha", 1.0)), float(p.get("beta", 0))
    except (TypeError, ValueError):
        alpha, beta = 1.0, 0
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}.")
    out = cv2.convertScaleAbs(img.astype(np.float32) * alpha + beta)
    info = {"alpha": float(alpha), "beta": float(beta), "output_range": [0, 255], "data_type": "uint8"}
    return out, f"Applied convertScaleAbs with alpha={alpha}, beta={beta}. INFO: {_info(info)}"


def apply(img: Img, op: str, p: Params, load: Callable[[str], Img]) -> Result:
    """Run operation `op` (e.g. "crop") as the reference's `_apply_op` dispatches it."""
    op = op.lower()
    if op.startswith("colorspace_"):
        return colorspace(img, op.removeprefix("colorspace_"))
    table: dict[str, Callable[[], Result]] = {
        "resize": lambda: resize(img, p),
        "rotate": lambda: rotate(img, int(p.get("angle", 0))),
        "translate": lambda: translate(img, p),
        "flip": lambda: flip(img, p.get("direction", "horizontal")),
        "blur": lambda: blur(img, p),
        "threshold": lambda: threshold(img, p),
        "morphology": lambda: morphology(img, p),
        "gradients": lambda: gradients(img, p.get("mode", "sobel_x")),
        "canny": lambda: canny(img, p),
        "pyramid": lambda: pyramid(img, p.get("mode", "pyr_down")),
        "contours": lambda: contours(img, p),
        "draw_line": lambda: draw_line(img, p),
        "contour_area": lambda: contour_area(img, p),
        "arc_length": lambda: arc_length(img, p),
        "approx_poly": lambda: approx_poly(img, p),
        "histogram": lambda: histogram(img, p.get("mode", "equalize"), p),
        "dft": lambda: dft(img),
        "template_match": lambda: template_match(img, p, load),
        "hough_lines": lambda: hough_lines(img, p),
        "hough_circles": lambda: hough_circles(img, p),
        "watershed": lambda: watershed(img, p),
        "grabcut": lambda: grabcut(img, p),
        "features": lambda: features(img, p.get("method", "orb"), p),
        "denoise": lambda: denoise(img, p),
        "inpaint": lambda: inpaint(img, p),
        "inrange_color": lambda: inrange_color(img, p),
        "crop": lambda: crop(img, p),
        "zoom_in": lambda: zoom_in(img, p),
        "floodfill": lambda: floodfill(img, p),
        "connected_components_with_stats": lambda: connected_components(img, p),
        "convertscaleabs": lambda: convert_scale_abs(img, p),
        "draw_circle": lambda: draw_circle(img, p),
    }
    fn = table.get(op)
    if fn is None:
        raise ValueError(f"Unsupported operation '{op}'.")
    return fn()
