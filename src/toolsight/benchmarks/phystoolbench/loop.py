"""PhysToolBench's official loop: one call per task as `src/inference.py` + `src/model_api.py` send it.

The stored prompt and the image in one user message (text first, then the PNG; RGBA converted to
RGB, every other mode — palette, grey — as the dataset stores it), no system prompt; temperature 0
and 8,192 tokens come from the setting, the request shapes and the SDK's retries from the driver's
wire profile (`wire.py`).
"""

from __future__ import annotations

from PIL import Image

from toolsight.agents.inputs import source_path
from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.phystoolbench.wire import SDK_WIRE
from toolsight.log.trajectory import Trajectory, TurnResult
from toolsight.models.base import Generate, ImagePart, Message, Model, ModelError, TextPart
from toolsight.tasks.schema import Task
from toolsight.tools.base import Artifact, Toolbox


class OfficialAgent:
    """One call per task, laid out as `model_api.py` sends it: the prompt, then the image as PNG."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate) -> None:
        self.model = model
        self.settings = settings
        self.generate = generate
        self.config = settings.generate.model_copy(update={"wire": SDK_WIRE})

    @staticmethod
    def png_part(art: Artifact, toolbox: Toolbox) -> ImagePart:
        """The image re-encoded as the official client does: the dataset's image read with PIL,
        RGBA -> RGB, saved as PNG (a palette image stays a palette PNG)."""
        src = source_path(toolbox.store.workspace, art)
        dest_dir = toolbox.store.workspace / ".sent"
        dest_dir.mkdir(exist_ok=True)
        dest = dest_dir / f"{art.id}.official.png"
        if not dest.exists():
            with Image.open(src) as im:
                img = im.convert("RGB") if im.mode == "RGBA" else im.copy()
            img.save(dest, format="PNG")
        return ImagePart(path=str(dest), artifact_id=art.id, mime="image/png")

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        from toolsight.agents.answer import extract_answer
        from toolsight.agents.loop import TaskFailed, render_prompt

        traj = Trajectory()
        for ti, turn in enumerate(task.turns):
            images = [inputs[i.path] for i in turn.images if i.path in inputs]
            text = render_prompt(self.settings, turn, [a.file for a in images])
            user = Message(role="user", content=[TextPart(text=text), *[self.png_part(a, toolbox) for a in images]])
            traj.messages.append(user)
            try:
                out = await self.generate([user], [], self.config)
            except ModelError as exc:
                traj.stop_reason = "model_error"
                traj.turns.append(TurnResult(index=ti, stop_reason="model_error", rounds=1,
                                             seen_images=[a.id for a in images]))
                traj.artifacts = toolbox.store.all()
                raise TaskFailed(f"model error: {exc}", traj) from exc
            traj.model_calls += 1
            traj.usage = traj.usage + out.usage
            traj.cache_hits += int(out.cached)
            traj.messages.append(out.message)
            response = out.message.text
            traj.turns.append(TurnResult(
                index=ti, response=response, answer=extract_answer(response, self.settings.answer_format),
                stop_reason="answered" if response.strip() else "no_answer", rounds=1,
                seen_images=[a.id for a in images]))
        traj.artifacts = toolbox.store.all()
        if traj.turns:
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj
