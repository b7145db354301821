"""VisBrowse-Bench's agent loop: the reference `infer.py` in official mode, and a corrected loop.

Official mode sends what the reference sends: the system prompt, the input prompt with the image
URLs ("url, " each) and the images, temperature 1, all tools with `tool_choice: auto`, and per
round one assistant reply. It reproduces, bugs included:

- an answer is group 1 of the first `<answer>(.*?)</answer>` (DOTALL) in the reply's content;
- all tool calls of a reply run, but only the **last** one's tool message is appended;
- tool results are lists of parts, images inlined (image search hits, crops);
- a tool call with an empty name appends "Please use the correct tool call format" instead;
- after 15 tool rounds "You must answer now …" is appended; a 16th reply without an answer, or
  eleven empty replies in a row, end the task with 'No answer';
- a reply with tool calls but no text, a reply naming a tool the reference does not have, or
  arguments that are not JSON crash the reference (its error handler raises again and the whole
  driver process exits): the task ends with stop reason `error`, no answer and the reason in
  `Trajectory.loop_error` (a run error in the summary; the crashing reply's calls never ran and are
  not tool calls), and the run goes on; a reply with neither an answer nor a tool call re-sends
  the previous round's tool message (the reference's stale `tool_call` variable), or crashes when
  there is none.

The corrected (`loop: toolsight`) mode answers every call in order, shows tool errors to the model
instead of crashing, nudges a reply that has neither an answer nor a tool call (twice at most),
puts tool images in a following user message when the provider wants them there, and forbids the
tools on the last call (`tool_choice: none`; a tool call made anyway is not run, and the task ends
`max_rounds` as before). It only appends to the conversation, so each request repeats the previous
one and asks for prompt caching as the toolsight agent loop does (`GenerateConfig.prompt_cache`:
`write` while tools may be called, `read` on the last call, which keeps the tool definitions — the
start of the cached prefix — rather than dropping them). The setting's `tool_choice: "auto"` (in
`extra_body`, for the reference's wire) becomes `GenerateConfig.tool_choice`, which each provider's
adapter spells its own way.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from toolsight.agents.answer import extract_answer
from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.visbrowse_bench.wire import INLINE_WIRE, SDK_WIRE
from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import (
    Generate,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    ModelOutput,
    TextPart,
    ToolCall,
)
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Toolbox, ToolResult
from toolsight.web import maybe_session

ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
MAX_STEPS = 15
GEN_TIMES = 10
MAX_NUDGES = 2
MUST_ANSWER = ("You must answer now based on the information gathered, and put answer in <answer> ... </answer> "
               "tags")
BAD_FORMAT = "Please use the correct tool call format"
NUDGE = ("You gave neither a tool call nor an answer. Call one tool, or give your final answer inside "
         "<answer></answer> tags.")
NO_ANSWER = "No answer"
#: the tool names the reference's `tools_map` knows; any other name is a KeyError there
REFERENCE_TOOLS = ("text_search", "reverse_image_search", "visit", "image_search", "image_crop")


def image_urls(task: Task) -> list[str]:
    urls = task.turns[0].meta.get("image_urls")
    return [str(u) for u in urls] if isinstance(urls, list) else []


def render_input(template: str, question: str, urls: list[str]) -> str:
    """The reference's user text: `{Image_url}` is each URL followed by ", " (trailing one too)."""
    return template.replace("{Image_url}", "".join(u + ", " for u in urls)).replace("{Question}", question)


