"""The per-task ArtifactStore: images as content-addressed files in the task workspace, with provenance.

Every image is addressed by its content hash (`img-3fa9c2d1e0b4`) and carries the ids of the
artifacts it was made from. Tools resolve references (an id or a workspace file name, never a host
path) through the store, which records what each call consumed.

A lazy store (`lazy=True`) makes its workspace folder only when something asks for it (a tool
writing an image, model code, a loop reading files by name): its input images are held in memory
(and read from the run's shared input copy, `add_input`) until then, and written into the folder
when it is made. A task that never uses a tool creates no file of its own: on this kind of
machine a folder and a file cost ~1 ms of kernel time per task, more than the model call.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from toolsight import imaging
from toolsight.log.artifact import Artifact
from toolsight.tools.result import ToolError

if TYPE_CHECKING:  # numpy loads with OpenCV when a tool first needs pixels: ~0.1 s off every start-up
    import numpy as np

def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of encoded image bytes, checked by the guarded decoder (`toolsight.imaging`:
    pixel, byte and format caps; a PNG's size straight from its IHDR chunk). Raises ImageRejected."""
    return imaging.check(data).size

# Pillow's decompression-bomb limit for everything toolsight opens is set by `imaging.pil()`, which
# imports Pillow when an image must be decoded (the common PNG needs no Pillow here)


