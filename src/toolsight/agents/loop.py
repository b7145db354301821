"""The agent loop: model and tools alternate until the model answers or a cap is hit.

Images a tool produces go back to the model inside the tool message (where the provider accepts
it) or as a placeholder in the tool message plus a following user message with the images. The
path taken is recorded per call. Every model call goes through `Generate`, which the runner wraps
with retries, the connection limit and the response cache.

In the toolsight loop (`settings.loop == "toolsight"`) a request never rewrites the messages the
previous one sent — it only appends — so providers' prompt caches serve each round's prefix: the
image budget is decided once per image (`images.ImageBudget`), downscaled copies are made once per
image, and requests ask for prompt caching (`GenerateConfig.prompt_cache`: Anthropic breakpoints; `write`
when the request offers tools, so another round may read it, else only `read`). The last round of
`no_tools_on_last_round` keeps the tool definitions, which open the cached prefix, and forbids their
use (`GenerateConfig.tool_choice = "none"`); a tool call the model makes anyway is ignored, as on
the official loop's last round, which offers no tools.
Official loops subclassing `Agent` keep the sliding image window and send no cache marks.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

from toolsight.agents.answer import extract_answer
from toolsight.agents.images import ImageBudget, apply_image_budget, fit_pixels
from toolsight.agents.settings import AgentSettings
from toolsight.agents.textproto import describe_tools, parse_tool_calls
from toolsight.log.toolspec import ToolSpec
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
from toolsight.tasks.schema import Task, Turn
from toolsight.tools.base import Artifact, Toolbox


@dataclass
class _TurnState:
    """What one turn has built so far: its messages, the images the model saw, counters."""

    msgs: list[Message]
    seen: list[str]
    budget: ImageBudget | None = None
    calls_used: int = 0
    nudges: int = 0
    rounds: int = 0


class TaskFailed(Exception):
    """The task ended with an error (model error after retries); carries the partial trajectory."""

    def __init__(self, message: str, trajectory: Trajectory) -> None:
        super().__init__(message)
        self.trajectory = trajectory


#: `{image_note}` in a user template: how tools can name the turn's input images
INPUT_IMAGE_NOTE = ("\n\nInput image file(s): {names}. Tools take an image by this file name, or by the id of an "
                    "image a tool produced.")


def _render_prompt(settings: AgentSettings, turn: Turn, image_names: list[str]) -> str:
    options = ""
    if turn.options:
        options = "\n".join(f"{k}. {v}" for k, v in turn.options.items())
    return settings.user_template.format(
        prompt=turn.prompt,
        options=options,
        image_names=", ".join(image_names),
        # for templates that name the inputs to tools (toolsight's generic tool settings); empty without images
        image_note=(INPUT_IMAGE_NOTE.format(names=", ".join(image_names)) if image_names else ""),
        **{k: v for k, v in turn.meta.items() if isinstance(v, str | int | float)},
    )


#: the prompt a setting's user template makes for a turn (also used by other agents)
render_prompt = _render_prompt


class Agent:
    """Runs one task. Stateless across tasks; construct one per task or reuse."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate | None = None) -> None:
        self.model = model
        self.settings = settings
        self.generate: Generate = generate or model.generate
        mode = settings.image_feedback
        self.image_mode = model.tool_image_mode if mode == "auto" else mode
        self.text_protocol = (
            settings.text_protocol if settings.text_protocol is not None else not model.native_tools
        )
        self.toolsight_loop = settings.loop == "toolsight" and settings.generate.wire is None

    # the generation settings of a round, each made when first used (an agent runs one task: a copy
    # it never needs is a pydantic copy per task for nothing)
    @functools.cached_property
    def config(self) -> GenerateConfig:
        """A round that offers tools: in the toolsight loop it may be followed by one that reads it."""
        g = self.settings.generate
        return g.model_copy(update={"prompt_cache": "write"}) if self.toolsight_loop else g

    @functools.cached_property
    def last_config(self) -> GenerateConfig:
        """A round that offers no tools: nothing follows it, so it only reads."""
        g = self.settings.generate
        return g.model_copy(update={"prompt_cache": "read"}) if self.toolsight_loop else g

    @functools.cached_property
    def forbid_config(self) -> GenerateConfig:
        """The toolsight loop's tools-forbidden last round (`_offer`)."""
        return self.last_config.model_copy(update={"tool_choice": "none"})

    def _image_part(self, art: Artifact, toolbox: Toolbox) -> ImagePart:
        path = toolbox.store.path(art)
        sent = fit_pixels(path, self.settings.max_image_pixels, lambda: toolbox.store.workspace / ".sent",
                          size=(art.width, art.height))
        return ImagePart(path=str(sent), artifact_id=art.id)

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        """Run every turn of `task`. `inputs` maps dataset image paths to their input artifacts."""
        s = self.settings
        traj = Trajectory()
        t_start = time.monotonic()
        specs = toolbox.specs() if s.tools else []
        system = s.system_prompt
        if self.text_protocol and specs:
            system = ((system + "\n\n") if system else "") + describe_tools(specs)
        history: list[Message] = []
        if system:
            history.append(Message.system(system))
        traj.messages.extend(history)
        for ti, turn in enumerate(task.turns):
            result, turn_msgs = await self._run_turn(ti, turn, toolbox, inputs, history, traj, t_start)
            traj.turns.append(result)
            traj.messages.extend(turn_msgs)
            if result.stop_reason in ("time_limit", "max_tokens"):
                traj.stop_reason = result.stop_reason
                break
            if ti + 1 == len(task.turns):
                break
            # history for the next turn: the user prompt and the answer (model's own or gold)
            user = turn_msgs[0]
            if not s.history_images:
                user = Message.user(user.text)
            reply = result.response
            if s.history == "gold" and turn.answer is not None:
                reply = turn.answer if isinstance(turn.answer, str) else ", ".join(turn.answer)
            history = [*history, user, Message(role="assistant", content=[TextPart(text=reply)])]
        traj.artifacts = toolbox.store.all()
        traj.duration_s = round(time.monotonic() - t_start, 4)
        if traj.turns and traj.stop_reason == "answered":
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj

    async def _call_model(self, msgs: list[Message], specs: list[ToolSpec], traj: Trajectory,
                          budget: ImageBudget | None = None, forbid: bool = False) -> ModelOutput:
        """One model call; `budget` (the toolsight loop's, one per turn) decides which images are sent,
        else the newest `max_images_in_context` are; `forbid`: the tools are sent but may not be called."""
        if budget is not None:
            prepared = budget.apply(msgs)
        else:
            prepared = apply_image_budget(msgs, self.settings.max_images_in_context)
        config = self.forbid_config if forbid else self.config if specs else self.last_config
        out = await self.generate(prepared, [] if self.text_protocol else specs, config)
        traj.model_calls += 1
        traj.usage = traj.usage + out.usage
        if out.cached:
            traj.cache_hits += 1
        if self.text_protocol and not out.message.tool_calls:
            calls = parse_tool_calls(out.message.text, traj.model_calls)
            if calls:
                out = out.model_copy(update={"message": out.message.model_copy(update={"tool_calls": calls})})
        return out

    async def _run_turn(
        self,
        ti: int,
        turn: Turn,
        toolbox: Toolbox,
        inputs: dict[str, Artifact],
        history: list[Message],
        traj: Trajectory,
        t_start: float,
    ) -> tuple[TurnResult, list[Message]]:
        """One user turn: model rounds and tool calls until an answer or a cap; its result and messages."""
        s = self.settings
        st = self._open_turn(turn, toolbox, inputs)
        specs = toolbox.specs() if s.tools else []
        stop: StopReason = "answered"
        response = ""
        while True:
            capped = self._cap_before_round(st.rounds, traj, t_start)
            if capped is not None:
                stop = capped
                break
            offer, forbid = self._offer(specs, last_round=st.rounds == s.max_rounds - 1)
            st.rounds += 1
            try:
                out = await self._call_model([*history, *st.msgs], offer, traj, st.budget, forbid)
            except ModelError as exc:
                traj.stop_reason = "model_error"
                traj.messages.extend(st.msgs)
                traj.turns.append(
                    TurnResult(index=ti, response="", stop_reason="model_error", rounds=st.rounds,
                               tool_calls=st.calls_used, seen_images=st.seen)
                )
                raise TaskFailed(f"model error: {exc}", traj) from exc
            st.msgs.append(out.message)
            response = out.message.text
            tool_calls = out.message.tool_calls if (offer and not forbid) or self.text_protocol else []
            if not tool_calls:
                if self._nudged(st, response):
                    continue
                stop = "answered" if response.strip() else "no_answer"
                break
            if st.calls_used >= s.max_tool_calls:
                stop = "max_tool_calls"
                response = s.cap_answer or response
                break
            await self._tool_round(st, tool_calls, ti, turn, toolbox, traj)
        return (
            TurnResult(
                index=ti, response=response, answer=extract_answer(response, s.answer_format),
                stop_reason=stop, rounds=st.rounds, tool_calls=st.calls_used, seen_images=st.seen,
            ),
            st.msgs,
        )

    def _offer(self, specs: list[ToolSpec], last_round: bool) -> tuple[list[ToolSpec], bool]:
        """The tools a round offers, and whether it forbids calling them. On the last round of
        `no_tools_on_last_round` the official loop (and a text-protocol one) offers none; the toolsight
        loop keeps them in the request — they open the cached prefix — with `tool_choice: none`."""
        if not specs or not (self.settings.no_tools_on_last_round and last_round):
            return specs, False
        if self.toolsight_loop and not self.text_protocol:
            return specs, True
        return [], False

    def _open_turn(self, turn: Turn, toolbox: Toolbox, inputs: dict[str, Artifact]) -> _TurnState:
        """The turn's user message with its images (all, or the first only)."""
        s = self.settings
        images = [inputs[i.path] for i in turn.images if i.path in inputs]
        if s.send_images == "first":
            images = images[:1]
        names = [a.file for a in images]
        user = Message.user(
            _render_prompt(s, turn, names), images=[self._image_part(a, toolbox) for a in images]
        )
        budget = ImageBudget(s.max_images_in_context) if self.toolsight_loop else None
        return _TurnState(msgs=[user], seen=[a.id for a in images], budget=budget)

    def _cap_before_round(self, rounds: int, traj: Trajectory, t_start: float) -> StopReason | None:
        """The cap that stops the turn before another model round, if any."""
        s = self.settings
        if rounds >= s.max_rounds:
            return "max_rounds"
        if s.time_limit_s is not None and time.monotonic() - t_start > s.time_limit_s:
            return "time_limit"
        if s.max_total_tokens is not None and traj.usage.total_tokens >= s.max_total_tokens:
            return "max_tokens"
        return None

    def _nudged(self, st: _TurnState, response: str) -> bool:
        """Ask again (the benchmark's nudge) when a reply has no extractable answer and nudges are left."""
        s = self.settings
        if not (s.nudge and st.nudges < s.max_nudges and extract_answer(response, s.answer_format) is None
                and st.rounds < s.max_rounds):
            return False
        st.nudges += 1
        final = s.final_nudge and st.rounds == s.max_rounds - 1
        st.msgs.append(Message.user(s.final_nudge if final and s.final_nudge else s.nudge))
        return True

    async def _tool_round(self, st: _TurnState, tool_calls: list[ToolCall], ti: int, turn: Turn,
                          toolbox: Toolbox, traj: Trajectory) -> None:
        """Run a reply's tool calls; append the tool messages (with the remaining-rounds note) and any
        images that go back in a following user message."""
        s = self.settings
        feedback: list[ImagePart] = []
        feedback_ids: list[str] = []
        tool_msgs: list[Message] = []
        for call in tool_calls:
            if st.calls_used >= s.max_tool_calls:
                rec_text = "Tool-call limit reached; no more tools can be called. Give your final answer."
                tool_msgs.append(self._tool_message(call, rec_text, []))
                continue
            st.calls_used += 1
            record, parts = await self._run_tool(call, ti, st.rounds, toolbox)
            traj.tool_calls.append(record)
            if parts and self.image_mode == "tool":
                tool_msgs.append(self._tool_message(call, record.text, parts))
                record.image_feedback = "tool"
                st.seen.extend(p.artifact_id or "" for p in parts)
            elif parts:
                ids = ", ".join(p.artifact_id or "" for p in parts)
                text = f"{record.text}\n[image(s) {ids} attached in the next user message]"
                tool_msgs.append(self._tool_message(call, text, []))
                record.image_feedback = "user"
                feedback.extend(parts)
                feedback_ids.append(call.id)
            else:
                tool_msgs.append(self._tool_message(call, record.text, []))
        note = self._remaining_note(turn, st.rounds) if tool_msgs else None
        if note:
            tool_msgs[-1] = self._append_text(tool_msgs[-1], note)
        st.msgs.extend(tool_msgs)
        if feedback:
            note = s.tool_image_note.format(call_id=", ".join(feedback_ids))
            st.msgs.append(Message.user(note, images=feedback))
            st.seen.extend(p.artifact_id or "" for p in feedback)

    def _remaining_note(self, turn: Turn, rounds: int) -> str | None:
        """The benchmark's "N calls left" note (or its last-round note) after this round, if due."""
        s = self.settings
        left = s.max_rounds - rounds
        if not 0 < left <= s.remaining_note_from:
            return None
        if left == 1 and s.last_round_note:
            return s.last_round_note.replace("{question}", turn.prompt)
        if s.remaining_note:
            return s.remaining_note.format(n=left)
        return None

    def _tool_message(self, call: ToolCall, text: str, images: list[ImagePart]) -> Message:
        if self.text_protocol:
            return Message(
                role="user",
                content=[TextPart(text=f"<tool_response>\n{text}\n</tool_response>"), *images],
            )
        return Message(
            role="tool", tool_call_id=call.id, name=call.name, content=[TextPart(text=text), *images]
        )

    @staticmethod
    def _append_text(msg: Message, note: str) -> Message:
        parts = list(msg.content)
        if parts and isinstance(parts[0], TextPart):
            parts[0] = TextPart(text=f"{parts[0].text}\n\n{note}")
        else:
            parts.insert(0, TextPart(text=note))
        return msg.model_copy(update={"content": parts})

    async def _run_tool(
        self, call: ToolCall, ti: int, round_no: int, toolbox: Toolbox
    ) -> tuple[ToolCallRecord, list[ImagePart]]:
        result = await toolbox.call(call.name, call.arguments, call_id=call.id)
        produced = list(result.artifacts)
        # what the call resolved (Toolbox records it); else the parents of what it produced
        inputs: list[str] = [p for p in result.extra.get("inputs", []) or [] if isinstance(p, str)]
        if not inputs:
            for a in produced:
                inputs.extend(p for p in a.parents if p not in inputs)
        extra = {k: v for k, v in result.extra.items() if k not in ("duration_s", "inputs")}
        record = ToolCallRecord(
            id=call.id, turn=ti, round=round_no, name=call.name, arguments=call.arguments, ok=result.ok,
            error=result.error, text=result.model_text(), artifacts=[a.id for a in produced], inputs=inputs,
            duration_s=float(result.extra.get("duration_s", 0.0)), extra=extra,
        )
        parts = [self._image_part(a, toolbox) for a in produced]
        return record, parts
