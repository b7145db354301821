"""VTC-Bench's official loop: what the reference driver sends, request by request (`--loop official`).

Reproduces `process_single_item` of `eval/VTC_Bench_Eval.py` and the `FnCallAgent._run` loop of its
Qwen-Agent fork (zhuzil/VTC-Bench @ 484ef7c2) around toolsight's tools and models:

- the task runs in its workspace as the driver runs in its data folder: the image sits at the
  TSV's relative path, the prompt names that path, tool outputs go to `workspace/tools/opencv/`;
- at most 20 model calls; no tools on the last one (the history is then flattened); a last call
  without "<answer>" is re-asked up to 5 times; a reply with neither a tool call nor an answer tag
  gets "Please continue the analysis based on the tool" (or, with no call left, the final-format
  prompt and one more call); every tool result with 1 < N <= 5 calls left gets the remaining-calls
  note as its own text item, and with 1 left the question again;
- the whole task is re-run (3 attempts, waits 5 s and 10 s) when the answer is empty or contains a
  refusal keyword, or on an error the driver counts as retryable; the answer is the first
  `<answer>…</answer>` of the last text (or a `<|answer|>` pair, or the reasoning), and it is kept
  across attempts as the driver keeps it;
- model-specific branches come from `DriverProfile` (tool images in the tool message, or in a user
  message for Gemini/4o; o-series wording; reasoning effort).

Requests go through `OpenAIModel.chat_completions_raw` (the same SDK call the driver makes, so the
body is the driver's byte for byte); other providers get the same messages converted to toolsight
messages (same texts, no exact wire). In batch mode the raw call goes through the run's batch
collector instead: the same body without `stream`, its reply read as one chunk (`batch_form.py`,
docs/batch.md) — a documented difference from the driver, which streams. The tool is any tool of the setting: the official interface
tools and the official `code_interpreter` (`code.py`, on the sandbox kernel) return the driver's
content items; before each call the loop puts the conversation's image paths and the model name in
the toolbox state (the reference's file access and working folder). Each attempt has the driver's
3600 s; the runner's per-task clock defaults to all attempts' worth (`vtc_bench.official_task_timeout`).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from PIL import Image

from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.batch_form import reply_to_chunks
from toolsight.benchmarks.vtc_bench.profiles import DriverProfile
from toolsight.benchmarks.vtc_bench.qwen import (
    Item,
    MalformedFunctionCall,
    ModelServiceError,
    QMsg,
    accumulate,
    has_chinese,
    preprocess,
    to_wire,
)
from toolsight.benchmarks.vtc_bench.results import images_in_text
from toolsight.benchmarks.vtc_bench.settings import (
    ATTEMPT_TIMEOUT_S,
    DRIVER_RERUN_WAITS,
    render_user_prompt,
)
from toolsight.benchmarks.vtc_bench.tools.code import FILES_KEY, MODEL_KEY
from toolsight.benchmarks.vtc_bench.tools.interface import HINT_KEY, inside
from toolsight.calls.task import RawBatch
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import (
    Generate,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    TextPart,
    ToolCall,
    Usage,
)
from toolsight.models.batch.sdk_body import chat_batch_body
from toolsight.models.openai_provider import raw_chat_usage
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Toolbox

RERUN_WAITS = DRIVER_RERUN_WAITS
MALFORMED_RETRIES = 10

_RETRYABLE_TYPES = ("ReadTimeout", "ConnectTimeout", "ConnectionError", "HTTPError", "Timeout", "RemoteDisconnected")
_RETRYABLE_WORDS = ("429", "500", "503", "timeout", "Timeout", "connection", "Connection", "temporarily unavailable",
                    "rate limit", "Rate limit", "TPM limit", "request queue", "'NoneType' object", "is not iterable",
                    "None", "remote_failed", "service", "time")


class TaskTimeoutError(Exception):
    pass


class InvalidAnswer(ValueError):
    pass


def is_retryable_error(text: str, kind: str, attempt: int, attempts: int) -> bool:
    """The driver's `is_retryable_error` (keywords in the message, exception type names)."""
    if "TaskTimeoutError" in text or "TaskTimeoutError" in kind:
        return attempt < attempts - 1
    if any(t in kind for t in _RETRYABLE_TYPES):
        return True
    return any(w in text for w in _RETRYABLE_WORDS)


