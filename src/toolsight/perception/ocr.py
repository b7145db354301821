"""OCR engines: RapidOCR (the offline default; ONNX models shipped inside its wheel: `rapidocr` 3.x,
which the `perception` extra installs, or `rapidocr-onnxruntime` 1.x when installed — see `PACKAGES`)
and Tesseract (`pytesseract` + the Debian `tesseract-ocr` binary, when installed).

Both return `OcrResult` lines with a 4-point box and a confidence in 0..1. Engines are created once
per process (RapidOCR loads three ONNX sessions, about half a second) and used under a lock: the
recognisers are CPU-bound and the machine's cores are shared by concurrent tasks anyway.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import shutil
import threading
from typing import Any, Protocol

import cv2

from toolsight.perception.types import ImageInput, OcrLine, OcrResult, PerceptionError


class OcrEngine(Protocol):
    name: str

    async def read(self, image: ImageInput) -> OcrResult: ...

    def describe(self) -> dict[str, object]: ...


#: RapidOCR's packages, in the order tried: 1.x (PP-OCRv4 models; it requires the non-headless OpenCV, so
#: toolsight's Makefile adds it with --no-deps) and 3.x (`rapidocr`, PP-OCRv6 small models, headless
#: OpenCV: what the `perception` extra installs). Both ship their models inside the wheel.
PACKAGES = ("rapidocr-onnxruntime", "rapidocr")


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self, package: str | None = None) -> None:
        """`package`: "rapidocr" or "rapidocr-onnxruntime"; None takes the second when it is installed
        (its PP-OCRv4 models read small isolated digits better) and the first otherwise."""
        self.package = ""
        make: Any = None
        for name in ([package] if package else list(PACKAGES)):
            try:
                module = importlib.import_module(name.replace("-", "_"))
            except ImportError:
                continue
            self.package, make = name, module.RapidOCR
            break
        if not self.package:
            raise PerceptionError(
                f"RapidOCR is not installed{f' ({package})' if package else ''}: pip install 'toolsight[perception]' "
                "(it brings the `rapidocr` package and its ONNX models)")
        # its INFO and WARNING lines ("Using …onnx", "result is empty") would mix with the progress on stderr
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        self._engine: Any = make()
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        self._lock = threading.Lock()

    def _raw(self, pixels: Any) -> list[tuple[Any, str, float]]:
        """(4-point box, text, score) per line, from either package's result shape."""
        out = self._engine(pixels)
        if self.package == "rapidocr-onnxruntime":
            result, _ = out
            return [(box, str(text), float(score)) for box, text, score in result or []]
        if out.boxes is None or out.txts is None or out.scores is None:  # nothing found
            return []
        return [(box, str(text), float(score)) for box, text, score in zip(out.boxes, out.txts, out.scores,
                                                                            strict=True)]

    def run(self, image: ImageInput) -> OcrResult:
        with self._lock:
            result = self._raw(image.pixels)
        lines: list[OcrLine] = []
        for box, text, score in result:
            pts = [(float(p[0]), float(p[1])) for p in box]
            lines.append(OcrLine(text=str(text), score=round(float(score), 4), box=pts))
        lines.sort(key=lambda ln: (round(ln.bbox[1] / 10), ln.bbox[0]))
        return OcrResult(lines=lines, backend=self.name, width=image.width, height=image.height)

    async def read(self, image: ImageInput) -> OcrResult:
        return await asyncio.to_thread(self.run, image)

    def describe(self) -> dict[str, object]:
        from importlib.metadata import version

        return {"backend": self.name, "package": self.package, "version": version(self.package)}


class TesseractEngine:
    name = "tesseract"

    def __init__(self, lang: str = "eng") -> None:
        if shutil.which("tesseract") is None:
            raise PerceptionError("tesseract is not installed (Debian: apt-get install tesseract-ocr)")
        try:
            import pytesseract
        except ImportError:
            raise PerceptionError("the Tesseract engine needs pytesseract: pip install 'toolsight[perception]'") from None
        self._tess: Any = pytesseract
        self.lang = lang

    def run(self, image: ImageInput) -> OcrResult:
        rgb = cv2.cvtColor(image.pixels, cv2.COLOR_BGR2RGB)
        data = self._tess.image_to_data(rgb, lang=self.lang, output_type=self._tess.Output.DICT)
        groups: dict[tuple[int, int, int], list[int]] = {}
        for i, word in enumerate(data["text"]):
            if str(word).strip() and float(data["conf"][i]) >= 0:
                groups.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(i)
        lines: list[OcrLine] = []
        for idx in groups.values():
            x1 = min(data["left"][i] for i in idx)
            y1 = min(data["top"][i] for i in idx)
            x2 = max(data["left"][i] + data["width"][i] for i in idx)
            y2 = max(data["top"][i] + data["height"][i] for i in idx)
            text = " ".join(str(data["text"][i]).strip() for i in idx)
            conf = sum(float(data["conf"][i]) for i in idx) / len(idx) / 100.0
            lines.append(OcrLine(text=text, score=round(conf, 4),
                                 box=[(x1, y1), (x2, y1), (x2, y2), (x1, y2)]))
        lines.sort(key=lambda ln: (round(ln.bbox[1] / 10), ln.bbox[0]))
        return OcrResult(lines=lines, backend=self.name, width=image.width, height=image.height)

    async def read(self, image: ImageInput) -> OcrResult:
        return await asyncio.to_thread(self.run, image)

    def describe(self) -> dict[str, object]:
        return {"backend": self.name, "lang": self.lang, "binary": shutil.which("tesseract") or ""}


_ENGINES: dict[str, OcrEngine] = {}
_LOCK = threading.Lock()
ENGINES = ("rapidocr", "tesseract")


def get_ocr(name: str | None = None) -> OcrEngine:
    """The OCR engine `name` (default: `$TOOLSIGHT_OCR`, else RapidOCR, else Tesseract), built once."""
    import os

    wanted = name or os.environ.get("TOOLSIGHT_OCR") or ""
    if wanted and wanted not in ENGINES:
        raise PerceptionError(f"unknown OCR engine {wanted!r} (TOOLSIGHT_OCR): use one of {', '.join(ENGINES)}")
    order = [wanted] if wanted else list(ENGINES)
    problems: list[str] = []
    with _LOCK:
        for n in order:
            if n in _ENGINES:
                return _ENGINES[n]
            try:
                engine: OcrEngine = RapidOcrEngine() if n == "rapidocr" else TesseractEngine()
            except PerceptionError as exc:
                problems.append(str(exc))
                continue
            _ENGINES[n] = engine
            return engine
    raise PerceptionError("no OCR engine available: " + "; ".join(problems))
