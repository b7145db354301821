"""The tool interface: Tool, ToolResult, Artifact, the per-task ArtifactStore and Toolbox, and @tool.

A tool is a name, a description, a JSON schema for its arguments and an async call. Arguments
from a model arrive as a JSON string (or dict); they are parsed and validated here, so a bad call
becomes a failed ToolResult with a message the model can act on — never an exception that ends
the task. Images a tool produces become Artifacts: content-addressed files in the task
workspace, each carrying the ids of the artifacts it was made from (its provenance).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import io
import json
import re
import shutil
import struct
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_type_hints, overload

from PIL import Image
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

Image.MAX_IMAGE_PIXELS = 64_000_000  # decompression-bomb guard for everything toolsight opens

if TYPE_CHECKING:  # numpy loads with OpenCV when a tool first needs pixels: ~0.1 s off every start-up
    import numpy as np

from toolsight.log.artifact import Artifact as Artifact  # noqa: E402 - re-exported
from toolsight.log.toolspec import ToolSpec as ToolSpec  # noqa: E402 - re-exported

_PNG = b"\x89PNG\r\n\x1a\n"


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) of an encoded image. A PNG's come straight from its IHDR chunk, as PIL reads
    them (without PIL's ~50 µs of format probing, paid for every input of every task); anything
    else through PIL."""
    if len(data) >= 24 and data[:8] == _PNG and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        return int(w), int(h)
    with Image.open(io.BytesIO(data)) as im:
        return im.size


class ToolResult(BaseModel):
    """What a tool call returns to the model: text, image artifacts, ok flag, error text."""

    text: str = ""
    artifacts: list[Artifact] = Field(default_factory=list)
    ok: bool = True
    error: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict, description="trace details: code, files, limits")

    @classmethod
    def fail(cls, message: str, **extra: Any) -> ToolResult:
        return cls(text=message, ok=False, error=message, extra=dict(extra))

    def model_text(self) -> str:
        """The text the model sees, with the ids of produced images listed."""
        parts = [self.text] if self.text else []
        if self.artifacts:
            ids = ", ".join(f"{a.id} ({a.width}x{a.height})" for a in self.artifacts)
            parts.append(f"Produced image(s): {ids}")
        if not parts:
            parts.append("Tool executed successfully." if self.ok else "Tool failed.")
        return "\n".join(parts)


class ToolError(Exception):
    """Raised inside a tool for a problem the model can fix; becomes a failed ToolResult."""


class ArtifactStore:
    """The artifacts of one task, stored as files in its workspace, addressed by content hash."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        workspace.mkdir(parents=True, exist_ok=True)
        self._by_id: dict[str, Artifact] = {}
        self._order: list[str] = []
        self._resolved: list[str] | None = None

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

    def get(self, art_id: str) -> Artifact | None:
        return self._by_id.get(art_id)

    def path(self, art: Artifact) -> Path:
        return self.workspace / art.file

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
    ) -> Artifact:
        """Register an image file already written (in the workspace or elsewhere)."""
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        art_id = f"img-{digest[:12]}"
        if art_id in self._by_id:
            return self._by_id[art_id]
        width, height = image_size(data)
        # the plain comparison first: resolve() stats every component of both paths
        inside = path.parent == self.workspace or path.resolve().parent == self.workspace.resolve()
        if keep_name and inside:
            name = path.name
        else:
            name = f"{art_id}{path.suffix.lower() or '.png'}"
            dest = self.workspace / name
            if not dest.exists():
                shutil.copyfile(path, dest)
        return self._register(
            Artifact(
                id=art_id, sha256=digest, file=name, width=width, height=height,
                parents=tuple(parents), source=source, tool_call_id=tool_call_id, tool=tool,
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
    ) -> Artifact:
        digest = hashlib.sha256(data).hexdigest()
        art_id = f"img-{digest[:12]}"
        if art_id in self._by_id:
            return self._by_id[art_id]
        name = f"{art_id}{suffix}"
        (self.workspace / name).write_bytes(data)
        if size is None:
            size = image_size(data)
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
        import cv2

        art = self.resolve(ref)
        # ignore EXIF orientation, as the reference (PIL) does: the model sees the stored pixels
        arr = cv2.imread(str(self.path(art)), cv2.IMREAD_COLOR | cv2.IMREAD_IGNORE_ORIENTATION)
        if arr is None:
            import numpy as np

            with Image.open(self.path(art)) as im:
                rgb = np.asarray(im.convert("RGB"))
            arr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        return art, arr


@dataclass
class ToolContext:
    """What a tool call may touch: its task's workspace and artifact store, and its call id."""

    store: ArtifactStore
    call_id: str = ""
    task_id: str = ""
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def workspace(self) -> Path:
        return self.store.workspace