def should_retry_answer(answer: str | None, keywords: tuple[str, ...]) -> bool:
    """The driver's `should_retry_answer`: empty, or containing a refusal keyword (case-insensitive)."""
    if not answer or not answer.strip():
        return True
    low = answer.lower()
    return any(k in low for k in keywords)


def extract_answer(text: str | None, reasoning: str | None, previous: str | None) -> str | None:
    """The driver's answer extraction; `previous` is the value an earlier attempt left behind."""
    answer = previous
    if text and "<answer>" in text and "</answer>" in text:
        start = text.find("<answer>") + len("<answer>")
        answer = text[start:text.find("</answer>")].strip()
    if text and text.count("<|answer|>") >= 2:
        start = text.find("<|answer|>") + len("<|answer|>")
        answer = text[start:text.find("<|answer|>", start)].strip()
    if not answer and reasoning and "<answer>" in reasoning and "</answer>" in reasoning:
        start = reasoning.find("<answer>") + len("<answer>")
        answer = reasoning[start:reasoning.find("</answer>")].strip()
    return answer


def final_text(response: list[QMsg]) -> tuple[str | None, str | None]:
    """(response_text, reasoning_content) as the driver picks them: the last message with text."""
    text: str | None = None
    reasoning: str | None = None
    for msg in reversed(response):
        content = msg.content
        reasoning = msg.reasoning_content
        if isinstance(content, str) and content and content.strip():
            return content, reasoning
        if isinstance(content, list):
            for it in reversed(content):
                if it.text:
                    text = it.text
                    break
            if text:
                return text, reasoning
    return text, reasoning


