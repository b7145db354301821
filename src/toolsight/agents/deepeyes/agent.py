"""The DeepEyes agent (`--agent deepeyes`): DeepEyes' evaluation loop around any model — meant for the
RL-trained DeepEyes checkpoint behind an OpenAI-compatible server (vLLM) — on any benchmark.

Per turn: the system prompt and `[image, "Question: …\\nOptions: …\\n" + USER_PROMPT_V2]` (the question
from the benchmark's `QuestionView.question`, the options the turn's own) → model → a reply's first
`<tool_call>` is a zoom on the original image (`image_zoom_in_tool`, in the sandbox) whose crop comes
back in a `<tool_response>` user message → … until a reply holds `</answer>`, at most 11 model calls.
The answer is the text of the first `<answer>…</answer>`, else the whole last reply; scorers read the
whole last reply (`response`), as a benchmark's own extraction expects. The setting's prompts, tools,
caps and image limits are not used (the frameworks' own: the image file as it is).

`official` loop, as `eval_vstar.py`: the call is parsed with Python `eval` (in the sandbox), the box is
used as given (no clamping), the schema in the system prompt says `required: ["bbox"]`, a reply with
neither an answer nor a tool call is not appended (the same request is sent again), any exception
(a bad call, a crop that fails) ends the turn with `stop_reason: error` and the last reply as answer,
images are labelled `image/jpeg`. `toolsight` loop: `json.loads`, the box clamped to the image, the
schema's `required: ["bbox_2d"]`, a bad call answered with an "Error: …" user turn (as DeepEyes'
training loop does) and the turn going on, a reply with neither an answer nor a tool call ending the
turn, images labelled with their real type; requests through the run's `generate`, asking for prompt
caching (each request repeats the previous one: `framework.prompt_cache`).

Every reply is in the trajectory, also one the official loop does not send back. Several images: all
are sent (the original takes one); zooms cut the first image of the latest turn that has images.
Multi-turn tasks: each later turn is a user message with its images and its instruction.
"""

from __future__ import annotations

import json
import time
from typing import Literal

from toolsight.agents.deepeyes import protocol as P
from toolsight.agents.deepeyes.prompts import system_prompt
from toolsight.agents.deepeyes.zoom import ZoomConfig, ZoomTool, configure
from toolsight.agents.framework import ask, finishing, option_texts, prompt_cache, question_only
from toolsight.agents.loop import TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import Generate, ImagePart, Message, Model, TextPart
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Toolbox


