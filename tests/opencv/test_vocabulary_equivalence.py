"""The generic recognizer with the two benchmark vocabularies labels every call exactly as the old
two-vocabulary taxonomy did (`legacy_taxonomy`, a frozen copy, is the oracle).

The corpus: the 35 interface tools with and without the `opencv_` prefix under argument variants
(zoom scales, convertScaleAbs alpha / beta, bad JSON, a `param` given as a string or a list), the
crop and zoom tools, the hand-labelled snippets of `test_opencv_taxonomy`, one snippet per library
call, method and drawing call the old taxonomy knew (under several import styles), and the
argument-dependent cases (cvtColor flags, transpose methods, convert modes, point / eval / clip /
where, add / subtract, warpAffine, slicing forms, late imports). Each case is checked on the labels
of the whole call (each label once, in order) and operation by operation (line, API, labels).
"""

from __future__ import annotations

import json
from typing import Any

import legacy_taxonomy as legacy
import pytest
from test_opencv_taxonomy import CORPUS

from toolsight.benchmarks.visualtoolbench.taxonomy import CATEGORY_VOCABULARY
from toolsight.benchmarks.vtc_bench.taxonomy import TOOL_GROUP_VOCABULARY
from toolsight.tools.operations import Operation, call_operations, classify_call
from toolsight.tools.operations.operation import CROP_TOOL, ZOOM_TOOL

VOCABULARIES = (CATEGORY_VOCABULARY, TOOL_GROUP_VOCABULARY)
Case = tuple[str, Any]


def _interface_cases() -> list[Case]:
    params: list[Any] = [
        None, {}, {"angle": 90}, {"scale": 1}, {"scale": 1.0}, {"scale": 2}, {"scale": "3"}, {"scale": None},
        {"target_width": 40}, {"target_height": 40}, {"alpha": 1}, {"alpha": 1.0}, {"alpha": 1.5}, {"alpha": "x"},
        {"beta": 0}, {"beta": 9}, {"beta": -3}, {"beta": "bad"}, {"alpha": 2, "beta": 9}, {"alpha": 1, "beta": 0},
        [1, 2], "not json",
    ]
    cases: list[Case] = []
    for op in legacy.INTERFACE:
        for name in (f"opencv_{op}", op, f" opencv_{op} "):
            cases.append((name, {"image": "img-1"}))
            cases.append((name, "not json"))
            cases.append((name, None))
            for p in params:
                cases.append((name, {"image": "img-1", "param": p}))
                cases.append((name, json.dumps({"image": "img-1", "param": json.dumps(p) if p is not None else p})))
    return cases


def _tool_cases() -> list[Case]:
    names = [*sorted(legacy.CROP_TOOLS | legacy.ZOOM_TOOLS), "calculator", "web_search", "opencv_unknown", ""]
    return [(n, a) for n in names for a in ({}, {"bbox": [0, 0, 1, 1]}, "{broken", None)]


def _call_snippet(api: str) -> list[str]:
    """Code calling one known library function under several import styles."""
    mod, _, attr = api.rpartition(".")
    if api.startswith("PIL."):
        sub = api.split(".")[1]
        rest = api.removeprefix(f"PIL.{sub}.")
        return [f"from PIL import {sub}\nout = {sub}.{rest}(img)",
                f"import PIL.{sub}\nout = PIL.{sub}.{rest}(img)",
                f"out = X.{rest}(img)\nfrom PIL import {sub} as X",  # an import in a later cell
                f"from PIL import Image\nim = Image.open('a.png')\nim2 = im.filter({sub}.{rest})",
                f"from PIL import Image\nim = Image.open('a.png')\nim2 = im.filter({sub}.{rest}(2))"]
    if api.startswith("cv2."):
        rest = api.removeprefix("cv2.")
        return [f"import cv2\nout = cv2.{rest}(img, 3)", f"import cv2 as cv\nout = cv.{rest}(img)",
                f"from cv2 import {attr}\nout = {attr}(img)", f"out = cv2.cv2.{rest}(img)"]
    rest = api.removeprefix("numpy.")
    return [f"import numpy as np\nout = np.{rest}(img)", f"import numpy\nout = numpy.{rest}(img)",
            f"from {mod} import {attr}\nout = {attr}(img)", f"out = np.core.{rest}(img)"]


