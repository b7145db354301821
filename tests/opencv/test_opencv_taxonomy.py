"""The image-operation taxonomy: a hand-labelled corpus of realistic model-written snippets and calls,
recognised by `toolsight.tools.operations` and labelled by VisualToolBench's and VTC-Bench's vocabularies."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORIES, CATEGORY_VOCABULARY
from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY, TOOL_GROUPS
from toolsight.tools.opencv import OP_ORDER, OPENCV_TOOL_NAMES
from toolsight.tools.operations import Operation, call_operations, classify_call, code_operations
from toolsight.tools.operations.calls import INTERFACE_OPS

VOCABULARIES = (CATEGORY_VOCABULARY, TOOL_GROUP_VOCABULARY)


def labelled(ops: tuple[Operation, ...]) -> tuple[list[str], list[str]]:
    """(VisualToolBench categories, VTC-Bench groups) of some operations."""
    return CATEGORY_VOCABULARY.label_all(ops), TOOL_GROUP_VOCABULARY.label_all(ops)


def vtb(name: str, arguments: Mapping[str, Any] | str | None) -> list[str]:
    return classify_call(name, arguments, VOCABULARIES)[CATEGORY_VOCABULARY.name]


def vtc(name: str, arguments: Mapping[str, Any] | str | None) -> list[str]:
    return classify_call(name, arguments, VOCABULARIES)[TOOL_GROUP_VOCABULARY.name]

# (code, VisualToolBench categories, VTC-Bench groups) — labelled by hand, order of first appearance
CORPUS: list[tuple[str, list[str], list[str]]] = [
    ("""
img = cv2.imread('input.png')
h, w = img.shape[:2]
roi = img[int(h*0.2):int(h*0.6), int(w*0.1):int(w*0.5)]
cv2.imwrite('transformed_image_0.png', roi)
""", ["crop"], ["Crop"]),
    ("""
from PIL import Image
img = Image.open('a.jpg')
w, h = img.size
crop = img.crop((int(w*0.35), int(h*0.45), int(w*0.65), int(h*0.8)))
crop_large = crop.resize((crop.size[0]*2, crop.size[1]*2))
crop_large.save('transformed_image_0.png', 'PNG')
""", ["crop", "resize"], ["Crop", "Resize"]),
    ("""