class ArtifactStore:
    """The artifacts of one task, stored as files in its workspace, addressed by content hash."""

    def __init__(self, workspace: Path, *, lazy: bool = False,
                 on_write: Callable[[str, bytes], None] | None = None) -> None:
        """`lazy`: make the folder the first time `workspace` is asked for (a folder left there by a killed attempt is
        replaced then); `on_write(path, data)` hears of every image file the store writes (the run's
        encoder cache)."""
        self._dir = workspace
        self.on_write = on_write
        self._made = not lazy
        if not lazy:
            workspace.mkdir(parents=True, exist_ok=True)
        self._by_id: dict[str, Artifact] = {}
        self._order: list[str] = []
        self._resolved: list[str] | None = None
        #: inputs of a lazy store not yet in its folder: (workspace name, bytes) — two names may hold
        #: the same image — and each one's shared copy by artifact id
        self._held: list[tuple[str, bytes]] = []
        self._shared: dict[str, Path] = {}

    @property
    def workspace(self) -> Path:
        """The task's workspace folder, with every registered image in it (a lazy store makes it now)."""
        if not self._made:
            self._make()
        return self._dir

    def _make(self) -> None:
        ws = self._dir
        try:
            os.mkdir(ws)
        except FileExistsError:  # a partial workspace of a killed or failed attempt
            shutil.rmtree(ws)
            os.mkdir(ws)
        except FileNotFoundError:  # the run's first workspace: artifacts/ is not there yet
            os.makedirs(ws, exist_ok=True)
        self._made = True
        held, self._held = self._held, []
        self._shared.clear()
        for name, data in held:
            self._write_input(name, data)

    def _write_input(self, name: str, data: bytes) -> None:
        dest = self._dir / name
        with open(dest, "wb") as fh:  # a private copy, never a link: model code may write here
            fh.write(data)
        if self.on_write is not None:
            self.on_write(str(dest), data)

    def begin_call(self) -> None:
        """Start recording which artifacts the current tool call resolves (its inputs)."""
        self._resolved = []

    def end_call(self) -> list[str]:
        got, self._resolved = self._resolved or [], None
        return got

    def _note(self, art: Artifact) -> Artifact:
        if self._resolved is not None and art.id not in self._resolved:
            self._resolved.append(art.id)
        return art

    def __contains__(self, art_id: str) -> bool:
        return art_id in self._by_id

    def all(self) -> list[Artifact]:
        return [self._by_id[i] for i in self._order]

    def make_read_only(self) -> None:
        """Every registered image read-only, before model code runs: the sandbox never writes over a
        read-only file, so code cannot overwrite an earlier artifact."""
        self.workspace  # noqa: B018 - model code runs in the workspace: make it (with the inputs) first
        for art in self.all():
            with contextlib.suppress(OSError):
                p = self.path(art)
                mode = p.stat().st_mode
                if mode & 0o222:
                    p.chmod(mode & ~0o222)

    def get(self, art_id: str) -> Artifact | None:
        return self._by_id.get(art_id)

    def path(self, art: Artifact) -> Path:
        """The file of `art` to read: in the workspace, or for an input of a lazy store whose workspace
        is not made yet, the run's shared copy (the same bytes)."""
        if not self._made and (shared := self._shared.get(art.id)) is not None:
            return shared
        return self.workspace / art.file

    def add_input(self, name: str, data: bytes, size: tuple[int, int], shared: Path | None, *,
                  digest: str | None = None, remember: bool = True) -> Artifact:
        """Register an input image (no conversion needed) under its workspace `name`, whose bytes are
        `data` (sha256 `digest`, when the caller has it) and whose copy for the whole run is already
        at `shared` (None: there is none, so the workspace is made now). A made workspace gets its own
        copy now; a lazy one when it is made. `remember`: tell `on_write` about the shared copy (not
        needed when an earlier task of the run did)."""
        if shared is None:
            self.workspace  # noqa: B018 - the file must be somewhere: make the folder
        digest = digest or hashlib.sha256(data).hexdigest()
        art_id = f"img-{digest[:12]}"
        if self._made:
            self._write_input(name, data)  # under each of its names, as tools and prompts name it
        else:
            self._held.append((name, data))
        if art_id in self._by_id:
            return self._by_id[art_id]
        if shared is not None and not self._made:
            self._shared[art_id] = shared
            if remember and self.on_write is not None:  # the loop sends the shared copy's path: no re-read
                self.on_write(str(shared), data)
        return self._register(
            Artifact(id=art_id, sha256=digest, file=name, width=size[0], height=size[1], source="input"))

    def _register(self, art: Artifact) -> Artifact:
        existing = self._by_id.get(art.id)
        if existing is not None:
            return existing
        self._by_id[art.id] = art
        self._order.append(art.id)
        return art

    def add_file(
        self,
        path: Path,
        *,
        parents: Iterable[str] = (),
        source: Literal["input", "tool"] = "tool",
        tool_call_id: str | None = None,
        tool: str | None = None,
        keep_name: bool = False,
        converted_from: str | None = None,
        data: bytes | None = None,
        size: tuple[int, int] | None = None,
    ) -> Artifact:
        """Register an image file already written (in the workspace or elsewhere). `data`: the
        file's bytes when the caller has them (spares reading the file again); `size` likewise."""
        given = data
        if data is None:
            data = imaging.read_capped(path)
        digest = hashlib.sha256(data).hexdigest()
        art_id = f"img-{digest[:12]}"
        if art_id in self._by_id:
            return self._by_id[art_id]
        width, height = size or image_size(data)
        # the plain comparison first: resolve() stats every component of both paths
        inside = path.parent == self.workspace or path.resolve().parent == self.workspace.resolve()
        if keep_name and inside:
            name = path.name
            if given is not None and path.parent == self.workspace and self.on_write is not None:
                self.on_write(str(path), data)  # the path the loop will send
        else:
            name = f"{art_id}{path.suffix.lower() or '.png'}"
            dest = self.workspace / name
            if not dest.exists():
                shutil.copyfile(path, dest)
        return self._register(
            Artifact(
                id=art_id, sha256=digest, file=name, width=width, height=height,
                parents=tuple(parents), source=source, tool_call_id=tool_call_id, tool=tool,
                converted_from=converted_from,
            )
        )

    def add_array(
        self,
        array: np.ndarray,
        *,
        parents: Iterable[str] = (),
        tool_call_id: str | None = None,
        tool: str | None = None,
        bgr: bool = True,
    ) -> Artifact:
        """Encode a numpy image (BGR by default, as OpenCV gives it) as PNG and register it."""
        import cv2  # local: keeps `import toolsight` light
        import numpy as np

        arr = array
        if arr.dtype != np.uint8:
            arr = np.clip(arr, 0, 255).astype(np.uint8)
        if not bgr and arr.ndim == 3 and arr.shape[2] == 3:
            arr = cv2.cvtColor(arr, cv2.COLOR_RGB2BGR)
        ok, buf = cv2.imencode(".png", arr, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        if not ok:
            raise ToolError("could not encode the result image as PNG")
        size = (int(arr.shape[1]), int(arr.shape[0]))  # known: no need to re-open the PNG for it
        return self.add_bytes(buf.tobytes(), ".png", parents=parents, tool_call_id=tool_call_id, tool=tool, size=size)

    def add_bytes(
        self,
        data: bytes,
        suffix: str = ".png",
        *,
        parents: Iterable[str] = (),
        source: Literal["input", "tool"] = "tool",
        tool_call_id: str | None = None,
        tool: str | None = None,
        size: tuple[int, int] | None = None,
        file_name: str | None = None,
    ) -> Artifact:
        """Register image bytes (checked by the guarded decoder unless the caller gives their `size`);
        `file_name` keeps a workspace name."""
        digest = hashlib.sha256(data).hexdigest()
        art_id = f"img-{digest[:12]}"
        if art_id in self._by_id:
            return self._by_id[art_id]
        if size is None:
            size = image_size(data)  # the guard's header check, before anything is written
        name = file_name or f"{art_id}{suffix}"
        dest = self.workspace / name
        dest.write_bytes(data)  # the file then holds exactly the registered bytes
        if self.on_write is not None:  # a tool's image is usually sent next: no re-read then
            self.on_write(str(dest), data)
        return self._register(
            Artifact(
                id=art_id, sha256=digest, file=name, width=size[0], height=size[1],
                parents=tuple(parents), source=source, tool_call_id=tool_call_id, tool=tool,
            )
        )

    def resolve(self, ref: str) -> Artifact:
        """An artifact by id, or by the name of a file in the workspace (never a host path)."""
        ref = ref.strip()
        if ref in self._by_id:
            return self._note(self._by_id[ref])
        for art in self._by_id.values():
            if art.file == ref:
                return self._note(art)
        name = ref.removeprefix("./")
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise ToolError(
                f"image {ref!r} is not an artifact id or a file name in the task workspace; "
                f"use one of: {', '.join(self.known_names()) or '(none)'}"
            )
        candidate = self.workspace / name
        if candidate.is_file() and candidate.resolve().parent == self.workspace.resolve():
            return self._note(self.add_file(candidate, keep_name=True))
        raise ToolError(
            f"unknown image {ref!r}; use an artifact id or workspace file name: "
            f"{', '.join(self.known_names()) or '(none)'}"
        )

    def known_names(self) -> list[str]:
        return list(self._order)

    def load_array(self, ref: str) -> tuple[Artifact, np.ndarray]:
        """Resolve a reference and load it as a BGR uint8 array."""
        art = self.resolve(ref)
        # through the guarded decoder: a workspace file may have been written by model code (a bomb);
        # EXIF orientation is ignored, as the reference (PIL) does: the model sees the stored pixels
        try:
            data = imaging.read_capped(self.path(art), what=f"image {art.file}")
            arr = imaging.decode_array(data, what=f"image {art.file}")
        except (imaging.ImageRejected, OSError) as exc:
            raise ToolError(str(exc)) from None
        return art, arr