class VTCOfficialAgent:
    """Runs one VTC-Bench task the way the official driver does (see the module docstring)."""

    def __init__(self, setting: Any, settings: AgentSettings, model: Model, generate: Generate,
                 profile: DriverProfile | None = None) -> None:
        self.vtc = setting  # a vtc_bench.VTCSetting (prompts, attempts, keywords)
        self.settings = settings
        self.model = model
        self.generate = generate
        self.model_id = str(getattr(model, "model_id", model.name))
        self.profile = profile or DriverProfile.for_model(self.model_id)
        self.raw = getattr(model, "chat_completions_raw", None)
        self.max_calls = settings.max_rounds

    # ---- the request -----------------------------------------------------------------------
    def _kwargs(self, messages: list[QMsg], tools: list[dict[str, Any]] | None, zh: bool, ws: Path) -> dict[str, Any]:
        g = self.settings.generate
        kwargs: dict[str, Any] = {"model": self.model_id,
                                  "messages": to_wire(preprocess(messages, bool(tools), zh), ws,
                                                      self.profile.gemini3_thinking),
                                  "stream": True}
        extra = dict(g.extra_body)
        for key, val in (("top_p", g.top_p), ("temperature", g.temperature), ("max_tokens", g.max_tokens),
                         ("seed", g.seed), ("stop", g.stop)):
            if val is not None:
                kwargs[key] = val
        if "presence_penalty" in extra:
            kwargs["presence_penalty"] = extra.pop("presence_penalty")
        if tools:
            kwargs["tools"] = tools
        if extra:
            kwargs["extra_body"] = {k: extra[k] for k in ("top_k", "repetition_penalty") if k in extra}
            kwargs["extra_body"].update({k: v for k, v in extra.items() if k not in kwargs["extra_body"]})
        if g.reasoning_effort is not None:
            kwargs["reasoning_effort"] = g.reasoning_effort
        self.profile.request_extras(kwargs)
        return kwargs

    async def _call_llm(self, messages: list[QMsg], tools: list[dict[str, Any]] | None, zh: bool, ws: Path,
                        traj: Trajectory, specs: list[ToolSpec]) -> list[QMsg]:
        kwargs = self._kwargs(messages, tools, zh, ws)
        traj.model_calls += 1
        try:
            if self.raw is None:
                return await self._fallback(kwargs, specs if tools else [], traj)
            call_raw = getattr(self.generate, "call_raw", None)
            timeout = self.settings.generate.timeout
            # batch mode: the same body without `stream` (a batch cannot stream), its reply as one chunk
            batch = RawBatch(chat_batch_body(kwargs), reply_to_chunks)

            async def once() -> Any:
                assert self.raw is not None
                return await self.raw(kwargs, timeout)

            # the client re-sends the same request after a malformed call, up to its max_retries (10),
            # then gives up with the same text as for any other failed call
            for attempt in range(MALFORMED_RETRIES + 1):

                chunks = await (call_raw(once, raw_chat_usage, request=kwargs, batch=batch) if call_raw is not None
                                else once())
                traj.usage = traj.usage + (raw_chat_usage(chunks) or Usage())
                try:
                    return accumulate(chunks)
                except MalformedFunctionCall:
                    if attempt == MALFORMED_RETRIES:
                        raise ModelServiceError(f"Maximum number of retries ({MALFORMED_RETRIES}) exceeded.") from None
            raise AssertionError("unreachable")
        except ModelError:
            # the driver retries every failed call inside its client, then gives up with this text
            raise ModelServiceError("Maximum number of retries (10) exceeded.") from None

    async def _fallback(self, kwargs: dict[str, Any], specs: list[ToolSpec], traj: Trajectory) -> list[QMsg]:
        """Providers without a raw Chat Completions call get the same messages as toolsight messages."""
        msgs = wire_to_messages(kwargs["messages"], self._images)
        g = self.settings.generate
        out = await self.generate(msgs, specs, GenerateConfig(
            temperature=g.temperature, top_p=g.top_p, max_tokens=g.max_tokens, seed=g.seed, stop=g.stop,
            reasoning_effort=g.reasoning_effort, timeout=g.timeout, extra_body=dict(g.extra_body)))
        traj.usage = traj.usage + out.usage
        res: list[QMsg] = []
        if out.message.reasoning:
            res.append(QMsg(role="assistant", content="", reasoning_content=out.message.reasoning))
        if out.message.text:
            res.append(QMsg(role="assistant", content=out.message.text))
        for c in out.message.tool_calls:
            res.append(QMsg(role="assistant", content="", function_call=(c.name, c.arguments),
                            extra={"function_id": c.id}, tool_call_id=c.id))
        return res

    # ---- one attempt: FnCallAgent._run --------------------------------------------------------
    async def _run_once(self, initial: list[QMsg], toolbox: Toolbox, zh: bool, traj: Trajectory,
                        attempt: int) -> tuple[list[QMsg], list[QMsg]]:
        ws = toolbox.store.workspace.resolve()
        specs = toolbox.specs()
        tools = [{"type": "function", "function": {"name": s.name, "description": s.description,
                                                   "parameters": s.parameters}} for s in specs]
        messages = [QMsg(role=m.role, content=list(m.content) if isinstance(m.content, list) else m.content)
                    for m in initial]
        execution = self.profile.execution_wording
        retry_prompt = P.NO_ANSWER_RETRY.replace("processing", "execution") if execution else P.NO_ANSWER_RETRY
        available = self.max_calls
        response: list[QMsg] = []
        num_retry = self.vtc.max_nudges
        rounds = 0
        while available > 0 and rounds < self.max_calls + 10:
            rounds += 1
            available -= 1
            offered = tools if available > 0 else None
            output = await self._call_llm(messages, offered, zh, ws, traj, specs)
            should_retry = False
            if available == 0 and num_retry > 0:
                if not output:
                    should_retry = True
                else:
                    first = output[0].content
                    if isinstance(first, str):
                        should_retry = "<answer>" not in first
                    else:
                        should_retry = any(it.text and "<answer>" not in it.text for it in first)
            if should_retry:
                available = 1
                num_retry -= 1
                nudge = QMsg(role="user", content=retry_prompt)
                messages.append(nudge)
                response.append(nudge)
                continue
            if not output:
                continue
            response.extend(output)
            messages.extend(output)
            used_tool = False
            for out in output:
                if not out.function_call:
                    continue
                used_tool = True
                name, args = out.function_call
                fid = (out.extra or {}).get("function_id", "1")
                # a tool with file access gets the conversation's files (the code interpreter copies them)
                toolbox.state[FILES_KEY] = list(dict.fromkeys(it.image for m in messages for it in m.items()
                                                              if it.image and isinstance(m.content, list)))
                result = await self._call_tool(name, args, fid, toolbox, traj, rounds, attempt)
                if isinstance(result, str):
                    result = images_in_text(result, ws)
                note = ""
                if 1 < available <= self.vtc.remaining_note_max:
                    note = self.vtc.remaining_note.format(n=available)
                if available == 1:
                    note += self._last_call_note(messages, execution)
                if note:
                    if isinstance(result, list):
                        result.append(Item(text=note))
                    else:
                        result += note
                for msg in self._tool_messages(name, fid, result):
                    messages.append(msg)
                    response.append(msg)
            if not used_tool:
                if any("<answer>" in t or "</answer>" in t for o in output for t in o.texts()):
                    break
                if available == 0:
                    available += 1
                    nudge = QMsg(role="user", content=self.vtc.final_nudge)
                else:
                    nudge = QMsg(role="user", content=self.vtc.continue_nudge)
                messages.append(nudge)
                response.append(nudge)
        return messages, response

    def _last_call_note(self, messages: list[QMsg], execution: bool) -> str:
        question = ""
        user = messages[1].content if len(messages) > 1 else ""
        if isinstance(user, list) and len(user) > 1 and user[1].text:
            m = re.search(r"<image>\n\n(.*?)\n\n### User Image Path", user[1].text, re.DOTALL)
            question = m.group(1) if m else ""
        note: str = self.vtc.last_call_note.format(question=question)
        if execution:
            note = note.replace("the previous processing", "the previous execution").replace(
                "<think>Your detailed reasoning process, should go here.</think>",
                "<think>Your detailed problem-solving approach, should go here.</think>")
        return note

    def _tool_messages(self, name: str, fid: Any, result: str | list[Item]) -> list[QMsg]:
        extra = {"function_id": fid}
        if not self.profile.images_in_user_message:
            return [QMsg(role="tool", content=result, name=name, tool_call_id=fid, extra=extra)]
        text: str | None = None
        images: list[Item] = []
        if isinstance(result, list):
            for it in result:
                if it.text:
                    text = it.text if text is None else text + "\n" + it.text
                if it.image:
                    images.append(it)
        else:
            text = result
        out = [QMsg(role="tool", content=text if text else P.TOOL_NO_TEXT, name=name, tool_call_id=fid,
                    extra=dict(extra))]
        if images:
            out.append(QMsg(role="user", content=[Item(text=P.TOOL_IMAGE_NOTE), *images]))
        return out

    async def _call_tool(self, name: str, args: str, fid: Any, toolbox: Toolbox, traj: Trajectory, rounds: int,
                         attempt: int) -> str | list[Item]:
        call_id = str(fid) if fid else f"call-{len(traj.tool_calls) + 1}"
        if name not in toolbox.tools:
            text = f"Tool {name} does not exists."
            traj.tool_calls.append(ToolCallRecord(id=call_id, turn=0, round=rounds, name=name, arguments=args,
                                                  ok=False, error=text, text=text, extra={"attempt": attempt}))
            return text
        res = await toolbox.call(name, args, call_id=call_id)
        official = res.extra.get("official")
        content: str | list[Item]
        if isinstance(official, dict) and official.get("form") == "str":
            content = str(official.get("text", res.text) or "")
        elif isinstance(official, dict):
            content = [Item(text=i.get("text"), image=i.get("image")) for i in official.get("items", [])]
        else:  # a toolsight tool: its text, then its images by path
            content = [Item(text=res.model_text())] + [Item(image=str(toolbox.store.path(a).resolve()))
                                                      for a in res.artifacts]
        shown = [it.image for it in content if it.image] if isinstance(content, list) else []
        for a, image in zip(res.artifacts, shown, strict=False):
            self._images[image] = a
        inputs = [i for i in res.extra.get("inputs", []) or [] if isinstance(i, str)]
        extra = {k: v for k, v in res.extra.items() if k not in ("duration_s", "inputs", "official")}
        extra["attempt"] = attempt
        traj.tool_calls.append(ToolCallRecord(
            id=call_id, turn=0, round=rounds, name=name, arguments=args, ok=res.ok, error=res.error,
            text=res.text, artifacts=[a.id for a in res.artifacts], inputs=inputs,
            duration_s=float(res.extra.get("duration_s", 0.0)),
            image_feedback="user" if self.profile.images_in_user_message else "tool", extra=extra))
        return content

    # ---- the task: process_single_item ------------------------------------------------------
    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        turn = task.turns[0]
        traj = Trajectory()
        t0 = time.monotonic()
        ws = toolbox.store.workspace.resolve()
        rel = turn.images[0].path if turn.images else ""
        src = inputs.get(rel)
        self._images: dict[str, Artifact] = {}
        if src is not None:
            target = ws / rel
            if not inside(target, ws):
                raise TaskFailed(f"image path {rel!r} leaves the task workspace", traj)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(toolbox.store.path(src), target)
            self._images[rel] = src
            self._images[str(target)] = src
        with Image.open(ws / rel) as im:
            width, height = im.size
        user_prompt = render_user_prompt(task, rel, width, height, self.vtc)
        toolbox.state[HINT_KEY] = rel
        toolbox.state[MODEL_KEY] = self.model_id  # the driver's code interpreter works in <model>/<task id>
        initial = [QMsg(role="system", content=self.settings.system_prompt or P.SYSTEM_DEFAULT),
                   QMsg(role="user", content=[Item(image=rel), Item(text=user_prompt)])]
        zh = has_chinese(rel) or has_chinese(user_prompt)
        attempts = self.vtc.task_attempts
        answer: str | None = None
        text: str | None = None
        reasoning: str | None = None
        messages: list[QMsg] = initial
        response: list[QMsg] = []
        for attempt in range(attempts):
            traj.tool_calls = []  # the record keeps the final attempt's calls (model_calls counts all)
            try:
                try:
                    messages, response = await asyncio.wait_for(
                        self._run_once(initial, toolbox, zh, traj, attempt), ATTEMPT_TIMEOUT_S)
                except TimeoutError:
                    raise TaskTimeoutError(f"Task '{task.id}' exceeded timeout of {ATTEMPT_TIMEOUT_S:.0f}s") from None
                text, reasoning = final_text(response)
                answer = extract_answer(text, reasoning, answer)
                if should_retry_answer(answer, self.vtc.retry_answer_keywords) and attempt < attempts - 1:
                    raise InvalidAnswer(f"Invalid agent answer: {answer if answer else '(empty) - answer contains invalid keywords or is empty'}")
                break
            except Exception as exc:
                msg, kind = str(exc), type(exc).__name__
                invalid = "Invalid agent answer" in msg
                if (is_retryable_error(msg, kind, attempt, attempts) or invalid) and attempt < attempts - 1:
                    await asyncio.sleep(RERUN_WAITS[min(attempt, len(RERUN_WAITS) - 1)])
                    continue
                self._finish(traj, messages, response, ws, text or "", answer, t0)
                traj.artifacts = toolbox.store.all()
                raise TaskFailed(f"{kind}: {msg}", traj) from exc
        self._finish(traj, messages, response, ws, text or "", answer, t0)
        traj.artifacts = toolbox.store.all()  # provenance for the toolchain metrics
        return traj

    def _finish(self, traj: Trajectory, messages: list[QMsg], response: list[QMsg], ws: Path, text: str,
                answer: str | None, t0: float) -> None:
        from toolsight.benchmarks.vtc_bench.scorer import driver_answer

        traj.messages = [qmsg_to_message(m, ws, self._images) for m in messages]
        seen = []
        for m in messages:
            for it in m.items():
                art = self._images.get(it.image or "")
                if art is not None and art.id not in seen:
                    seen.append(art.id)
        # the scorer reads the driver's answer from the response; when the driver took it from
        # elsewhere (reasoning, an earlier attempt) the record carries it explicitly
        scored = None if driver_answer(text) == answer else (f"<answer>{answer}</answer>" if answer is not None else "")
        traj.turns = [TurnResult(index=0, response=text, answer=answer, scored_response=scored,
                                 stop_reason="answered" if answer else "no_answer",
                                 rounds=sum(1 for m in response if m.role == "assistant" and not m.function_call),
                                 tool_calls=len(traj.tool_calls), seen_images=seen)]
        traj.stop_reason = traj.turns[0].stop_reason
        traj.duration_s = round(time.monotonic() - t0, 4)

    _images: dict[str, Artifact]


