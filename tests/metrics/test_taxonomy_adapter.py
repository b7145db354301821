"""Image-operation categories of recorded calls, through the real taxonomy (no stand-in module)."""

from __future__ import annotations

import json

from toolsight.metrics import taxonomy


def test_interface_crop_zoom_and_code_calls() -> None:
    code = "from PIL import Image\nimg = Image.open(p)\nimg = img.rotate(90)\nimg.save('o.png')"
    assert taxonomy.call_operations("python_image_processing", json.dumps({"code": code})) == (["rotate"], ["Rotate"])
    assert taxonomy.call_operations("zoom_in", "{}") == (["crop", "resize"], ["Zoom in"])
    assert taxonomy.call_operations("crop", json.dumps({"image": "a", "box": [0, 0, 4, 4]})) == (["crop"], ["Crop"])
    flip = "import cv2\nimg = cv2.imread('a.png')\nimg = cv2.flip(img, 1)\ncv2.imwrite('b.png', img)"
    cats, _ = taxonomy.call_operations("python", json.dumps({"code": flip}))
    assert cats == ["flip"]


def test_calls_without_an_image_operation_have_no_category() -> None:
    assert taxonomy.call_operations("calculator", json.dumps({"expression": "1+1"})) == ([], [])
    assert taxonomy.call_categories("calculator", "{not json") == []
    assert taxonomy.call_categories("python", json.dumps({"code": "def broken(:"})) == []  # unparsable code
    assert taxonomy.call_categories("python", json.dumps({"code": "print(1 + 1)"})) == []


def test_results_are_fresh_lists_each_time() -> None:
    # the cache holds tuples: a caller mutating its list must not change the next answer
    first = taxonomy.call_categories("zoom_in", "{}")
    first.append("bogus")
    assert taxonomy.call_categories("zoom_in", "{}") == ["crop", "resize"]