class VisBrowseAgent:
    """One task through the reference loop (`official=True`) or the corrected one."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate, official: bool,
                 inline_images: bool = False) -> None:
        self.model = model
        self.settings = settings
        self.generate = generate
        self.official = official
        self.images_in_tool = official or model.tool_image_mode == "tool"
        #: official: the driver's request shapes (wire.py); images by URL unless inlined (-B inline_images)
        wire = (INLINE_WIRE if inline_images else SDK_WIRE) if official else None
        self.config = settings.generate.model_copy(update={"wire": wire}) if wire is not None else settings.generate
        #: the last call's settings: the official loop's are the same; the corrected loop's forbid the tools
        self.final_config = self.config
        if not official and self.config.wire is None:
            self.config, self.final_config = _corrected_configs(self.config)

    # ---- inputs ---------------------------------------------------------------------------
    def _input_urls(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> list[str]:
        """The URLs the prompt names, each served by the session's image host (no network needed)."""
        urls = image_urls(task)
        session = maybe_session()
        out: list[str] = []
        for i, ref in enumerate(task.turns[0].images):
            art = inputs.get(ref.path)
            data = toolbox.store.path(art).read_bytes() if art is not None else None
            url = urls[i] if i < len(urls) else None
            if session is not None and data is not None:
                if url:
                    session.alias(url, data)
                else:
                    url = session.host_image(data)
            out.append(url or (art.file if art is not None else ref.path))
        return out

    # ---- model calls --------------------------------------------------------------------------
    async def _reply(self, msgs: list[Message], specs: list[Any], traj: Trajectory,
                     final: bool = False) -> ModelOutput | None:
        """One reply with content or tool calls; None after the reference's 11 empty tries."""
        # a request without tools only reads the cache, as the toolsight agent loop's (a cache write costs more)
        config = self.final_config if final or not specs else self.config
        for _ in range(GEN_TIMES + 1):
            try:
                out = await self.generate([_fetchable_images(m) for m in msgs], specs, config)
            except ModelError as exc:
                raise TaskFailed(f"model error: {exc}", traj) from exc
            traj.model_calls += 1
            traj.usage = traj.usage + out.usage
            if out.cached:
                traj.cache_hits += 1
            if out.message.text or out.message.tool_calls:
                return out
            traj.retries += 1
        return None

    # ---- the loop -----------------------------------------------------------------------------
    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        s = self.settings
        traj = Trajectory()
        t0 = time.monotonic()
        turn = task.turns[0]
        urls = self._input_urls(task, toolbox, inputs)
        question = str(turn.meta.get("question", turn.prompt))
        user_parts: list[TextPart | ImagePart] = [TextPart(text=render_input(s.user_template, question, urls))]
        input_arts = [inputs[i.path] for i in turn.images if i.path in inputs]
        user_parts += [ImagePart(path=str(toolbox.store.path(a)), artifact_id=a.id, url=_web_url(url))
                       for a, url in zip(input_arts, urls, strict=False)]
        msgs: list[Message] = []
        if s.system_prompt:
            msgs.append(Message.system(s.system_prompt))
        msgs.append(Message(role="user", content=user_parts))
        specs = toolbox.specs() if s.tools else []
        seen = [a.id for a in input_arts]
        state = _State()
        try:
            stop, response, answer = await self._loop(task, toolbox, msgs, specs, traj, seen, state)
        except TaskFailed as exc:
            exc.trajectory.messages = msgs
            exc.trajectory.artifacts = toolbox.store.all()
            raise
        traj.messages = msgs
        traj.turns.append(TurnResult(index=0, response=response, answer=answer, stop_reason=stop,
                                     rounds=state.rounds, tool_calls=state.calls, seen_images=seen))
        traj.stop_reason = stop
        traj.artifacts = toolbox.store.all()
        traj.duration_s = round(time.monotonic() - t0, 4)
        return traj

    async def _loop(self, task: Task, toolbox: Toolbox, msgs: list[Message], specs: list[Any], traj: Trajectory,
                    seen: list[str], st: _State) -> tuple[StopReason, str, str | None]:
        max_steps = self.settings.max_rounds
        last_tool_msg: Message | None = None
        while True:
            out = await self._reply(msgs, specs, traj, final=max_steps == 0)
            st.rounds += 1
            if out is None:
                return "no_answer", "", None
            msg = out.message
            msgs.append(msg)
            content = msg.text
            if self.official and not content and msg.tool_calls:
                self._crash(traj, msg.tool_calls, "a reply with tool calls and no text content "
                            "(re.search on None raises TypeError)")
                return "error", "", None
            m = ANSWER.search(content)
            if m:
                answer = m.group(1) if self.official else extract_answer(content, "answer_tag")
                return "answered", content, answer
            if max_steps == 0:
                return "max_rounds", content, None
            calls = msg.tool_calls if specs or self.official else []
            if calls:
                tool_msgs = await self._run_calls(calls, toolbox, traj, seen, st)
                if tool_msgs is None:
                    return "error", "", None
                msgs.extend(tool_msgs)
                if tool_msgs and tool_msgs[0].role == "tool":
                    last_tool_msg = tool_msgs[-1] if self.official else None
            elif self.official:
                if last_tool_msg is None:
                    self._crash(traj, [], "a reply with neither an answer nor a tool call before any tool "
                                "call (the reference's `tool_call` is unbound)")
                    return "error", "", None
                msgs.append(last_tool_msg.model_copy())  # the reference re-sends the stale tool message
            else:
                st.nudges += 1
                if st.nudges > MAX_NUDGES:
                    return "no_answer", content, None
                msgs.append(Message.user(NUDGE))
            max_steps -= 1
            if max_steps == 0:
                msgs.append(Message.user(MUST_ANSWER))

    @staticmethod
    def _crash(traj: Trajectory, calls: list[ToolCall], why: str) -> None:
        """Where the reference's loop raises: the task ends here (`loop_error`). The reply's calls
        never ran, so they are not tool calls (no record, no tool metrics)."""
        named = f" (the reply asked for {', '.join(repr(c.name) for c in calls)})" if calls else ""
        traj.loop_error = (f"the reference loop crashes here: {why}{named}; the driver's process exits, writing "
                           "nothing for this task or any later one")

    async def _run_calls(self, calls: list[ToolCall], toolbox: Toolbox, traj: Trajectory, seen: list[str],
                         st: _State) -> list[Message] | None:
        """Run a reply's calls; the messages to append (official: one for the last call), None = crash."""
        built: list[tuple[ToolCall, list[TextPart | ImagePart]]] = []
        for call in calls:
            if call.name == "":
                return [Message.user(BAD_FORMAT)]
            if self.official:
                if call.name not in REFERENCE_TOOLS and call.name not in toolbox.aliases:
                    self._crash(traj, [call], f"unknown tool {call.name!r} (KeyError in tools_map)")
                    return None
                try:
                    json.loads(call.arguments)
                except json.JSONDecodeError:
                    self._crash(traj, [call], "tool arguments that are not JSON (json.loads raises)")
                    return None
            st.calls += 1
            result = await toolbox.call(call.name, call.arguments, call_id=call.id)
            parts = self._parts(result, toolbox)
            rec = ToolCallRecord(
                id=call.id, turn=0, round=st.rounds, name=call.name, arguments=call.arguments, ok=result.ok,
                error=result.error, text=result.text or result.model_text(), artifacts=[a.id for a in result.artifacts],
                inputs=[p for p in result.extra.get("inputs", []) or [] if isinstance(p, str)],
                duration_s=float(result.extra.get("duration_s", 0.0)),
                extra={k: v for k, v in result.extra.items() if k not in ("duration_s", "inputs", "parts")},
            )
            traj.tool_calls.append(rec)
            built.append((call, parts))
        if self.official:
            for call, _ in built[:-1]:
                for rec in traj.tool_calls:
                    if rec.id == call.id:
                        rec.extra["dropped_by_official_loop"] = True  # ran, but the model never sees it
            built = built[-1:]
        out: list[Message] = []
        later_images: list[ImagePart] = []
        for call, parts in built:
            images = [p for p in parts if isinstance(p, ImagePart)]
            rec = next(r for r in traj.tool_calls if r.id == call.id)
            if images and not self.images_in_tool:
                text = "".join(p.text for p in parts if isinstance(p, TextPart))
                ids = ", ".join(p.artifact_id or "" for p in images)
                out.append(Message(role="tool", tool_call_id=call.id, name=call.name,
                                   content=[TextPart(text=f"{text}\n[image(s) {ids} attached in the next user message]")]))
                later_images += images
                rec.image_feedback = "user"
            else:
                out.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=parts))
                rec.image_feedback = "tool" if images else "none"
            seen.extend(p.artifact_id or "" for p in images)
        if later_images:
            out.append(Message.user(self.settings.tool_image_note.format(call_id=", ".join(c.id for c, _ in built)),
                                    images=later_images))
        return out

    @staticmethod
    def _parts(result: ToolResult, toolbox: Toolbox) -> list[TextPart | ImagePart]:
        raw = result.extra.get("parts")
        if not isinstance(raw, list) or not raw:
            return [TextPart(text=result.model_text())]
        parts: list[TextPart | ImagePart] = []
        for p in raw:
            if p.get("type") == "image":
                art = toolbox.store.get(str(p.get("artifact")))
                if art is not None:  # by its URL where the reference sends one (a crop), else inlined
                    url = p.get("url")
                    parts.append(ImagePart(path=str(toolbox.store.path(art)), artifact_id=art.id,
                                           mime=_mime(toolbox.store.path(art)),
                                           url=_web_url(url) if isinstance(url, str) else None))
            else:
                parts.append(TextPart(text=str(p.get("text", ""))))
        return parts


