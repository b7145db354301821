"""VisBrowse-Bench's wire profile: the requests `infer.py` (10b95c0c) sends with the openai SDK.

`client.chat.completions.create(model, messages, stream=False, temperature=1, tools, tool_choice="auto")`:
the body in the SDK's field order (`model, stream, messages, temperature, tool_choice, tools`); the
system message, text tool results and the driver's own user messages as one-part lists; tool
messages `tool_call_id, role, name, content`; images by their URL (the dataset's, the uploaded
crop's) without `detail`, image-search hits as the downloaded bytes; each reply re-sent as the SDK's
`message.model_dump()` — every declared field with its nulls (`refusal`, `annotations`, `audio`,
`function_call`, `tool_calls`), then what else the server sent (`reasoning_content` of a reasoning
parser, `reasoning`); the SDK's two retries of a failed request. Recorded in
`../shared/golden-wire/visbrowse-bench/`.

`INLINE_WIRE` is the same with every image inlined as a data URL: the documented option
(`-B inline_images=true`) for a model server that cannot fetch URLs.
"""

from __future__ import annotations

from toolsight.models.wire import OPENAI_SDK_ORDER, WireProfile

SDK_WIRE = WireProfile(
    name="VisBrowse-Bench infer.py (openai SDK chat.completions.create)",
    body_order=OPENAI_SDK_ORDER,
    stream=False,
    tool_choice="auto",
    text_content={"system": "parts", "user": "parts", "tool": "parts"},
    tool_message_keys=("tool_call_id", "role", "name", "content"),
    echo="openai-sdk",
    image_detail=None,
    image_urls=True,
    sdk_max_retries=2,
)
INLINE_WIRE = SDK_WIRE.model_copy(update={"name": SDK_WIRE.name + ", images inlined", "image_urls": False})
