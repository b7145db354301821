"""VisualToolBench's official loop: `FunC_with_tools` and the two drivers, request for request.

What it reproduces (reference `scripts/model_inference.py`, `run_model_response_{single,multi}_turn.py`):

- each turn starts a fresh tool loop: the system prompt (if the setting has one), then the earlier
  turns as text only (user prompt, then the **gold** answer by default, `history: model` for the
  model's own), then the user turn `[text, image]` with **only the turn's first image**, every
  image re-encoded as JPEG quality 85;
- a round is one model call; its tool calls run in order, each answered by a `tool` message whose
  content is `str(observation_dict)`; a `python_image_processing` call that saved new images is
  followed at once by a `user` message "Here are the transformed images from the tool call {id}."
  with those images, and their paths join the image list shown in the next round's tool
  description;
- the cap counts **rounds** (`max_tool_calls`, 20): after the 20th round that asked for tools the
  turn's answer is the literal "Model hit the maximum number of tool calls";
- a tool name the setting does not offer, or arguments that are not JSON, end the task in the
  reference (`Processing Error: …` replaces its answer): here the turn's answer is that string and
  the task stops (stop reason `error`, the reason in `Trajectory.loop_error`: scored as the driver
  scores it, and a run error in the run's summary); the call that crashed never ran and is not a
  tool call;
- the no-tool setting sends no system prompt; single-turn tasks get `[text, image]`, multi-turn
  tasks only the text history and the prompt — the reference's multi-turn no-tool branch sends no
  image at all.

Deviation kept on purpose (docs/fidelity.md): a model call that still fails after the runner's
retries fails the task (a run error, resumable) instead of scoring the text "Model inference failed…".
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from PIL import Image

from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.benchmarks.visualtoolbench.tools import (
    IMAGE_TOOL,
    OfficialTools,
    TurnFiles,
    UnknownOfficialTool,
    start_turn,
)
from toolsight.benchmarks.visualtoolbench.wire import LITELLM_WIRE
from toolsight.log.toolspec import ToolSpec
from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import (
    Generate,
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

JPEG_QUALITY = 85


def jpeg_part(path: Path, artifact_id: str | None, cache: Path) -> ImagePart:
    """The reference's `encode_image_to_base64`: RGB, JPEG quality 85, optimize — as an image part."""
    out = cache / f"{artifact_id or path.stem}.q{JPEG_QUALITY}.jpg"
    if not out.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with Image.open(path) as img:
            rgb = img if img.mode == "RGB" else img.convert("RGB")
            tmp = out.with_suffix(".tmp")
            rgb.save(tmp, format="JPEG", quality=JPEG_QUALITY, optimize=True)
            tmp.replace(out)
    return ImagePart(path=str(out), artifact_id=artifact_id, mime="image/jpeg")


def _user(text: str, images: list[ImagePart]) -> Message:
    # text first, then the images: the reference's content order (Message.user puts images first)
    return Message(role="user", content=[TextPart(text=text), *images])


