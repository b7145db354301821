"""The PyVision agent (`--agent pyvision`): PyVision's loop around any model, on any benchmark.

Per turn: the first user message (`protocol.first_message`, the question from the benchmark's
`QuestionView.text`) → model → while the reply holds `<code>`/`</code>`: the assistant message (reply +
`</code>\\n`), the block run by the `pyvision_python` executor in the sandbox, its `<interpreter>`
user message → model … until a reply without code, which is the turn's answer (the answer tag's
`\\boxed{}` is the extracted answer; scorers read the whole reply). There is no turn limit in the
original; toolsight stops a turn after `SAFETY_ROUNDS` (100) model calls, or the setting's `max_rounds`
when that is higher (`--cap max_rounds=N`). The setting's system prompt, user template, tools, other
caps and image limits are not used (PyVision sends the image files as they are).

`official` loop: the original's requests byte for byte (`framework.ask`), its executor (a stale
worker after a timeout), its failures (an empty code block, a reply without content: the driver
stops with an exception, so the task ends with an error). `toolsight` loop: images labelled with
their real type, the executor restarted after a timeout (no stale results), an empty code block
reported to the model, `plt.show()` working in indented code, SystemExit reported, at most 16
figures per block; requests go through the run's `generate` (retries, cache, any provider) and ask for
prompt caching (each request repeats the previous one: `framework.prompt_cache`).

Multi-turn tasks (a toolsight extension): each later turn is a user message with its images (tagged
with the next `<image_clue_k>` labels, and loaded into the namespace under those names) and its
question; the conversation goes on. Agent names: `pyvision` (the default `vistool_with_img_info_v2` /
`_multi_image` templates), `pyvision-no-tool`, `pyvision-no-tool-no-cot` (the `no_tool*` templates).
"""

from __future__ import annotations

import json
import time
from typing import Literal

from toolsight.agents.answer import extract_answer
from toolsight.agents.framework import ask, finishing, prompt_cache, question_text
from toolsight.agents.loop import TaskFailed
from toolsight.agents.pyvision import protocol as P
from toolsight.agents.pyvision.executor import TOOL, ExecutorConfig, PyVisionExecutor, configure
from toolsight.agents.settings import AgentSettings
from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import Generate, ImagePart, Message, Model
from toolsight.tasks.schema import Task, Turn
from toolsight.tools.base import Artifact, Toolbox

DEFAULT_PROMPT = "vistool_with_img_info_v2"
#: model calls per turn before the safety stop (the original has no limit; the paper's PyVision took 4.72
#: turns on average); a setting's `max_rounds` above it raises it, never lowers it — a benchmark's own
#: driver caps (one call, twenty) are not PyVision's
SAFETY_ROUNDS = 100