import cv2
img = cv2.imread('in.png')
(h, w) = img.shape[:2]
M = cv2.getRotationMatrix2D((w // 2, h // 2), 30, 1.0)
rotated = cv2.warpAffine(img, M, (w, h))
cv2.imwrite('out.png', rotated)
""", ["rotate"], ["Rotate"]),
    ("""
from PIL import Image, ImageEnhance
img = Image.open('x.jpg')
img_rot = img.rotate(180, expand=True)
enhancer = ImageEnhance.Brightness(img_rot)
img_enh = enhancer.enhance(1.8)
img_enh2 = ImageEnhance.Contrast(img_enh).enhance(1.5)
img_enh2.save('transformed_image_0.png')
""", ["rotate", "brightness", "contrast"], ["Rotate", "Adjust Brightness"]),
    ("""
from PIL import Image
img = Image.open('/w/transformed_image_0.png')
img_flipped = img.transpose(Image.FLIP_LEFT_RIGHT)
img_flipped.save('transformed_image_1.png', 'PNG')
""", ["flip"], ["Flip"]),
    ("""
import cv2
img = cv2.imread('in.png')
bright = cv2.convertScaleAbs(img, alpha=1.0, beta=40)
cv2.imwrite('out.png', bright)
""", ["brightness"], ["Adjust Brightness"]),
    ("""
import cv2
img = cv2.imread('in.png')
adjusted = cv2.convertScaleAbs(img, alpha=1.8, beta=0)
""", ["contrast"], ["Adjust Brightness"]),
    ("""
import cv2
img = cv2.imread('in.png')
flipped = cv2.flip(img, 1)
cv2.imwrite('out.png', flipped)
""", ["flip"], ["Flip"]),
    ("""
import cv2, numpy as np
img = cv2.imread('in.png')
hsv = cv2.cvtColor(img, cv2.COLOR_BGR2HSV)
mask = cv2.inRange(hsv, np.array([35, 40, 40]), np.array([85, 255, 255]))
kernel = np.ones((5, 5), np.uint8)
mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, kernel)
contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
big = [c for c in contours if cv2.contourArea(c) > 500]
for c in big:
    x, y, w, h = cv2.boundingRect(c)
    cv2.rectangle(img, (x, y), (x + w, y + h), (0, 0, 255), 2)
cv2.imwrite('transformed_image_0.png', img)
""", ["other", "editing"], ["Convert Color", "Color Filter", "Morphology", "Draw Contours", "Measure Area"]),
    ("""
from PIL import Image, ImageDraw
im = Image.open('a.png').convert('RGB')
d = ImageDraw.Draw(im)
d.line([(10, 10), (200, 120)], fill='red', width=3)
d.ellipse([50, 50, 90, 90], outline='blue')
im.save('transformed_image_0.png')
""", ["editing"], ["Draw Line", "Draw Circle"]),
    ("""
import cv2
img = cv2.imread('in.png')
gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
_, th = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
n, labels, stats, centroids = cv2.connectedComponentsWithStats(th, connectivity=8)
print(n - 1)
""", ["other"], ["Convert Color", "Binarize", "Connected Components"]),
    ("""
import cv2
img = cv2.imread('in.png')
rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
print(rgb.shape)
""", [], []),
    ("""
import numpy as np
from PIL import Image
arr = np.array(Image.open('in.png'))
rot = np.rot90(arr, k=3)
Image.fromarray(rot).save('out.png')
""", ["rotate"], ["Rotate"]),
    ("""
import numpy as np
from PIL import Image
arr = np.asarray(Image.open('in.png'))
mirrored = arr[:, ::-1]
Image.fromarray(mirrored).save('out.png')
""", ["flip"], ["Flip"]),
    ("""
from PIL import Image, ImageOps
im = Image.open('receipt.jpg')
im = ImageOps.exif_transpose(im)
gray = ImageOps.grayscale(im)
eq = ImageOps.autocontrast(gray)
eq.save('transformed_image_0.png')
""", ["rotate", "other", "contrast"], ["Rotate", "Convert Color", "Histogram Eq"]),
    ("""
from PIL import Image, ImageFilter, ImageEnhance
im = Image.open('doc.png')
sharp = ImageEnhance.Sharpness(im).enhance(2.5)
median = sharp.filter(ImageFilter.MedianFilter(size=3))
unsharp = median.filter(ImageFilter.UnsharpMask(radius=2, percent=200, threshold=3))
inv = ImageOps.invert(unsharp)
""", ["other"], ["Sharpen", "Blur"]),
    ("""
import cv2
img = cv2.imread('in.png', 0)
edges = cv2.Canny(img, 50, 150)
lines = cv2.HoughLinesP(edges, 1, 3.14159 / 180, 80, minLineLength=40, maxLineGap=5)
for l in lines[:5]:
    x1, y1, x2, y2 = l[0]
    cv2.line(img, (x1, y1), (x2, y2), 255, 2)
""", ["other", "editing"], ["Edge Detect", "Line Detect", "Draw Line"]),
    ("""
import cv2
import numpy as np
img = cv2.imread('coins.png')
gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
blur = cv2.medianBlur(gray, 5)
circles = cv2.HoughCircles(blur, cv2.HOUGH_GRADIENT, dp=1.2, minDist=30, param1=100, param2=40)
for (x, y, r) in np.round(circles[0]).astype(int):
    cv2.circle(img, (x, y), r, (0, 255, 0), 2)
""", ["other", "editing"], ["Convert Color", "Blur", "Circle Detect", "Draw Circle"]),
    ("""
import cv2
img = cv2.imread('scene.png')
tmpl = cv2.imread('logo.png')
res = cv2.matchTemplate(img, tmpl, cv2.TM_CCOEFF_NORMED)
_, score, _, loc = cv2.minMaxLoc(res)
print(score, loc)
""", ["other"], ["Template Match"]),
    ("""
import cv2
img = cv2.imread('noisy.png')
den = cv2.fastNlMeansDenoisingColored(img, None, 10, 10, 7, 21)
clahe = cv2.createCLAHE(clipLimit=2.0, tileGridSize=(8, 8))
lab = cv2.cvtColor(den, cv2.COLOR_BGR2LAB)
""", ["other", "contrast"], ["Denoise", "Histogram Eq", "Convert Color"]),
    ("""
import numpy as np
from PIL import Image
a = np.array(Image.open('dark.png')).astype(np.float32)
out = np.clip(a * 1.4 + 25, 0, 255).astype(np.uint8)
Image.fromarray(out).save('transformed_image_0.png')
""", ["contrast", "brightness"], ["Adjust Brightness"]),
    ("""
from PIL import Image
im = Image.open('scan.png').convert('L')
bw = im.point(lambda p: 255 if p > 140 else 0)
bw.save('transformed_image_0.png')
""", ["other"], ["Convert Color", "Binarize"]),
    ("""
import cv2
img = cv2.imread('big.png')
small = cv2.resize(img, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
down = cv2.pyrDown(small)
""", ["resize"], ["Resize", "Image Pyramid"]),
    ("""
import cv2
img = cv2.imread('damaged.png')
gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
_, mask = cv2.threshold(gray, 240, 255, cv2.THRESH_BINARY)
fixed = cv2.inpaint(img, mask, 3, cv2.INPAINT_TELEA)
""", ["other", "editing"], ["Convert Color", "Binarize", "Inpaint"]),
    ("""
import cv2
img = cv2.imread('shape.png', 0)
cnts, _ = cv2.findContours(img, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
c = max(cnts, key=cv2.contourArea)
peri = cv2.arcLength(c, True)
approx = cv2.approxPolyDP(c, 0.02 * peri, True)
print(len(approx))
""", ["other"], ["Draw Contours", "Measure Perimeter", "Approximate Polygon"]),
    ("""
import cv2
img = cv2.imread('in.png')
up = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
tile = up[0:200, 0:300]
""", ["rotate", "crop"], ["Rotate", "Crop"]),
    ("""
import cv2
import numpy as np
img = cv2.imread('in.png')
M = np.float32([[1, 0, 40], [0, 1, 0]])
shifted = cv2.warpAffine(img, M, (img.shape[1], img.shape[0]))
""", ["other"], ["Translate"]),
    ("""
from PIL import Image, ImageOps
im = Image.open('sign.jpg')
m = ImageOps.mirror(im)
m.thumbnail((512, 512))
""", ["flip", "resize"], ["Flip", "Resize"]),
    ("""
import cv2
gray = cv2.imread('in.png', cv2.IMREAD_GRAYSCALE)
sx = cv2.Sobel(gray, cv2.CV_64F, 1, 0, ksize=3)
mag = cv2.convertScaleAbs(sx)
""", ["other", "brightness"], ["Compute Gradients", "Adjust Brightness"]),
    ("""
import cv2
img = cv2.imread('in.png')
canvas = img.copy()
canvas[50:100, 60:160] = (0, 0, 255)
cv2.putText(canvas, 'A', (10, 30), cv2.FONT_HERSHEY_SIMPLEX, 1, (255, 255, 255), 2)
""", ["editing"], []),
    ("""
import cv2
img = cv2.imread('in.png')
brighter = cv2.add(img, (50, 50, 50, 0))
""", ["brightness"], ["Adjust Brightness"]),
    ("""
import cv2 as cv
im = cv.imread('x.png')
g = cv.GaussianBlur(im, (5, 5), 0)
e = cv.erode(g, None, iterations=2)
""", ["other"], ["Blur", "Morphology"]),
    ("""
from PIL import Image
im = Image.open('a.png')
w, h = im.size
tiles = [im.crop((i * w // 3, 0, (i + 1) * w // 3, h)) for i in range(3)]
for i, t in enumerate(tiles):
    t.save(f'transformed_image_{i}.png')
""", ["crop"], ["Crop"]),
    ("""
import numpy as np
import cv2
img = cv2.imread('in.png', 0)
f = np.fft.fft2(img)
fshift = np.fft.fftshift(f)
binary = np.where(img > 128, 255, 0).astype(np.uint8)
""", ["other"], ["Frequency Transform", "Binarize"]),
    ("""
contours = sorted(contours, key=len)[::-1]
best = stats[1:, :4]
print('no image operations here')
""", [], []),
    ("print('hello'", [], []),
    ("""
import cv2
from PIL import Image, ImageDraw
patch = cv2.imread('page.png')[120:480, 40:600]
im = Image.open('page.png')
ImageDraw.Draw(im).rectangle([10, 10, 50, 50], outline='red')
""", ["crop", "editing"], ["Crop", "Draw Contours"]),
]


@pytest.mark.parametrize(("code", "cats", "groups"), CORPUS, ids=[f"snippet{i}" for i in range(len(CORPUS))])
def test_code_corpus(code: str, cats: list[str], groups: list[str]) -> None:
    ops = code_operations(code)
    assert labelled(ops) == (cats, groups), [(o.line, o.api) for o in ops]


def test_corpus_is_big_enough_and_uses_known_labels() -> None:
    assert len(CORPUS) >= 30
    for _, cats, groups in CORPUS:
        assert set(cats) <= set(CATEGORIES) and set(groups) <= set(TOOL_GROUPS)


def test_every_interface_tool_has_a_vtc_group() -> None:
    assert INTERFACE_OPS == set(OP_ORDER)  # the recognizer knows exactly the tools toolsight offers
    for name in OPENCV_TOOL_NAMES:
        ops = call_operations(name, {"image": "img-1", "param": {}})
        assert [o.api for o in ops] == [name]
        cats, groups = labelled(ops)
        assert groups and set(groups) <= set(TOOL_GROUPS), name
        assert cats and set(cats) <= set(CATEGORIES), name


def test_interface_calls_refined_by_arguments() -> None:
    assert vtb("opencv_rotate", '{"image": "a", "param": {"angle": 90}}') == ["rotate"]
    assert vtb("opencv_zoom_in", {"param": {"x": 0, "y": 0, "width": 5, "height": 5}}) == ["crop"]
    assert vtb("opencv_zoom_in", {"param": {"width": 5, "height": 5, "scale": 3}}) == ["crop", "resize"]
    assert vtb("opencv_zoom_in", {"param": {"target_width": 50}}) == ["crop", "resize"]
    assert vtc("opencv_zoom_in", {"param": {"scale": 3}}) == ["Zoom in"]
    assert vtb("opencv_convertscaleabs", {"param": {"alpha": 1.5}}) == ["contrast"]
    assert vtb("opencv_convertscaleabs", {"param": {"alpha": 2, "beta": 9}}) == ["contrast", "brightness"]
    assert vtb("opencv_convertscaleabs", {"param": json.dumps({"beta": 20})}) == ["brightness"]
    assert vtb("opencv_convertscaleabs", "not json") == ["brightness"]


def test_code_and_other_tools() -> None:
    code = "from PIL import Image\nImage.open('a.png').crop((0, 0, 5, 5)).save('transformed_image_0.png')"
    ops = call_operations("python_image_processing", json.dumps({"code": code}))
    assert labelled(ops) == (["crop"], ["Crop"]) and ops[0].line == 2 and ops[0].api == "Image.crop"
    assert vtc("code_interpreter", {"reasoning": "r", "code": code}) == ["Crop"]
    assert vtb("crop", {"image": "a", "bbox": [0, 0, 1, 1]}) == ["crop"]
    assert vtc("image_zoom_in_tool", {"bbox_2d": [0, 0, 500, 500]}) == ["Zoom in"]
    assert vtb("image_zoom_in_tool", {"bbox_2d": [0, 0, 500, 500]}) == ["crop", "resize"]
    assert call_operations("calculator", {"expression": "1+1"}) == ()
    assert classify_call("calculator", {"expression": "1+1"}, VOCABULARIES) == {
        CATEGORY_VOCABULARY.name: [], TOOL_GROUP_VOCABULARY.name: []}
    assert vtb("opencv_flip", {}) == ["flip"]


def test_hostile_code_gives_no_operations() -> None:
    assert code_operations("x = " + "(" * 5000 + ")" * 5000) == ()
    assert code_operations("\x00") == ()
    assert call_operations("python_interpreter", {"code": 42}) == ()