ToolFn = Callable[..., Awaitable[ToolResult] | ToolResult]


class Tool:
    """A callable tool with a JSON schema. Subclass, or build one with @tool from a function."""

    name: str
    description: str
    parameters: dict[str, Any]

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters

    def spec(self, ctx: ToolContext | None = None) -> ToolSpec:
        """The schema sent to the model (a tool may describe the task's files, given a context)."""
        # built once per tool, not per task: the same name, description and schema give the same spec
        key = (self.name, self.description, id(self.parameters))
        cached: tuple[tuple[str, str, int], ToolSpec] | None = self.__dict__.get("_spec_cache")
        if cached is None or cached[0] != key:
            cached = (key, ToolSpec(name=self.name, description=self.description, parameters=self.parameters))
            self.__dict__["_spec_cache"] = cached
        return cached[1]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    async def __call__(self, raw_args: str | dict[str, Any] | None, ctx: ToolContext) -> ToolResult:
        """Parse, validate and run; any failure becomes a failed ToolResult the model can read."""
        try:
            args = parse_arguments(raw_args)
        except ToolError as exc:
            return ToolResult.fail(f"Error calling {self.name}: {exc}")
        try:
            return await self.run(args, ctx)
        except ToolError as exc:
            return ToolResult.fail(f"Error in {self.name}: {exc}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a tool bug must not end the task
            return ToolResult.fail(f"Error in {self.name}: {type(exc).__name__}: {exc}")


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        val = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"arguments are not valid JSON ({exc.msg} at column {exc.colno}); "
            "send a JSON object matching the tool's parameters"
        ) from None
    if not isinstance(val, dict):
        raise ToolError("arguments must be a JSON object")
    return val


_ARG_RE = re.compile(r"^\s{0,8}(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into the description and per-argument texts."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    args: dict[str, str] = {}
    current: str | None = None
    section: str | None = None
    for line in lines:
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            section = "args"
            continue
        if stripped in ("Returns:", "Raises:", "Examples:", "Example:"):
            section = "other"
            continue
        if section == "args":
            m = _ARG_RE.match(line)
            if m and not line.startswith("        "):
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and stripped:
                args[current] = (args[current] + " " + stripped).strip()
        elif section is None:
            desc.append(line)
    return "\n".join(desc).strip(), args


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FunctionTool(Tool):
    """A tool built from a typed, documented Python function by @tool."""

    def __init__(
        self,
        fn: ToolFn,
        name: str | None = None,
        description: str | None = None,
        blocking: bool = False,
        timeout: float | None = None,
    ) -> None:
        self.fn = fn
        self.blocking = blocking
        self.timeout = timeout
        sig = inspect.signature(fn)
        hints = get_type_hints(fn)
        doc_desc, doc_args = parse_docstring(fn.__doc__)
        fields: dict[str, Any] = {}
        self._wants_ctx = False
        for pname, p in sig.parameters.items():
            if pname == "ctx":
                self._wants_ctx = True
                continue
            ann = hints.get(pname, Any)
            if isinstance(p.default, FieldInfo):
                info = p.default
                if info.description is None and pname in doc_args:
                    info = FieldInfo.merge_field_infos(info, description=doc_args[pname])
                fields[pname] = (ann, info)
                continue
            default = ... if p.default is inspect.Parameter.empty else p.default
            fields[pname] = (ann, Field(default=default, description=doc_args.get(pname)))
        self.args_model: type[BaseModel] = create_model(f"{fn.__name__}_args", __base__=_Args, **fields)
        schema = self.args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})
        schema.setdefault("required", [])
        super().__init__(name or fn.__name__, description or doc_desc, schema)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            parsed = self.args_model.model_validate(args)
        except ValidationError as exc:
            raise ToolError(format_validation_error(exc)) from None
        kwargs = {k: getattr(parsed, k) for k in type(parsed).model_fields}
        if self._wants_ctx:
            kwargs["ctx"] = ctx
        if self.blocking:
            fut = asyncio.to_thread(self.fn, **kwargs)
            out = await (asyncio.wait_for(fut, self.timeout) if self.timeout else fut)
        else:
            res = self.fn(**kwargs)
            out = await res if inspect.isawaitable(res) else res
        if isinstance(out, ToolResult):
            return out
        return ToolResult(text=str(out))


