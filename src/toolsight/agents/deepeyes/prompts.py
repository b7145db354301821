"""DeepEyes' prompt texts, verbatim (`eval/eval_vstar.py:53-76` of Visual-Agent/DeepEyes @ 6c5e7967,
Apache-2.0; the same texts as its training prompts, `verl/.../mm_process_engine/prompt.py`).

The system prompt holds the zoom tool's schema as one JSON line; the original's says
`"required":["bbox"]` while the argument is `bbox_2d` (`TOOL_SCHEMA`). The `toolsight` loop sends
the corrected line (`TOOL_SCHEMA_FIXED`), the `official` one the original (`system_prompt`).
"""

from __future__ import annotations

#: the zoom tool's schema line, as the original writes it (sic: required bbox)
TOOL_SCHEMA = "{\"type\":\"function\",\"function\":{\"name\":\"image_zoom_in_tool\",\"description\":\"Zoom in on a specific region of an image by cropping it based on a bounding box (bbox) and an optional object label.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"bbox_2d\":{\"type\":\"array\",\"items\":{\"type\":\"number\"},\"minItems\":4,\"maxItems\":4,\"description\":\"The bounding box of the region to zoom in, as [x1, y1, x2, y2], where (x1, y1) is the top-left corner and (x2, y2) is the bottom-right corner.\"},\"label\":{\"type\":\"string\",\"description\":\"The name or label of the object in the specified bounding box (optional).\"}},\"required\":[\"bbox\"]}}}"
#: the same with the argument's real name
TOOL_SCHEMA_FIXED = "{\"type\":\"function\",\"function\":{\"name\":\"image_zoom_in_tool\",\"description\":\"Zoom in on a specific region of an image by cropping it based on a bounding box (bbox) and an optional object label.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"bbox_2d\":{\"type\":\"array\",\"items\":{\"type\":\"number\"},\"minItems\":4,\"maxItems\":4,\"description\":\"The bounding box of the region to zoom in, as [x1, y1, x2, y2], where (x1, y1) is the top-left corner and (x2, y2) is the bottom-right corner.\"},\"label\":{\"type\":\"string\",\"description\":\"The name or label of the object in the specified bounding box (optional).\"}},\"required\":[\"bbox_2d\"]}}}"

_SYSTEM_HEAD = (
    "You are a helpful assistant.\n"
    "\n"
    "# Tools\n"
    "You may call one or more functions to assist with the user query.\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n"
    "<tools>\n"
)
_SYSTEM_TAIL = (
    "\n"
    "</tools>\n"
    "\n"
    "# How to call a tool\n"
    "Return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n"
    "<tool_call>\n"
    "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call>\n"
    "\n"
    "**Example**:  \n"
    "<tool_call>  \n"
    "{\"name\": \"image_zoom_in_tool\", \"arguments\": {\"bbox_2d\": [10, 20, 100, 200], \"label\": \"the apple on the desk\"}}  \n"
    "</tool_call>"
)

#: `USER_PROMPT_V2`: after the question, and inside every tool response (note the spacing)
USER_PROMPT_V2 = "\nThink first, call **image_zoom_in_tool** if needed, then answer. Format strictly as:  <think>...</think>  <tool_call>...</tool_call> (if tools needed)  <answer>...</answer> "
#: `instruction_prompt_before`: the first user message's text (`str.format`: question, options)
INSTRUCTION = "Question: {question}\nOptions: {options}\n" + USER_PROMPT_V2


def system_prompt(fixed_schema: bool = False) -> str:
    """`instruction_prompt_system`; with `fixed_schema` its tool schema says `required: ["bbox_2d"]`."""
    return _SYSTEM_HEAD + (TOOL_SCHEMA_FIXED if fixed_schema else TOOL_SCHEMA) + _SYSTEM_TAIL


__all__ = ["INSTRUCTION", "TOOL_SCHEMA", "TOOL_SCHEMA_FIXED", "USER_PROMPT_V2", "system_prompt"]
