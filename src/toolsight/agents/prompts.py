"""Generic prompt texts any benchmark's settings may use (a benchmark's own texts live in its package)."""

from __future__ import annotations

#: a system prompt asking for the answer in <answer></answer> tags; `{tools}` takes a sentence
#: about the tools offered (or nothing)
ANSWER_TAG_SYSTEM = (
    "You are a careful visual reasoning assistant. Look at the image(s) and answer the question. "
    "{tools}Put your final answer inside <answer></answer> tags, e.g. <answer>B</answer>."
)
#: the tools sentence for a setting that offers tools
TOOLS_NOTE = (
    "You may call the tools you are given to inspect or transform the image; you will see the images "
    "they produce. "
)
