"""VisualToolBench's wire profile: the requests its driver's LiteLLM puts on the OpenAI wire.

`scripts/model_inference.py` (d4f200a0) calls `litellm.completion(model, messages, tools,
temperature, tool_choice="auto")`; LiteLLM writes the body as `{model, messages, temperature, tools,
tool_choice}`, sends image parts without `detail`, tool messages as the driver built them
(`tool_call_id, role, name, content`, content a string), text-only system and user messages as
strings, and re-sends a reply as its `Message` (`content` left out when null, `tool_calls` with
`function` before `id`, `reasoning_content` when the reply had reasoning). Recorded in
`../shared/golden-wire/visualtoolbench/`; the reasoning field is LiteLLM's `Message` as it is
serialised (no recorded reply had one). The OpenAI client under LiteLLM retries a failed request
twice itself (the SDK default).
"""

from __future__ import annotations

from toolsight.models.wire import WireProfile

LITELLM_WIRE = WireProfile(
    name="VisualToolBench driver (litellm.completion over the OpenAI wire)",
    body_order=("model", "messages", "temperature", "tools", "tool_choice"),
    tool_choice="auto",
    tool_message_keys=("tool_call_id", "role", "name", "content"),
    echo="litellm",
    image_detail=None,
    sdk_max_retries=2,
)
