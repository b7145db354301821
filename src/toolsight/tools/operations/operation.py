"""One recognised image operation: where it happened, which API did it, what its arguments say.

An `Operation` carries no benchmark's label; a `Vocabulary` (`vocabulary.py`) turns operations
into labels. `api` is a canonical name:

* a library call with its import aliases resolved: `cv2.GaussianBlur`, `PIL.ImageOps.mirror`,
  `numpy.rot90` (`np.`/`cv.`/`from PIL import ImageOps as IO` all resolve to these);
* a method of a PIL image or of an `ImageDraw.Draw` object: `Image.crop`, `Image.convert`,
  `ImageDraw.line`;
* NumPy slicing of an image: `slice` (a region is read), `slice[::-1]` (an axis is reversed),
  `slice assignment` (a region is written);
* one of the OpenCV interface tools: `opencv_zoom_in`, `opencv_convertscaleabs`, ...;
* a crop or zoom tool recognised by its name: `crop tool`, `zoom tool`.

`qualifiers` say what the arguments add, where a vocabulary may want to label the same API
differently (constants below).
"""

from __future__ import annotations

from dataclasses import dataclass

#: a zoom that also resamples (a scale other than 1, or a target width / height)
SCALED = "scaled"
#: intensities multiplied by a constant: `convertScaleAbs` alpha != 1, `img * 1.3`, `p / 2`
SCALE = "scale"
#: a constant added to intensities: `convertScaleAbs` beta != 0, `img + 40`, `cv2.add(img, 50)`
SHIFT = "shift"
#: `cv2.warpAffine` in code that builds a rotation matrix (`cv2.getRotationMatrix2D`)
ROTATION = "rotation"
#: `Image.transpose` with a FLIP_* method
FLIP = "flip"
#: `Image.transpose` with a ROTATE_* / TRANSPOSE / TRANSVERSE method
ROTATE = "rotate"
#: a comparison maps pixels to two values: `np.where(img > t, ...)`, `im.point(lambda p: p > t and 255)`
THRESHOLD = "threshold"
#: prefix of `Image.convert`'s target mode: `mode=L`, `mode=1`, `mode=HSV`
MODE = "mode="

CROP_TOOL = "crop tool"
ZOOM_TOOL = "zoom tool"
SLICE = "slice"
SLICE_FLIP = "slice[::-1]"
SLICE_ASSIGNMENT = "slice assignment"
INTERFACE_PREFIX = "opencv_"


@dataclass(frozen=True)
class Operation:
    """One operation: its code line (0 for a tool call), canonical API name and qualifiers."""

    line: int
    api: str
    qualifiers: frozenset[str] = frozenset()

    def has(self, qualifier: str) -> bool:
        return qualifier in self.qualifiers

    @property
    def mode(self) -> str | None:
        """`Image.convert`'s target mode, when the code gives it as a constant."""
        return next((q.removeprefix(MODE) for q in self.qualifiers if q.startswith(MODE)), None)
