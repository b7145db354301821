"""TIR-Bench's official loops (`--loop official`): what the paper's evaluation did, as far as it says.

TIR-Bench publishes no inference code; the reference is the paper (App. D prompts, App. E
settings, §4 tool-using rows):

- every tool result is followed by the strategy's feedback text ("The returning status and the
  processed image or text (if any) of the code is attached." / "The rotated image is attached."),
  whatever the result holds — text only, images in the tool message or not — in a user message
  that also carries the result's images when the model cannot take them in the tool message;
- no call cap, time limit, image downscaling or image budget (the paper's o3 jigsaw run took ~55
  iterations); a safety cap of `max_rounds` rounds remains (AgentSettings);
- open models (a model behind a local OpenAI-compatible server, or any non-API provider) generate
  with App. E's `temperature 0`, `max_tokens 2048`; API models with their providers' defaults;
- the paper's tool-using rows for o3 / o4-mini used OpenAI's hosted code interpreter:
  `HostedInterpreterAgent` sends one Responses API request with the `code_interpreter` tool
  (`container: auto`) and records each hosted run as a tool call. It is one call per task, so
  `--batch` sends it through OpenAI's Batch API as a `/v1/responses` item with the same body.
"""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

from toolsight.agents.loop import Agent, TaskFailed
from toolsight.agents.settings import AgentSettings
from toolsight.calls.task import RawBatch
from toolsight.log.trajectory import StopReason, ToolCallRecord, Trajectory, TurnResult
from toolsight.models.base import (
    Generate,
    GenerateConfig,
    ImagePart,
    Message,
    Model,
    ModelError,
    TextPart,
    Usage,
)
from toolsight.models.openai_provider import responses_usage
from toolsight.models.responses_reply import check_responses_reply
from toolsight.tasks.schema import Task, Turn
from toolsight.tools.base import Artifact, Toolbox

#: how much of a hosted interpreter run's logs and code a record keeps (characters; the sandbox's own
#: output cap): the provider sends them whole, and a run can print megabytes
HOSTED_TEXT_CAP = 64 * 1024
APP_E_TEMPERATURE = 0.0
APP_E_MAX_TOKENS = 2048
HOSTED_TOOL: dict[str, Any] = {"type": "code_interpreter", "container": {"type": "auto"}}
#: where the hosted interpreter's request goes (its batch items too: `--batch`, docs/batch.md)
RESPONSES_ENDPOINT = "/v1/responses"
_OPENAI_FAMILY = re.compile(r"^(o\d|gpt-|chatgpt-)", re.IGNORECASE)


def is_open_model(model: Model) -> bool:
    """App. E's "open models": served locally (an OpenAI-compatible base URL) or not an API provider."""
    name = model.name
    if name.startswith(("anthropic/", "google/")):
        return False
    if name.startswith("openai/"):
        return getattr(model, "base_url", None) is not None
    return True


def uses_hosted_interpreter(model: Model) -> bool:
    """OpenAI's own models (o-series, GPT) ran the paper's tool-using rows with the hosted interpreter."""
    model_id = str(getattr(model, "model_id", ""))
    return hasattr(model, "responses_raw") and bool(_OPENAI_FAMILY.match(model_id))


def official_generation(settings: AgentSettings, model: Model) -> AgentSettings:
    """App. E's generation settings for open models, where the run did not set them itself."""
    if not is_open_model(model):
        return settings
    g = settings.generate
    upd = {"temperature": APP_E_TEMPERATURE if g.temperature is None else g.temperature,
           "max_tokens": APP_E_MAX_TOKENS if g.max_tokens is None else g.max_tokens}
    return settings.model_copy(update={"generate": g.model_copy(update=upd)})