class VTBOfficialAgent:
    """Runs one task the way the reference driver does (see the module docstring)."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate) -> None:
        self.model = model
        self.settings = settings
        self.generate = generate
        #: the driver's request settings, sent in the shapes its LiteLLM client sends (wire.py)
        self.config = settings.generate.model_copy(update={"wire": LITELLM_WIRE})

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        s = self.settings
        traj = Trajectory()
        t0 = time.monotonic()
        tools = OfficialTools(toolbox) if s.tools else None
        history: list[Message] = []
        if tools is not None and s.system_prompt:
            traj.messages.append(Message.system(s.system_prompt))
        for ti, turn in enumerate(task.turns):
            first = next((inputs[i.path] for i in turn.images if i.path in inputs), None)
            name = Path(turn.images[0].path).name if turn.images else None
            if tools is not None:
                result, msgs = await self._tool_turn(ti, turn, task, toolbox, tools, first, name, history, traj)
            else:
                result, msgs = await self._plain_turn(ti, turn, task, toolbox, first, history, traj)
            traj.turns.append(result)
            traj.messages.extend(msgs)
            if result.stop_reason == "error":
                traj.stop_reason = "error"
                break
            answer = result.response
            if s.history == "gold":
                answer = turn.answer if isinstance(turn.answer, str) else ", ".join(turn.answer or [])
            history = [*history, Message.user(turn.prompt), Message(role="assistant", content=[TextPart(text=answer)])]
        traj.artifacts = toolbox.store.all()
        traj.duration_s = round(time.monotonic() - t0, 4)
        if traj.turns and traj.stop_reason == "answered":
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj

    async def _call(self, msgs: list[Message], specs: list[ToolSpec], traj: Trajectory) -> ModelOutput:
        try:
            out = await self.generate(msgs, specs, self.config)
        except ModelError as exc:
            traj.stop_reason = "model_error"
            raise TaskFailed(f"model error: {exc}", traj) from exc
        traj.model_calls += 1
        traj.usage = traj.usage + out.usage
        if out.cached:
            traj.cache_hits += 1
        return out

    def _image(self, art: Artifact, toolbox: Toolbox) -> ImagePart:
        return jpeg_part(toolbox.store.path(art), art.id, toolbox.store.workspace / ".sent")

    async def _plain_turn(self, ti: int, turn: Turn, task: Task, toolbox: Toolbox, first: Artifact | None,
                          history: list[Message], traj: Trajectory) -> tuple[TurnResult, list[Message]]:
        if task.is_multi_turn:  # the reference's multi-turn no-tool branch: text only, no image
            user = Message.user(turn.prompt)
            seen: list[str] = []
        else:
            user = _user(turn.prompt, [self._image(first, toolbox)] if first is not None else [])
            seen = [first.id] if first is not None else []
        msgs = [user]
        out = await self._call([*history, user], [], traj)
        msgs.append(out.message)
        text = out.message.text
        return TurnResult(index=ti, response=text, answer=text.strip() or None, rounds=1,
                          stop_reason="answered" if text.strip() else "no_answer", seen_images=seen), msgs

    async def _tool_turn(self, ti: int, turn: Turn, task: Task, toolbox: Toolbox, tools: OfficialTools,
                         first: Artifact | None, name: str | None, history: list[Message],
                         traj: Trajectory) -> tuple[TurnResult, list[Message]]:
        s = self.settings
        files: TurnFiles = start_turn(toolbox, ti, first, name)
        system = [Message.system(s.system_prompt)] if s.system_prompt else []
        user = _user(turn.prompt, [self._image(first, toolbox)] if first is not None else [])
        msgs: list[Message] = [user]
        seen = [first.id] if first is not None else []
        calls_made = 0
        rounds = 0
        response = ""
        stop: StopReason = "answered"
        while True:
            if rounds >= s.max_tool_calls:  # the reference's `i < max_tool_calls`: i counts rounds
                response, stop = P.CAP_ANSWER, "max_tool_calls"
                break
            out = await self._call([*system, *history, *msgs], tools.specs(files), traj)
            message = out.message
            msgs.append(message)
            if not message.tool_calls:
                response = message.text
                stop = "answered" if response.strip() else "no_answer"
                break
            before = len(traj.tool_calls)
            error = await self._run_calls(message.tool_calls, ti, rounds, tools, files, toolbox, msgs, seen, traj)
            calls_made += len(traj.tool_calls) - before  # the calls that ran (not one the driver crashed on)
            if error is not None:
                response, stop = P.PROCESSING_ERROR.format(error=error), "error"
                break
            rounds += 1
        return TurnResult(index=ti, response=response, answer=response.strip() or None, stop_reason=stop,
                          rounds=rounds if stop == "max_tool_calls" else rounds + 1, tool_calls=calls_made,
                          seen_images=seen), msgs

    async def _run_calls(self, calls: list[ToolCall], ti: int, round_no: int, tools: OfficialTools,
                         files: TurnFiles, toolbox: Toolbox, msgs: list[Message], seen: list[str],
                         traj: Trajectory) -> str | None:
        """Run one round's calls in order; the error text that ends the task in the reference, if any."""
        for call in calls:
            try:
                args = json.loads(call.arguments)
            except json.JSONDecodeError as exc:  # raised before the reference's try: the task ends
                traj.loop_error = f"the driver ends the task: the arguments of {call.name!r} are not JSON ({exc})"
                return str(exc)  # nothing ran: not a tool call
            try:
                outcome = await tools.call(call.name, args, call.id, files)
            except UnknownOfficialTool:
                offered = ", ".join(tools.names) or "none"
                traj.loop_error = f"the driver ends the task: the model called {call.name!r}, not offered ({offered})"
                return str(KeyError(call.name))
            text = str(outcome.observation)
            rec = self._record(traj, call, ti, round_no, ok=outcome.ok, text=text, error=outcome.error,
                               artifacts=[a.id for a in outcome.artifacts], inputs=outcome.inputs,
                               extra=outcome.extra)
            msgs.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=[TextPart(text=text)]))
            paths = outcome.observation.get("output_paths") if call.name == IMAGE_TOOL else None
            if paths and outcome.artifacts:
                files.image_list.extend(str(p) for p in paths)
                parts = [self._image(a, toolbox) for a in outcome.artifacts]
                msgs.append(_user(P.TOOL_IMAGE_NOTE.format(call_id=call.id), parts))
                seen.extend(a.id for a in outcome.artifacts)
                rec.image_feedback = "user"
        return None

    @staticmethod
    def _record(traj: Trajectory, call: ToolCall, ti: int, round_no: int, *, ok: bool, text: str,
                error: str | None, artifacts: list[str] | None = None, inputs: list[str] | None = None,
                extra: dict[str, object] | None = None) -> ToolCallRecord:
        duration = extra.get("duration_s", 0.0) if extra else 0.0
        rec = ToolCallRecord(
            id=call.id, turn=ti, round=round_no + 1, name=call.name, arguments=call.arguments, ok=ok, error=error,
            text=text, artifacts=artifacts or [], inputs=inputs or [],
            duration_s=float(duration) if isinstance(duration, int | float) else 0.0,
            extra={k: v for k, v in (extra or {}).items() if k != "duration_s"},
        )
        traj.tool_calls.append(rec)
        return rec