def _code_snippets() -> list[str]:
    snippets = [code for code, _, _ in CORPUS]
    for api in legacy.CALLS:
        snippets += _call_snippet(api)
    for meth in [*legacy.METHODS, "filter", "point", "convert", "transpose", "save", "copy"]:
        snippets += [f"from PIL import Image\nim = Image.open('a.png')\nout = im.{meth}((0, 0, 4, 4))",
                     f"out = Image.open('a.png').{meth}((0, 0, 4, 4))",
                     f"import numpy as np\nout = np.{meth}(a, 3)", f"out = self.im.{meth}(2)"]
    for meth in [*legacy.DRAW_METHODS, "bitmap", "textbbox"]:
        snippets += [f"from PIL import ImageDraw\nd = ImageDraw.Draw(im)\nd.{meth}([0, 0, 4, 4])",
                     f"from PIL import ImageDraw\nImageDraw.Draw(im).{meth}([0, 0, 4, 4])",
                     f"import PIL.ImageDraw as D\ncanvas = D.Draw(im)\ncanvas.{meth}((1, 1))",
                     f"other.{meth}([0, 0, 4, 4])"]
    for flag in ("FLIP_LEFT_RIGHT", "FLIP_TOP_BOTTOM", "ROTATE_90", "ROTATE_270", "TRANSPOSE", "TRANSVERSE",
                 "Transpose.ROTATE_180", "Transpose.FLIP_LEFT_RIGHT", "AFFINE"):
        snippets.append(f"from PIL import Image\nim = Image.open('a')\nout = im.transpose(Image.{flag})")
    snippets.append("out = im.transpose(method)")
    for mode in [*legacy.CONVERT_MODES, "RGB", "RGBA", "F", "I;16"]:
        snippets.append(f"from PIL import Image\nim = Image.open('a').convert({mode!r})")
    snippets += ["im = im.convert(mode)", "im = im.convert()"]
    for fn in ("lambda p: 255 if p > 128 else 0", "lambda p: p * 1.5", "lambda p: p + 30", "lambda p: p * 1.2 - 10",
               "lambda p: table[p]", "curve", "lambda p: p // 2", "lambda p: (p > 3) * 255"):
        snippets += [f"out = im.point({fn})", f"from PIL import Image\nout = Image.eval(im, {fn})"]
    snippets += ["from PIL import Image\nout = Image.eval(im)", "out = im.point()"]
    for arg in ("a * 1.2", "a + 3", "a", "a * b", "1.5 * a - 10", "(a - 20) / 2", "a * (1.1, 1.2, 1.3)"):
        snippets.append(f"import numpy as np\nout = np.clip({arg}, 0, 255)")
    snippets += ["import numpy as np\nout = np.clip()", "import numpy as np\nb = np.where(a > 3, 255, 0)",
                 "import numpy as np\nb = np.where(mask, 255, 0)", "import numpy as np\nb = np.where()"]
    for flag in ("COLOR_BGR2RGB", "COLOR_RGB2BGR", "COLOR_BGRA2RGB", "COLOR_RGBA2BGRA", "COLOR_BGR2GRAY",
                 "COLOR_BGR2HSV", "COLOR_GRAY2BGR", "COLOR_BGR2LAB"):
        snippets.append(f"import cv2\nout = cv2.cvtColor(img, cv2.{flag})")
    snippets += ["import cv2\nout = cv2.cvtColor(img, flag)", "import cv2\nout = cv2.cvtColor(img)"]
    for args in ("img", "img, alpha=1", "img, alpha=1.0", "img, alpha=2", "img, alpha=a", "img, beta=0",
                 "img, beta=5", "img, beta=b", "img, alpha=1.3, beta=20", "img, None, 1.5, 0", "img, None, 1, 10",
                 "img, dst, 2", "img, None, None, 5", "img, alpha=-1", "img, beta=-0"):
        snippets.append(f"import cv2\nout = cv2.convertScaleAbs({args})")
    for fn in ("add", "subtract"):
        for args in ("img, 50", "img, (1, 2, 3)", "img, other", "img, -5", "img", "img, (1, x)"):
            snippets.append(f"import cv2\nout = cv2.{fn}({args})")
    snippets += [
        "import cv2\nout = cv2.warpAffine(img, M, (4, 4))",
        "import cv2\nM = cv2.getRotationMatrix2D((2, 2), 30, 1)\nout = cv2.warpAffine(img, M, (4, 4))",
        "import cv2\nout = cv2.warpAffine(img, M, (4, 4))\nM = cv2.getRotationMatrix2D((2, 2), 30, 1)",
        "import cv2\nM = cv2.getRotationMatrix2D((2, 2), 30, 1)",
        "import cv2\na = cv2.warpAffine(img, T, (4, 4))\nR = cv2.getRotationMatrix2D(c, 9, 1)\nb = cv2.warpAffine(a, R, s)",
    ]
    for expr in ("img[0:10, 0:20]", "img[:, :]", "img[::-1]", "img[:, ::-1]", "img[..., ::-1]", "img[::-1, :, :]",
                 "img[:, :, ::-1]", "stats[1:, :4]", "arr[1:3]", "cv2.imread('x')[0:5, 0:5]",
                 "np.array(im)[::-1]", "np.asarray(im)[2:4, 1:]", "obj.attr[1:2, 3:4]", "a[0][1:2, 2:3]",
                 "box_list[0:2, 0:2]", "img[:, :, 0]", "img[::2, ::2]", "img[y0:y1, x0:x1, :]", "f(x)[0:2, 0:2]",
                 "img[1:2, ::-1]"):
        snippets += [f"import cv2\nimport numpy as np\nout = {expr}", f"{expr} = 0"]
    snippets += ["print('hello'", "x = " + "(" * 300 + ")" * 300, "", "import cv2\ncv2.boundingRect(c)",
                 "import numpy as np\nm = np.mean(img)"]
    return snippets


def _cases() -> list[Case]:
    snippets = _code_snippets()
    whole = "\n".join(s for s in snippets if _parses(s))  # one long call with every operation in it
    code_cases: list[Case] = [("python_image_processing", {"code": c}) for c in snippets]
    code_cases += [("python_interpreter", json.dumps({"code": c})) for c in snippets[::7]]
    code_cases += [("code_interpreter", {"code": whole}), ("python", {"code": 42}), ("python", {"code": None})]
    return _interface_cases() + _tool_cases() + code_cases


def _parses(code: str) -> bool:
    try:
        compile(code, "<snippet>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


CASES = _cases()


def _legacy_api(step: legacy.OpStep) -> str:
    """The old step's API under the new naming (crop / zoom tools were named by the tool)."""
    if step.api in legacy.CROP_TOOLS:
        return CROP_TOOL
    if step.api in legacy.ZOOM_TOOLS:
        return ZOOM_TOOL
    return step.api


def _per_operation(ops: tuple[Operation, ...]) -> list[tuple[int, str, tuple[str, ...], tuple[str, ...]]]:
    return [(o.line, o.api, CATEGORY_VOCABULARY.labels(o), TOOL_GROUP_VOCABULARY.labels(o)) for o in ops]


def test_the_corpus_is_broad() -> None:
    assert len(CASES) > 3000
    assert sum(1 for n, _ in CASES if n.strip().startswith("opencv_")) > 35 * 40


@pytest.mark.parametrize("chunk", range(8))
def test_labels_and_operations_match_the_old_taxonomy(chunk: int) -> None:
    mismatches: list[object] = []
    for name, args in CASES[chunk::8]:
        old = legacy.classify_call(name, args)
        new = classify_call(name, args, VOCABULARIES)
        if (new[CATEGORY_VOCABULARY.name], new[TOOL_GROUP_VOCABULARY.name]) != (old.vtb, old.vtc):
            mismatches.append((name, args, old.vtb, old.vtc, new))
            continue
        ops = call_operations(name, args)
        expected = [(s.line, _legacy_api(s), s.vtb, s.vtc) for s in old.steps]
        if _per_operation(ops) != expected:
            mismatches.append((name, args, expected, _per_operation(ops)))
    assert not mismatches, mismatches[:3]


def test_every_label_the_corpus_produces_is_in_its_vocabulary_order() -> None:
    seen: dict[str, set[str]] = {v.name: set() for v in VOCABULARIES}
    for name, args in CASES:
        for vocab, labels in classify_call(name, args, VOCABULARIES).items():
            seen[vocab].update(labels)
    for v in VOCABULARIES:
        assert seen[v.name] <= set(v.order), v.name
    assert seen[CATEGORY_VOCABULARY.name] == set(CATEGORY_VOCABULARY.order)  # the corpus reaches every category
    assert len(seen[TOOL_GROUP_VOCABULARY.name]) == len(TOOL_GROUP_VOCABULARY.order)
