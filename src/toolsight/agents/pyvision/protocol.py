"""PyVision's text protocol, as pure functions (agents-x-project/PyVision @ d08b4502,
`inference_engine/vis_inference_demo_gpt.py`; line numbers in docs/agents.md).

- the request: no system message, no tools; `max_tokens 10000, stop ["</code>"], temperature 0.6,
  top_p 1.0` (`PARAMS`; the client-side timeout is 300 s);
- the first user message (`first_message`): one image → `"<image_clue_0>"`, the image,
  `"</image_clue_0>\\n\\n"`, the v2 template; two or more → those three parts per image, then the
  multi-image template with one "width of image_clue_i: …" line per image; a `no_tool*` prompt → the
  images, then its template, without tags;
- a reply runs code when it holds `</code>` or `<code>` (`wants_code`); the code is the last
  ```` ```python ```` fence (`extract_code`: with no fence, the reply up to its first ```` ``` ````);
  the assistant message is the reply + `"</code>\\n"`;
- the result comes back as a user message (`interpreter_message`): `"<interpreter>\\nText
  Result:\\n{stdout}\\nImage Result:\\n"`, then per figure `<image_clue_k>`, the PNG, `</image_clue_k>` (or
  `"None"`), then `"</interpreter>\\n"`; an error as `"<interpreter>{report}"`, `"</interpreter>\\n"`;
- images are the files' bytes labelled `image/jpeg` whatever they are (`official`); the `toolsight`
  loop labels them with their real type.
"""

from __future__ import annotations

from typing import Any

from toolsight.agents.pyvision.prompts import MULTI_IMAGE, TEMPLATES, V2
from toolsight.models.base import ImagePart, Message, TextPart
from toolsight.models.images import data_url

#: vis_inference_demo_gpt.py:393-401 (+ main.py's defaults); `timeout` is the client's, not in the body
PARAMS: dict[str, Any] = {"max_tokens": 10000, "temperature": 0.6, "top_p": 1.0, "stop": ["</code>"],
                          "timeout": 300.0}
#: what the original labels every image with
OFFICIAL_MIME = "image/jpeg"


def template_for(prompt: str, n_images: int) -> str:
    """The template the driver really uses for `--prompt prompt` (it overrides all but `no_tool*`)."""
    if "no_tool" in prompt:
        return TEMPLATES[prompt]
    return V2 if n_images == 1 else MULTI_IMAGE


def first_message(prompt: str, query: str, images: list[tuple[ImagePart, int, int]]) -> Message:
    """The task's first user message; `images` = (part, width, height) per input image, in order.
    With no image (a toolsight extension: the original needs one) the multi-image template is used
    with no image lines."""
    template = template_for(prompt, len(images))
    parts: list[TextPart | ImagePart] = []
    if "no_tool" in prompt:
        parts.extend(p for p, _, _ in images)
        parts.append(TextPart(text=template.format(query=query)))
        return Message(role="user", content=parts)
    for i, (part, _, _) in enumerate(images):
        parts += [TextPart(text=f"<image_clue_{i}>"), part, TextPart(text=f"</image_clue_{i}>\n\n")]
    if len(images) == 1:
        _, w, h = images[0]
        text = template.format(query=query, width=str(w), height=str(h))
    else:
        info = "".join(f"width of image_clue_{i}: {w}, height of image_clue_{i}: {h}\n"
                       for i, (_, w, h) in enumerate(images))
        text = template.format(query=query, image_information=info)
    parts.append(TextPart(text=text))
    return Message(role="user", content=parts)


def later_turn_message(prompt: str, query: str, images: list[tuple[ImagePart, int]]) -> Message:
    """A later turn of a multi-turn task (a toolsight extension): its images, each tagged with the next
    `<image_clue_k>` label (`images` = (part, k)), then the question as it is."""
    parts: list[TextPart | ImagePart] = []
    for part, k in images:
        if "no_tool" in prompt:
            parts.append(part)
        else:
            parts += [TextPart(text=f"<image_clue_{k}>"), part, TextPart(text=f"</image_clue_{k}>\n\n")]
    parts.append(TextPart(text=query))
    return Message(role="user", content=parts)


def wants_code(reply: str) -> bool:
    """`stop_reason == "</code>"`: the reply holds the stop string (kept by some servers) or `<code>`."""
    return "</code>" in reply or "<code>" in reply


def extract_code(reply: str) -> str:
    """The code the driver runs: after the last ```` ```python ````, up to the next fence, stripped."""
    return reply.split("```python")[-1].split("```")[0].strip()


def code_message(reply: str) -> Message:
    """The assistant message of a code reply: the reply as returned, then `</code>\\n`."""
    return Message(role="assistant", content=[TextPart(text=f"{reply}</code>\n")])


def final_message(reply: str) -> Message:
    return Message(role="assistant", content=[TextPart(text=reply)])


def interpreter_message(report: str, text: str | None, figures: list[ImagePart], first_clue: int) -> Message:
    """The result as the driver sends it (`update_messages_with_execute_content`)."""
    if report != "Done":
        return Message(role="user", content=[TextPart(text=f"<interpreter>{report}"), TextPart(text="</interpreter>\n")])
    parts: list[TextPart | ImagePart] = [TextPart(text=f"<interpreter>\nText Result:\n{text}\nImage Result:\n")]
    if figures:
        for k, fig in enumerate(figures, start=first_clue):
            parts += [TextPart(text=f"<image_clue_{k}>"), fig, TextPart(text=f"</image_clue_{k}>")]
    else:
        parts.append(TextPart(text="None"))
    parts.append(TextPart(text="</interpreter>\n"))
    return Message(role="user", content=parts)


def wire(messages: list[Message]) -> list[dict[str, Any]]:
    """The messages as PyVision sends them: every content a list of parts, images as data URLs with
    the part's label (`image/jpeg` in the official loop)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        content: list[dict[str, Any]] = []
        for p in m.content:
            if isinstance(p, TextPart):
                content.append({"type": "text", "text": p.text})
            else:
                content.append({"type": "image_url", "image_url": {"url": data_url(p)}})
        out.append({"role": m.role, "content": content})
    return out


__all__ = ["OFFICIAL_MIME", "PARAMS", "code_message", "extract_code", "final_message", "first_message",
           "interpreter_message", "later_turn_message", "template_for", "wants_code", "wire"]
