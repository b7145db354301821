"""`@tool`: a Tool built from a typed, documented function (schema from the signature, descriptions
from the docstring's `Args:` section, arguments validated with pydantic)."""

from __future__ import annotations

import asyncio
import inspect
import re
from collections.abc import Callable
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from toolsight.tools.result import ToolError, ToolResult
from toolsight.tools.tool import Tool, ToolContext, ToolFn

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