def _corrected_configs(config: GenerateConfig) -> tuple[GenerateConfig, GenerateConfig]:
    """The corrected loop's (per-call, last-call) generation settings: prompt caching as the toolsight
    agent loop asks for it, and `tool_choice` as a setting every adapter maps (`auto` from the
    reference's `extra_body`; `none` on the last call)."""
    extra = dict(config.extra_body)
    choice = config.tool_choice
    if extra.get("tool_choice") == "auto":
        choice = extra.pop("tool_choice")
    calls = config.model_copy(update={"extra_body": extra, "tool_choice": choice, "prompt_cache": "write"})
    return calls, calls.model_copy(update={"tool_choice": "none", "prompt_cache": "read"})


def _web_url(url: str | None) -> str | None:
    """An image's web URL (the dataset's, a crop's), or None for a file name: an image without one is inlined."""
    return url if url and url.startswith(("http://", "https://")) else None


def _fetchable_images(m: Message) -> Message:
    """`m` as it is sent: an image toolsight hosts goes by its image host's address (the run's port),
    which a model server can fetch; the trajectory keeps the stable hosted URL."""
    session = maybe_session()
    if session is None or not any(isinstance(p, ImagePart) and p.url for p in m.content):
        return m
    parts = [p.model_copy(update={"url": session.fetchable(p.url)}) if isinstance(p, ImagePart) and p.url else p
             for p in m.content]
    return m.model_copy(update={"content": parts})


def _mime(path: Path) -> str:
    return {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
            ".webp": "image/webp"}.get(path.suffix.lower(), "image/png")


class _State:
    __slots__ = ("calls", "nudges", "rounds")

    def __init__(self) -> None:
        self.rounds = 0
        self.calls = 0
        self.nudges = 0
