"""The shape of a Responses API reply (`client.responses.create`) that toolsight reads, checked at the
boundary. The SDK builds its reply objects without validating them, so a reply whose hosted
code-interpreter `outputs` is a number, or whose text is not a string, would surface later as an
AttributeError inside an agent loop (a harness error). Checked here, it is a malformed reply: a
retryable model error, like every other provider's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from toolsight.models.base import ModelError


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class _Output(BaseModel):
    """One entry of a code_interpreter_call's `outputs`: logs or an image."""

    model_config = ConfigDict(extra="allow")
    type: str
    logs: str | None = None
    url: str | None = None


class _Item(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    code: str | None = None
    status: str | None = None
    outputs: list[_Output] | None = None
    content: list[_Part] | None = None


class _Reply(BaseModel):
    model_config = ConfigDict(extra="allow")
    status: str | None = None
    output: list[_Item]
    usage: dict[str, Any] | None = None


def check_responses_reply(name: str, reply: dict[str, Any]) -> dict[str, Any]:
    """`reply` unchanged if its items have the types toolsight reads; else a retryable ModelError
    (`malformed reply (…)`). A completed reply with no output item is malformed too (no message)."""
    try:
        parsed = _Reply.model_validate(reply)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        raise ModelError(f"{name}: malformed reply ({where}: {first['msg']})", retryable=True,
                         kind="response") from None
    if parsed.status == "completed" and not parsed.output:
        raise ModelError(f"{name}: malformed reply (a completed response with no output)", retryable=True,
                         kind="response")
    return reply