class TIROfficialAgent(Agent):
    """The tool loop with the paper's feedback after every tool result and no toolsight caps."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate, feedback: str | None) -> None:
        super().__init__(model, settings, generate=generate)
        self.feedback = feedback

    async def _run_turn(self, ti: int, turn: Turn, toolbox: Toolbox, inputs: dict[str, Artifact],
                        history: list[Message], traj: Trajectory, t_start: float) -> tuple[TurnResult, list[Message]]:
        s = self.settings
        images = [inputs[i.path] for i in turn.images if i.path in inputs]
        user = Message.user(s.user_template.format(prompt=turn.prompt),
                            images=[self._image_part(a, toolbox) for a in images])
        seen = [a.id for a in images]
        msgs: list[Message] = [user]
        specs = toolbox.specs() if s.tools else []
        stop: StopReason = "answered"
        response, rounds, calls = "", 0, 0
        while True:
            if rounds >= s.max_rounds:
                stop = "max_rounds"
                break
            rounds += 1
            try:
                out = await self._call_model([*history, *msgs], specs, traj)
            except ModelError as exc:
                traj.messages.extend(msgs)
                traj.turns.append(TurnResult(index=ti, stop_reason="model_error", rounds=rounds, tool_calls=calls,
                                             seen_images=seen))
                raise TaskFailed(f"model error: {exc}", traj) from exc
            msgs.append(out.message)
            response = out.message.text
            if not out.message.tool_calls or not specs:
                stop = "answered" if response.strip() else "no_answer"
                break
            produced: list[ImagePart] = []
            for call in out.message.tool_calls:
                calls += 1
                record, parts = await self._run_tool(call, ti, rounds, toolbox)
                traj.tool_calls.append(record)
                text = record.text.split("\nProduced image(s): ")[0]  # the result's own text, no toolsight line
                in_tool = bool(parts) and self.image_mode == "tool"
                record.image_feedback = ("tool" if in_tool else "user") if parts else "none"
                msgs.append(self._tool_message(call, text, parts if in_tool else []))
                if not in_tool:
                    produced.extend(parts)
                seen.extend(p.artifact_id or "" for p in parts)
            if self.feedback:
                msgs.append(Message.user(self.feedback, images=produced))
        return TurnResult(index=ti, response=response, answer=response.strip() or None, stop_reason=stop,
                          rounds=rounds, tool_calls=calls, seen_images=seen), msgs


class HostedInterpreterAgent:
    """One Responses API request with OpenAI's hosted code interpreter (the paper's o3-TU / o4-mini-TU)."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate) -> None:
        self.model = model
        self.settings = settings
        self.generate = generate

    def request(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> dict[str, Any]:
        turn = task.turns[0]
        content: list[dict[str, Any]] = [{"type": "input_text", "text": self.settings.user_template.format(
            prompt=turn.prompt)}]
        for ref in turn.images:
            art = inputs.get(ref.path)
            if art is None:
                continue
            data = base64.b64encode(toolbox.store.path(art).read_bytes()).decode()
            mime = "image/png" if art.file.lower().endswith(".png") else "image/jpeg"
            content.append({"type": "input_image", "image_url": f"data:{mime};base64,{data}"})
        kwargs: dict[str, Any] = {"model": str(getattr(self.model, "model_id", self.model.name)),
                                  "input": [{"role": "user", "content": content}], "tools": [HOSTED_TOOL],
                                  "include": ["code_interpreter_call.outputs"]}
        g = self.settings.generate
        if g.temperature is not None:
            kwargs["temperature"] = g.temperature
        if g.max_tokens is not None:
            kwargs["max_output_tokens"] = g.max_tokens
        if g.reasoning_effort is not None:
            kwargs["reasoning"] = {"effort": g.reasoning_effort}
        return kwargs

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        traj = Trajectory()
        t0 = time.monotonic()
        kwargs = self.request(task, toolbox, inputs)
        raw = getattr(self.model, "responses_raw")  # noqa: B009 - checked by uses_hosted_interpreter
        call_raw = getattr(self.generate, "call_raw", None)
        timeout = self.settings.generate.timeout

        async def once() -> dict[str, Any]:
            out: dict[str, Any] = await raw(kwargs, timeout)
            return out

        # batch mode (`--batch`): the same body as a `/v1/responses` batch item; the item's reply is the
        # response the on-line call returns, checked the same way
        batch = RawBatch(dict(kwargs), lambda reply: check_responses_reply(self.model.name, reply),
                         endpoint=RESPONSES_ENDPOINT)
        try:
            resp = await (call_raw(once, responses_usage, request=kwargs, batch=batch) if call_raw is not None
                          else once())
        except ModelError as exc:
            traj.stop_reason = "model_error"
            raise TaskFailed(f"model error: {exc}", traj) from exc
        traj.model_calls = 1
        texts: list[str] = []
        for n, item in enumerate(resp.get("output") or [], start=1):
            kind = item.get("type")
            if kind == "code_interpreter_call":
                outs = item.get("outputs") or []
                logs, log_chars = capped_text(o.get("logs") for o in outs if o.get("type") == "logs")
                code, code_chars = capped_text([item.get("code")])
                urls = [str(o.get("url", ""))[:2048] for o in outs if o.get("type") == "image"][:64]
                traj.tool_calls.append(ToolCallRecord(
                    id=str(item.get("id") or f"ci-{n}"), turn=0, round=1, name="code_interpreter",
                    arguments=json.dumps({"code": code}), ok=item.get("status") == "completed",
                    error=None if item.get("status") == "completed" else str(item.get("status")), text=logs,
                    extra={"hosted": True, "container_id": item.get("container_id"), "image_urls": urls,
                           "log_chars": log_chars, "code_chars": code_chars}))
            elif kind == "message":
                texts += [c.get("text", "") for c in item.get("content") or [] if c.get("type") == "output_text"]
        text = "".join(texts)
        traj.usage = responses_usage(resp) or Usage()
        turn = task.turns[0]
        traj.messages = [Message.user(kwargs["input"][0]["content"][0]["text"],
                                      images=[ImagePart(path=str(toolbox.store.path(inputs[r.path])),
                                                        artifact_id=inputs[r.path].id)
                                              for r in turn.images if r.path in inputs]),
                         Message(role="assistant", content=[TextPart(text=text)] if text else [])]
        status = resp.get("status")
        stop: StopReason = "answered" if text.strip() else "no_answer"
        if status == "incomplete":
            stop = "max_tokens"
        traj.turns = [TurnResult(index=0, response=text, answer=text.strip() or None, stop_reason=stop, rounds=1,
                                 tool_calls=len(traj.tool_calls),
                                 seen_images=[inputs[r.path].id for r in turn.images if r.path in inputs])]
        traj.stop_reason = stop
        traj.artifacts = toolbox.store.all()
        traj.duration_s = round(time.monotonic() - t0, 4)
        return traj


def capped_text(parts: Any, cap: int = HOSTED_TEXT_CAP) -> tuple[str, int]:
    """The string parts joined by newlines, cut to `cap` characters with a note saying how many there
    were; and that count. Non-strings count as empty."""
    texts = [p for p in parts if isinstance(p, str)]
    total = sum(len(t) for t in texts) + max(0, len(texts) - 1)
    joined = "\n".join(texts) if total <= cap else "\n".join(texts)[:cap]
    if total > cap:
        joined += f"\n[truncated: {total:,} characters in all, the first {cap:,} kept]"
    return joined, total


def make_official_agent(settings: AgentSettings, model: Model, generate: Generate, feedback: str | None,
                        code_setting: bool) -> Any:
    """The official agent for one TIR-Bench setting and model."""
    if code_setting and uses_hosted_interpreter(model):
        return HostedInterpreterAgent(model, settings, generate)
    return TIROfficialAgent(model, official_generation(settings, model), generate, feedback)


__all__ = ["HOSTED_TOOL", "GenerateConfig", "HostedInterpreterAgent", "TIROfficialAgent", "is_open_model",
           "make_official_agent", "official_generation", "uses_hosted_interpreter"]