def format_validation_error(exc: ValidationError) -> str:
    msgs = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        kind = err.get("type", "")
        if kind == "missing":
            msgs.append(f"missing required argument '{loc}'")
        elif kind == "extra_forbidden":
            msgs.append(f"unknown argument '{loc}'")
        else:
            msgs.append(f"argument '{loc}': {err.get('msg')} (got {err.get('input')!r})")
    return "invalid arguments: " + "; ".join(msgs)


@overload
def tool(fn: ToolFn, /) -> FunctionTool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, blocking: bool = False,
    timeout: float | None = None,
) -> Callable[[ToolFn], FunctionTool]: ...


def tool(
    fn: ToolFn | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    blocking: bool = False,
    timeout: float | None = None,
) -> FunctionTool | Callable[[ToolFn], FunctionTool]:
    """Turn a typed, documented function into a Tool; its JSON schema comes from the signature.

    A parameter named `ctx` receives the ToolContext. `blocking=True` runs the function in a worker
    thread (for heavy OpenCV work) under `timeout` seconds.
    """

    def wrap(f: ToolFn) -> FunctionTool:
        return FunctionTool(f, name=name, description=description, blocking=blocking, timeout=timeout)

    return wrap(fn) if fn is not None else wrap


class Toolbox:
    """The tools one setting offers, bound to one task's workspace and artifact store."""

    def __init__(self, tools: Iterable[Tool], store: ArtifactStore, task_id: str = "") -> None:
        self.tools: dict[str, Tool] = {}
        for t in tools:
            self.tools[t.name] = t
        self.store = store
        self.task_id = task_id
        self.state: dict[str, Any] = {}
        self._calls = 0

    def specs(self) -> list[ToolSpec]:
        ctx = ToolContext(store=self.store, task_id=self.task_id, state=self.state)
        return [t.spec(ctx) for t in self.tools.values()]

    async def call(self, name: str, raw_args: str | dict[str, Any] | None, call_id: str = "") -> ToolResult:
        tool_ = self.tools.get(name)
        if tool_ is None:
            known = ", ".join(self.tools) or "(no tools in this setting)"
            return ToolResult.fail(f"Unknown tool {name!r}. Available tools: {known}.")
        self._calls += 1
        ctx = ToolContext(store=self.store, call_id=call_id or f"call-{self._calls}", task_id=self.task_id,
                          state=self.state)
        t0 = time.perf_counter()
        self.store.begin_call()
        try:
            result = await tool_(raw_args, ctx)
        finally:
            resolved = self.store.end_call()
        result.extra.setdefault("duration_s", round(time.perf_counter() - t0, 6))
        if resolved:
            declared: list[str] = list(result.extra.get("inputs") or [])
            result.extra["inputs"] = [*resolved, *[i for i in declared if i not in resolved]]
        return result

    async def aclose(self) -> None:
        """Release per-task resources tools keep in `state` (e.g. a stateful interpreter)."""
        for v in list(self.state.values()):
            close = getattr(v, "aclose", None)
            if close is not None:
                res = close()
                if inspect.isawaitable(res):
                    await res
