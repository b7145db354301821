"""The scripted server honours a Chat Completions request's `stop` as an OpenAI-compatible server does:
the scripted text is cut before the earliest stop string, which is not returned, and the reply
finishes with "stop" (PyVision's protocol depends on it: its driver sends `stop=["</code>"]`)."""

from __future__ import annotations

import asyncio

from toolsight.models import get_model
from toolsight.models.base import GenerateConfig, Message
from toolsight.models.scripted import Script, ScriptedServer

TEXT = "look\n<code>\nprint(1)\n</code>\nmore text <end> the rest"


def _ask(stop: list[str] | None) -> tuple[str, str, list[object]]:
    script = Script.model_validate({"steps": [{"text": TEXT, "finish_reason": "length"}]})
    with ScriptedServer(script) as srv:
        model = get_model("openai/m", base_url=srv.openai_base_url)

        async def go() -> tuple[str, str]:
            try:
                out = await model.generate([Message.user("hi")], [], GenerateConfig(stop=stop))
                return out.message.text, out.finish_reason
            finally:
                await model.aclose()

        text, finish = asyncio.run(go())
        sent = [r.body.get("stop") for r in srv.requests]
    return text, finish, sent


def test_the_earliest_stop_string_cuts_the_reply() -> None:
    text, finish, sent = _ask(["<end>", "</code>"])
    assert sent == [["<end>", "</code>"]]
    assert text == "look\n<code>\nprint(1)\n" and finish == "stop"


def test_without_stop_the_reply_is_as_scripted() -> None:
    text, finish, _ = _ask(None)
    assert text == TEXT and finish == "length"
    text, finish, _ = _ask(["never there"])
    assert text == TEXT and finish == "length"
