"""PhysToolBench's wire profile: what `src/model_api.py::OpenAIInterface` sends (3fbb2ea5).

`self._client.chat.completions.create(model, messages, temperature, max_tokens)` with the openai
SDK: the body in the SDK's field order (`model, messages, max_tokens, temperature`), `max_tokens`
whatever the server, one user message `[text, image]` with the image as a PNG data URL and no
`detail`, and the SDK's default two retries of a failed request inside each of `model_api`'s three
attempts. Recorded in `../shared/golden-wire/phystoolbench/`.
"""

from __future__ import annotations

from toolsight.models.wire import OPENAI_SDK_ORDER, WireProfile

SDK_WIRE = WireProfile(
    name="PhysToolBench model_api.py (openai SDK chat.completions.create)",
    body_order=OPENAI_SDK_ORDER,
    image_detail=None,
    max_tokens_field="max_tokens",
    sdk_max_retries=2,
)