class DeepEyesAgent:
    """See the module docstring."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate | None = None) -> None:
        self.model = model
        self.settings = settings
        self.generate: Generate = generate or model.generate
        self.mode: Literal["official", "toolsight"] = settings.loop
        self.official = settings.loop == "official"

    def _part(self, art: Artifact, box: Toolbox) -> ImagePart:
        return ImagePart(path=str(box.store.path(art)), artifact_id=art.id,
                         mime=P.OFFICIAL_MIME if self.official else None)

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        traj = Trajectory()
        t0 = time.monotonic()
        own = None
        box = toolbox
        if P.TOOL_NAME not in toolbox.tools:  # run outside the runner: the zoom on the same workspace
            own = box = Toolbox([ZoomTool()], toolbox.store, toolbox.task_id)
        msgs: list[Message] = [Message.system(system_prompt(fixed_schema=not self.official))]
        shown: list[Message] = list(msgs)  # every message, also replies the official loop does not send
        source: Artifact | None = None
        async with finishing(traj, shown, box, own, t0):
            for ti, turn in enumerate(task.turns):
                images = [inputs[i.path] for i in turn.images if i.path in inputs]
                source = images[0] if images else source
                question = question_only(self.settings, turn)
                try:
                    first = P.first_message(question, option_texts(turn), [self._part(a, box) for a in images],
                                            self.official)
                except P.TooManyOptions as exc:
                    raise TaskFailed(f"DeepEyes' driver stops here: {exc}", traj) from None
                msgs.append(first)
                shown.append(first)
                result = await self._turn(ti, images, source, box, msgs, shown, traj)
                traj.turns.append(result)
        if traj.turns:
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj

    async def _turn(self, ti: int, images: list[Artifact], source: Artifact | None, box: Toolbox,
                    msgs: list[Message], shown: list[Message], traj: Trajectory) -> TurnResult:
        seen = [a.id for a in images]
        reply = ""
        calls = zooms = 0
        stop: StopReason = "answered"
        while "</answer>" not in reply:
            if calls >= P.MAX_CALLS:
                stop = "max_rounds"
                break
            calls += 1
            text, _ = await ask(self.model, self.generate, msgs, P.wire, P.PARAMS, official=self.official, traj=traj,
                                cache=prompt_cache(self.official, last=calls == P.MAX_CALLS))
            if text is None:
                if self.official:
                    raise TaskFailed("DeepEyes' driver stops on a reply without content (TypeError: the reply is "
                                     "None)", traj)
                text = ""
            reply = text
            said = Message(role="assistant", content=[TextPart(text=reply)])
            shown.append(said)
            body = P.first_tool_call(reply)
            if not self.official and (P.has_answer(reply) or body is None):
                break  # the training loop: an answer, or no tool call, ends the episode
            if body is None:
                continue  # official: not appended; the same request goes again
            zooms += 1
            crop, error = await self._zoom(body, ti, calls, source, box, traj)
            if crop is None:
                if self.official:  # eval_vstar.py: any exception ends the task with status "error"
                    stop = "error"
                    break
                msgs += [said, P.error_message(error)]
                shown.append(msgs[-1])
                continue
            response = P.tool_response(self._part(crop, box))
            msgs += [said, response]
            shown.append(response)
            seen.append(crop.id)
        if stop == "answered" and not reply.strip():
            stop = "no_answer"
        answer = P.answer_of(reply)
        return TurnResult(index=ti, response=reply, answer=answer or None, stop_reason=stop, rounds=calls,
                          tool_calls=zooms, seen_images=seen)

    async def _zoom(self, body: str, ti: int, round_no: int, source: Artifact | None, box: Toolbox,
                    traj: Trajectory) -> tuple[Artifact | None, str]:
        """One zoom: (the crop, "") or (None, why)."""
        call_id = f"deepeyes-{ti}-{round_no}"
        args: dict[str, object]
        if self.official:
            args = {"call": body}
        else:
            try:
                bbox = P.parse_call(body)
                if source is None:
                    raise ValueError("there is no image to zoom in on")
                args = {"bbox_2d": P.clamp(bbox, source.width, source.height)}
            except ValueError as exc:
                traj.tool_calls.append(ToolCallRecord(id=call_id, turn=ti, round=round_no, name=P.TOOL_NAME,
                                                      arguments=body, ok=False, error=str(exc), text=str(exc)))
                return None, str(exc)
        if source is None:
            error = "no image to zoom in on"
            traj.tool_calls.append(ToolCallRecord(id=call_id, turn=ti, round=round_no, name=P.TOOL_NAME,
                                                  arguments=json.dumps(args), ok=False, error=error, text=error))
            return None, error
        configure(box.state, ZoomConfig(file=source.file, artifact=source.id))
        result = await box.call(P.TOOL_NAME, args, call_id=call_id)
        crop = result.artifacts[0] if result.ok and result.artifacts else None
        extra = {k: v for k, v in result.extra.items() if k not in ("duration_s", "inputs")}
        traj.tool_calls.append(ToolCallRecord(
            id=call_id, turn=ti, round=round_no, name=P.TOOL_NAME, arguments=json.dumps(args), ok=crop is not None,
            error=None if crop is not None else (result.error or result.text), text=result.text,
            artifacts=[crop.id] if crop else [], inputs=[source.id],
            duration_s=float(result.extra.get("duration_s", 0.0)), image_feedback="user" if crop else "none",
            extra=extra))
        return crop, "" if crop is not None else (result.error or result.text)


__all__ = ["DeepEyesAgent"]
