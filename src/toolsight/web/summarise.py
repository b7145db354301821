"""Summarise a page for a goal: an LLM call that extracts evidence and a summary.

`summarise_for_goal` follows VisBrowse-Bench's reference `tools/tool_visit.py::readpage`: the page
(already cut to 150,000 characters) goes into the prompt (`GOAL_SUMMARY_PROMPT` unless the caller
gives its own, such as a benchmark's extractor prompt) at temperature 0.6; a reply shorter than 10
characters is retried on a page cut to 70 % (three times), then to 25,000 characters; a reply
that is not JSON is asked for again up to three times (a JSON object inside other text is cut
out first, as the reference does). The result is the parsed object — `evidence`, `summary` and
whatever else the prompt asks for — or None when no usable reply came. `Complete` is any "prompt in, text out" call:
the run makes one from its summary model (`toolsight.calls.task.model_completer`), and the web
session records and replays it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, Protocol

#: the summariser's prompt: the page and the goal in, a JSON object with "evidence" and "summary" out
GOAL_SUMMARY_PROMPT = """Read the web page below and extract what is relevant to the user's goal.

## Web page
{webpage_content}

## Goal
{goal}

## What to return
1. Evidence: the passages of the page that bear on the goal, quoted in full and in their original words.
2. Summary: one concise paragraph saying what the evidence tells about the goal, and how much it helps.

Reply with a JSON object with the fields "evidence" and "summary".
"""

MAX_TRIES = 10


class Complete(Protocol):
    """(prompt, attempt, parts) -> reply text ("" for no reply); raises nothing the caller must handle.
    `parts`: send the prompt as a one-part list of content (the reference's first request) rather
    than as a string (its re-asks)."""

    def __call__(self, prompt: str, attempt: int, parts: bool = False) -> Awaitable[str]: ...


def fill_prompt(prompt: str, content: str, goal: str) -> str:
    """`prompt` with the page (`{webpage_content}`) and the goal (`{goal}`) filled in."""
    return prompt.format(webpage_content=content, goal=goal)


def _cut_json(content: str) -> str:
    try:
        json.loads(content)
        return content
    except json.JSONDecodeError:
        left, right = content.find("{"), content.rfind("}")
        if left != -1 and right != -1 and left <= right:
            return content[left:right + 1]
        return content


class _Caller:
    """The reference `call_server`: up to 10 tries for a non-empty reply; each try is numbered so a
    recorded run replays the same sequence of replies."""

    def __init__(self, complete: Complete) -> None:
        self.complete = complete
        self.attempt = 0

    async def __call__(self, prompt: str, parts: bool) -> str:
        for _ in range(MAX_TRIES):
            self.attempt += 1
            content = await self.complete(prompt, self.attempt, parts)
            if content:
                return _cut_json(content)
        return ""


async def summarise_for_goal(complete: Complete, content: str, goal: str,
                             prompt: str = GOAL_SUMMARY_PROMPT) -> dict[str, Any] | None:
    """The parsed summariser reply for `content` and `goal`, or None (see the module docstring). The
    first request sends the prompt as a one-part list, the re-asks on a cut page as a string, and the
    JSON re-asks as the last of those was sent — as the reference's `messages` do."""
    call = _Caller(complete)
    parts = True
    raw: Any = await call(fill_prompt(prompt, content, goal), parts)
    summary_retries = 3
    while len(raw) < 10 and summary_retries >= 0:
        truncate_length = int(0.7 * len(content)) if summary_retries > 0 else 25000
        content = content[:truncate_length]
        parts = False
        raw = await call(fill_prompt(prompt, content, goal), parts)
        summary_retries -= 1
    filled = fill_prompt(prompt, content, goal)
    for _ in range(3):
        try:
            raw = json.loads(raw)
            break
        except (json.JSONDecodeError, TypeError):
            raw = await call(filled, parts)
    else:
        return None
    if not isinstance(raw, dict) or "evidence" not in raw or "summary" not in raw:
        return None
    return raw
