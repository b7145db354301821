"""OCR engines: RapidOCR (PP-OCRv4 ONNX models shipped inside the `rapidocr-onnxruntime` wheel, the
offline default) and Tesseract (`pytesseract` + the Debian `tesseract-ocr` binary, when installed).

Both return `OcrResult` lines with a 4-point box and a confidence in 0..1. Engines are created once
per process (RapidOCR loads three ONNX sessions, about half a second) and used under a lock: the
recognisers are CPU-bound and the machine's cores are shared by concurrent tasks anyway.
"""

from __future__ import annotations

import asyncio
import shutil
import threading
from typing import Any, Protocol

import cv2

from toolsight.perception.types import ImageInput, OcrLine, OcrResult, PerceptionError


class OcrEngine(Protocol):
    name: str

    async def read(self, image: ImageInput) -> OcrResult: ...

    def describe(self) -> dict[str, object]: ...


class RapidOcrEngine:
    name = "rapidocr"

    def __init__(self) -> None:
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError:
            raise PerceptionError(
                "RapidOCR is not installed: `make .venv/.installed-stamp` installs it, or "
                "pip install --no-deps rapidocr-onnxruntime==1.4.4 plus 'toolsight[perception]'"
            ) from None
        self._engine: Any = RapidOCR()
        self._lock = threading.Lock()

    def run(self, image: ImageInput) -> OcrResult:
        with self._lock:
            result, _ = self._engine(image.pixels)
        lines: list[OcrLine] = []
        for box, text, score in result or []:
            pts = [(float(p[0]), float(p[1])) for p in box]
            lines.append(OcrLine(text=str(text), score=round(float(score), 4), box=pts))
        lines.sort(key=lambda ln: (round(ln.bbox[1] / 10), ln.bbox[0]))
        return OcrResult(lines=lines, backend=self.name, width=image.width, height=image.height)

    async def read(self, image: ImageInput) -> OcrResult:
        return await asyncio.to_thread(self.run, image)

    def describe(self) -> dict[str, object]:
        from importlib.metadata import version

        return {"backend": self.name, "version": version("rapidocr-onnxruntime")}


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