def qmsg_to_message(m: QMsg, ws: Path, images: dict[str, Artifact]) -> Message:
    """A driver message as a toolsight message (for the trajectory and the viewer)."""
    parts: list[TextPart | ImagePart] = []
    for it in m.items():
        if it.text:
            parts.append(TextPart(text=it.text))
        elif it.image and not it.image.startswith(("http://", "https://", "data:")):
            p = Path(it.image) if os.path.isabs(it.image) else ws / it.image
            art = images.get(it.image)
            parts.append(ImagePart(path=str(p), artifact_id=art.id if art else None))
    role = m.role if m.role in ("system", "user", "assistant", "tool") else "user"
    calls = [ToolCall(id=str(m.tool_call_id or ""), name=m.function_call[0], arguments=m.function_call[1])] \
        if m.function_call else []
    return Message(role=role, content=parts, tool_calls=calls, reasoning=m.reasoning_content or None,
                   tool_call_id=str(m.tool_call_id) if m.role == "tool" and m.tool_call_id else None,
                   name=m.name if m.role == "tool" else None)


def wire_to_messages(wire: list[dict[str, Any]], images: dict[str, Artifact]) -> list[Message]:
    """The driver's request messages for a provider without a raw Chat Completions call.

    Consecutive assistant messages (reasoning, content, each call) are merged into one; images
    travel as the driver encoded them (JPEG data URLs, written to a temporary file each).
    """
    import base64
    import hashlib
    import tempfile

    out: list[Message] = []
    tmp = Path(tempfile.gettempdir()) / "toolsight-vtc-official"
    for d in wire:
        parts: list[TextPart | ImagePart] = []
        for p in d.get("content") or []:
            if p.get("type") == "text":
                parts.append(TextPart(text=p["text"]))
            elif p.get("type") == "image_url":
                url = p["image_url"]["url"]
                if url.startswith("data:"):
                    data = base64.b64decode(url.split(",", 1)[1])
                    tmp.mkdir(parents=True, exist_ok=True)
                    f = tmp / f"{hashlib.sha256(data).hexdigest()[:24]}.jpg"
                    if not f.exists():
                        f.write_bytes(data)
                    parts.append(ImagePart(path=str(f), mime="image/jpeg"))
        calls = [ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
                 for c in d.get("tool_calls") or []]
        role = d["role"]
        if role == "assistant" and out and out[-1].role == "assistant" and not out[-1].tool_calls:
            prev = out[-1]
            out[-1] = prev.model_copy(update={"content": [*prev.content, *parts],
                                              "tool_calls": [*prev.tool_calls, *calls],
                                              "reasoning": prev.reasoning or d.get("reasoning_content")})
            continue
        if role == "assistant" and out and out[-1].role == "assistant" and calls and not parts:
            prev = out[-1]
            out[-1] = prev.model_copy(update={"tool_calls": [*prev.tool_calls, *calls]})
            continue
        out.append(Message(role=role, content=parts, tool_calls=calls, reasoning=d.get("reasoning_content"),
                           tool_call_id=d.get("tool_call_id") if role == "tool" else None,
                           name=d.get("name") if role == "tool" else None))
    return out


__all__ = ["RERUN_WAITS", "Usage", "VTCOfficialAgent", "extract_answer", "final_text", "images_in_text",
           "is_retryable_error", "should_retry_answer"]