class PyVisionAgent:
    """See the module docstring. `prompt` is PyVision's `--prompt`."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate | None = None,
                 prompt: str = DEFAULT_PROMPT) -> None:
        self.model = model
        self.settings = settings
        self.generate: Generate = generate or model.generate
        self.prompt = prompt
        self.mode: Literal["official", "toolsight"] = settings.loop
        self.official = settings.loop == "official"

    def _part(self, art: Artifact, toolbox: Toolbox) -> ImagePart:
        return ImagePart(path=str(toolbox.store.path(art)), artifact_id=art.id,
                         mime=P.OFFICIAL_MIME if self.official else None)

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        traj = Trajectory()
        t0 = time.monotonic()
        own = None
        box = toolbox
        if TOOL not in toolbox.tools:  # run outside the runner: the executor on the same workspace
            own = box = Toolbox([PyVisionExecutor()], toolbox.store, toolbox.task_id)
        state = _State()
        msgs: list[Message] = []
        async with finishing(traj, msgs, box, own, t0):
            for ti, turn in enumerate(task.turns):
                result = await self._turn(ti, turn, box, inputs, msgs, state, traj)
                traj.turns.append(result)
                if result.stop_reason == "max_rounds":
                    break
        if traj.turns:
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj

    async def _turn(self, ti: int, turn: Turn, box: Toolbox, inputs: dict[str, Artifact], msgs: list[Message],
                    state: _State, traj: Trajectory) -> TurnResult:
        images = [inputs[i.path] for i in turn.images if i.path in inputs]
        query = question_text(self.settings, turn)
        if ti == 0:
            msgs.append(P.first_message(self.prompt, query, [(self._part(a, box), a.width, a.height) for a in images]))
            state.clue = len(images)
            state.files = [(a, i) for i, a in enumerate(images)]
        else:
            tagged = []
            for a in images:
                tagged.append((self._part(a, box), state.clue))
                state.files.append((a, state.clue))
                state.clue += 1
            msgs.append(P.later_turn_message(self.prompt, query, tagged))
        seen = [a.id for a in images]
        rounds = calls = 0
        stop: StopReason = "answered"
        reply = ""
        limit = max(self.settings.max_rounds, SAFETY_ROUNDS)
        while True:
            if rounds >= limit:
                stop = "max_rounds"
                break
            rounds += 1
            text, _ = await ask(self.model, self.generate, msgs, P.wire, P.PARAMS, official=self.official, traj=traj,
                                cache=prompt_cache(self.official, last=rounds == limit))
            if text is None:
                if self.official:
                    raise TaskFailed("PyVision's driver stops on a reply without content (TypeError: the reply "
                                     "is None)", traj)
                text = ""
            reply = text
            if not P.wants_code(reply):
                msgs.append(P.final_message(reply))
                stop = "answered" if reply.strip() else "no_answer"
                break
            msgs.append(P.code_message(reply))
            calls += 1
            code = P.extract_code(reply)
            figures, report, out_text = await self._execute(code, ti, rounds, box, state, traj)
            parts = [self._part(a, box) for a in figures]
            msgs.append(P.interpreter_message(report, out_text, parts, state.clue))
            state.clue += len(parts) if report == "Done" else 0
            seen.extend(a.id for a in figures)
        answer = extract_answer(reply, "answer_tag") or extract_answer(reply, "boxed")
        return TurnResult(index=ti, response=reply, answer=answer, stop_reason=stop, rounds=rounds,
                          tool_calls=calls, seen_images=seen)

    async def _execute(self, code: str, ti: int, round_no: int, box: Toolbox, state: _State,
                       traj: Trajectory) -> tuple[list[Artifact], str, str | None]:
        """Run one block; record the call; return (figures, report, stdout text or None)."""
        call_id = f"pyvision-{ti}-{round_no}"
        if not code:
            if self.official:
                raise TaskFailed("PyVision's driver stops on a <code> block without code (IndexError in "
                                 "execute_codes)", traj)
            report = "Error: the <code> block holds no Python code"
            traj.tool_calls.append(ToolCallRecord(id=call_id, turn=ti, round=round_no, name=TOOL,
                                                  arguments=json.dumps({"code": code}), ok=False, error=report,
                                                  text=report))
            return [], report, None
        configure(box.state, ExecutorConfig(mode=self.mode, files=[a.file for a, _ in state.files],
                                            clues=[k for _, k in state.files], inputs=[a.id for a, _ in state.files]))
        result = await box.call(TOOL, {"code": code}, call_id=call_id)
        if "report" not in result.extra:  # the executor itself failed (the sandbox): not the model's doing
            raise TaskFailed(f"PyVision executor: {result.text}", traj)
        report = str(result.extra["report"])
        text = result.extra.get("text_result")
        figures = list(result.artifacts) if report == "Done" else []
        inputs = sorted({p for a in figures for p in a.parents}) or [a.id for a, _ in state.files]
        extra = {k: v for k, v in result.extra.items() if k not in ("duration_s", "inputs")}
        traj.tool_calls.append(ToolCallRecord(
            id=call_id, turn=ti, round=round_no, name=TOOL, arguments=json.dumps({"code": code}), ok=result.ok,
            error=result.error, text=result.text, artifacts=[a.id for a in figures], inputs=inputs,
            duration_s=float(result.extra.get("duration_s", 0.0)), image_feedback="user" if figures else "none",
            extra=extra))
        return figures, report, None if text is None else str(text)


class _State:
    """A task's executor view: the next `<image_clue_k>` label and the images loaded as variables."""

    def __init__(self) -> None:
        self.clue = 0
        self.files: list[tuple[Artifact, int]] = []


__all__ = ["DEFAULT_PROMPT", "PyVisionAgent"]
