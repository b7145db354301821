"""The Vision-Centric Reasoning (VCR) agent of PhysToolBench (paper §4.4, App. D, Fig. 31).

Five stages, each recorded in the trajectory (`Trajectory.stages`, plus the messages in order):
1. Global understanding: the model analyses the whole image (the paper's "VQA" call).
2. Strategy: the model decides whether to detect and gives the detection query terms (a JSON list).
3. Detection: `detect_and_crop_objects(image, terms)` is always called (any detection backend);
   its crops become artifacts whose parent is the input image, so the viewer shows them.
4. In-depth analysis of each crop: n model calls with one crop each, run concurrently (the paper
   parallelises them too); "No objects available for analysis" when there are none.
5. Integration: the model combines Stage 1 and Stage 4 and answers the user's question in the format
   the question asks for; with no crops it falls back to the original image and Stage 1.

Every call carries the paper's system prompt (Fig. 31). Stages 1, 2 and 5 are one growing conversation
(the master agent); each Stage-4 call is independent (system prompt, question, Stage-1 summary, one
crop). So a task costs n + 3 model calls and one detection (the paper counts n + 2: it does not say
whether the strategy is a separate call; here it is, so it is recorded on its own). The agent code of
the paper is not public: the stage instructions below are toolsight's wording of Fig. 31. Works with
any model and on any benchmark (`--agent vcr`): the user prompt comes from the setting's template and
the final answer is extracted with the setting's answer format; the setting's own tools are not
offered (the pipeline is fixed), and a setting's system prompt is passed on in Stage 5.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from typing import Any

from toolsight.agents.answer import extract_answer
from toolsight.agents.images import fit_pixels
from toolsight.agents.loop import TaskFailed, render_prompt
from toolsight.agents.settings import AgentSettings
from toolsight.log.trajectory import StageRecord, ToolCallRecord, Trajectory, TurnResult
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

DETECT_TOOL = "detect_and_crop_objects"

SYSTEM_PROMPT = """You are a multimodal deep visual reasoning expert who performs step-by-step, non-skippable hierarchical analysis via intelligent tool collaboration. You must strictly follow the 5 stages below in order, and no stage may be omitted, merged, or skipped.
Tool Capabilities
- VQA tool: Calls an MLLM for global scene understanding and deep analysis of local regions
- DINO-X: Precise object detection, automatic cropping, and batch processing (core function: `detect_and_crop_objects`)
Stage-wise Execution Framework (all stages must be strictly executed)
Stage 1: Global Understanding
- Use VQA to perform an initial analysis of the entire image
- Understand the scene, composition, main elements, and basic features
- Assess the complexity of the user's question and the required depth of analysis
- Regardless of the question type, this stage is always executed
Stage 2: Intelligent Strategy Generation
- Based on the global understanding from Stage 1 and the user's question, decide whether object detection and cropping are needed
- If cropping is not needed, you must still explain why cropping is unnecessary
- If cropping is needed, you must generate a clear list of detection query terms (e.g. `["person", "cat"]`)
- This stage cannot be skipped; even if you decide not to perform detection, you must provide your reasoning and decision logic
Stage 3: Precise Detection and Automatic Cropping
- You must always call the `detect_and_crop_objects` function, regardless of whether the number of objects to crop is 0 or more
- After detection:
- If there are no results (`cropped_images` is empty), record the reason for failure and terminate the process
- If detection succeeds, extract the list of paths in `cropped_images` to prepare for the next stage
- You are not allowed to bypass `detect_and_crop_objects` or analyze objects directly on the full image
Stage 4: In-Depth Analysis of Each Cropped Object
- Iterate over all paths in `cropped_images` and use VQA to analyze each cropped image individually
- For each cropped object, generate object-specific questions and perform deeper analysis than in the initial global pass, since focus has now narrowed to a specific object
- Record each object's cropped image path and its analysis result
- If there are no cropped objects, this stage should output "No objects available for analysis" and end the process
Stage 5: Multi-Level Evidence Integration and Reasoning
- Integrate results from Stage 1 (global analysis) and Stage 4 (local analysis)
- Answer the user's question based on the complete chain of evidence, forming a deep reasoning process that goes from global to local
- Output the reasoning chain, the cropped image paths, and their corresponding analysis content
- You are not allowed to answer based only on a single stage's information
- Revisit the user's original question and strictly respond according to their requirements
- When the analysis result of Stage 4 is empty, the focus of inference should be shifted back to the original image, and the final answer is produced by combining it with the global analysis result from Stage 1.
Key Execution Constraints
- It is forbidden to skip any stage
- It is forbidden to only perform global analysis on the original image and then answer directly
- You must show which tools and parameters were used at each stage
- The analysis results must clearly indicate which evidence comes from global analysis and which comes from local analysis
Standard Tool-Calling Workflow
1. Call VQA to obtain information from the full image (Stage 1)
2. Generate the cropping strategy and detection target terms (Stage 2)
3. Call `detect_and_crop_objects` (Stage 3)
4. Iterate over `cropped_images` and call VQA for each crop (Stage 4)
5. Aggregate analysis results from all stages and integrate them into a final conclusion (Stage 5)
Output Requirements
1. Output the execution trace and results for each stage
2. List the analysis paths and contents for all cropped objects
3. Provide the full reasoning chain from global to local
4. It is forbidden to omit the cropping step or the tool-calling process
5. It is forbidden to skip stages based on subjective judgment"""

STAGE1 = ("[User question]\n{question}\n\n[Stage 1: Global Understanding] Act as the VQA tool on the full image: "
          "describe the scene, its composition, the main elements and their basic features, and assess how "
          "complex the question is and how deep the analysis must go. Do not give the final answer yet.")
STAGE2 = ("[Stage 2: Intelligent Strategy Generation] Based on your global analysis and the question, decide "
          "whether object detection and cropping are needed and explain why. End your reply with the detection "
          "query terms as a JSON list of strings on its own line, e.g. [\"knife\", \"cutting board\"] "
          "([] if no cropping is needed).")
STAGE4 = ("[User question]\n{question}\n\n[Global analysis (Stage 1)]\n{global_analysis}\n\n"
          "[Stage 4: In-Depth Analysis of Each Cropped Object] Act as the VQA tool on this cropped image only: "
          "crop {k} of {n} ({crop_id}), detected as {label!r} with confidence {score}, box {bbox} in the full "
          "image. Ask object-specific questions and analyse it more deeply than the global pass: what the "
          "object is, its parts, material and condition, and whether and how it could serve the user's task.")
STAGE5 = ("[Stage 3: Precise Detection and Automatic Cropping] {detection}\n\n[Stage 4 results]\n{local}\n\n"
          "[Stage 5: Multi-Level Evidence Integration and Reasoning] Integrate the global analysis (Stage 1) "
          "and the local analyses (Stage 4), saying which evidence is global and which local, and give the "
          "reasoning chain from global to local. {fallback}Then answer the user's original question, strictly "
          "in the format it asks for:\n{question}{instructions}")
NO_OBJECTS = "No objects available for analysis"
FALLBACK = ("Stage 4 is empty: shift the focus back to the original image and combine it with the global "
            "analysis. ")
_LIST = re.compile(r"\[[^\[\]]*\]", re.DOTALL)


def parse_terms(text: str) -> tuple[list[str], bool]:
    """The last JSON list of strings in `text` (and whether one was found); [] when there is none."""
    for m in reversed(_LIST.findall(text)):
        try:
            val = json.loads(m)
        except json.JSONDecodeError:
            continue
        if isinstance(val, list) and all(isinstance(v, str) for v in val):
            return [v.strip() for v in val if v.strip()], True
    return [], False


class VCRAgent:
    """Runs the five stages per turn; see the module docstring."""

    def __init__(self, model: Model, settings: AgentSettings, generate: Generate | None = None) -> None:
        self.model = model
        self.settings = settings
        self.generate: Generate = generate or model.generate
        self.max_crops = max(1, min(50, settings.max_tool_calls))

    def _image(self, art: Artifact, toolbox: Toolbox) -> ImagePart:
        sent = fit_pixels(toolbox.store.path(art), self.settings.max_image_pixels, lambda: toolbox.store.workspace / ".sent")
        return ImagePart(path=str(sent), artifact_id=art.id)

    async def _call(self, msgs: list[Message], traj: Trajectory) -> ModelOutput:
        out = await self.generate(msgs, [], self.settings.generate)
        traj.model_calls += 1
        traj.usage = traj.usage + out.usage
        traj.cache_hits += int(out.cached)
        return out

    async def run(self, task: Task, toolbox: Toolbox, inputs: dict[str, Artifact]) -> Trajectory:
        traj = Trajectory()
        t0 = time.monotonic()
        system = Message.system(SYSTEM_PROMPT)
        traj.messages.append(system)
        history: list[Message] = []
        for ti, turn in enumerate(task.turns):
            try:
                final = await self._turn(ti, turn, toolbox, inputs, system, history, traj, t0)
            except ModelError as exc:
                traj.stop_reason = "model_error"
                traj.artifacts = toolbox.store.all()
                traj.duration_s = round(time.monotonic() - t0, 4)
                raise TaskFailed(f"model error: {exc}", traj) from exc
            history = [*history, Message.user(render_prompt(self.settings, turn, [])),
                       Message(role="assistant", content=[TextPart(text=final.response)])]
            traj.turns.append(final)
        traj.artifacts = toolbox.store.all()
        traj.duration_s = round(time.monotonic() - t0, 4)
        if traj.turns:
            traj.stop_reason = traj.turns[-1].stop_reason
        return traj

    async def _detect(self, toolbox: Toolbox, ref: str, terms: list[str], call_id: str) -> Any:
        args = json.dumps({"image": ref, "terms": terms, "max_objects": self.max_crops})
        if DETECT_TOOL in toolbox.tools:
            return await toolbox.call(DETECT_TOOL, args, call_id=call_id)
        # the setting did not list the detection tool: run it on the same workspace all the same
        from toolsight.tools.perception import DetectAndCropTool

        return await Toolbox([DetectAndCropTool()], toolbox.store, toolbox.task_id).call(DETECT_TOOL, args, call_id)

    async def _turn(self, ti: int, turn: Turn, toolbox: Toolbox, inputs: dict[str, Artifact], system: Message,
                    history: list[Message], traj: Trajectory, t0: float) -> TurnResult:
        s = self.settings
        images = [inputs[i.path] for i in turn.images if i.path in inputs]
        question = render_prompt(s, turn, [a.file for a in images])
        seen = [a.id for a in images]

        def since() -> float:
            return round(time.monotonic() - t0, 4)

        # Stage 1: global understanding (the full image)
        st = since()
        u1 = Message.user(STAGE1.format(question=question), images=[self._image(a, toolbox) for a in images])
        master = [system, *history, u1]
        o1 = await self._call(master, traj)
        master.append(o1.message)
        traj.messages.extend([u1, o1.message])
        traj.stages.append(StageRecord(turn=ti, stage=1, name="global understanding", model_calls=1,
                                       inputs=list(seen), text=o1.message.text, started_s=st, ended_s=since()))

        # Stage 2: strategy and detection terms
        st = since()
        u2 = Message.user(STAGE2)
        master.append(u2)
        o2 = await self._call(master, traj)
        master.append(o2.message)
        traj.messages.extend([u2, o2.message])
        terms, parsed = parse_terms(o2.message.text)
        traj.stages.append(StageRecord(turn=ti, stage=2, name="strategy", model_calls=1, text=o2.message.text,
                                       started_s=st, ended_s=since(), extra={"terms": terms, "terms_parsed": parsed}))

        # Stage 3: detection and cropping (always called)
        st = since()
        call_id = f"vcr-detect-{ti}"
        target = images[0].file if images else ""
        call = ToolCall(id=call_id, name=DETECT_TOOL, arguments=json.dumps({"image": target, "terms": terms}))
        announce = Message(role="assistant", content=[TextPart(
            text=f"[Stage 3] The VCR agent calls {DETECT_TOOL} with the Stage 2 terms {terms}.")], tool_calls=[call])
        crops: list[Artifact] = []
        entries: list[dict[str, Any]] = []
        if images:
            result = await self._detect(toolbox, target, terms, call_id)
            crops = list(result.artifacts)
            try:
                payload = json.loads(result.text) if result.ok else {}
            except json.JSONDecodeError:
                payload = {}
            entries = [d for d in payload.get("detections", []) if isinstance(d, dict)]
            inputs_ids = [p for p in result.extra.get("inputs", []) or [] if isinstance(p, str)]
            traj.tool_calls.append(ToolCallRecord(
                id=call_id, turn=ti, round=3, name=DETECT_TOOL, arguments=call.arguments, ok=result.ok,
                error=result.error, text=result.model_text(), artifacts=[a.id for a in crops],
                inputs=inputs_ids or [images[0].id], duration_s=float(result.extra.get("duration_s", 0.0)),
                extra={k: v for k, v in result.extra.items() if k not in ("duration_s", "inputs")}))
            detection = (f"{DETECT_TOOL}(image={target!r}, terms={terms}) -> {len(crops)} crop(s), backend "
                         f"{payload.get('backend', '?')}" + ("" if result.ok else f"; failed: {result.error}"))
            if payload.get("note"):
                detection += f" ({payload['note']})"
            tool_msg = Message(role="tool", tool_call_id=call_id, name=DETECT_TOOL,
                               content=[TextPart(text=result.model_text())])
        else:
            detection = f"{DETECT_TOOL} could not run: the task has no image"
            tool_msg = Message(role="tool", tool_call_id=call_id, name=DETECT_TOOL, content=[TextPart(text=detection)])
        traj.messages.extend([announce, tool_msg])
        traj.stages.append(StageRecord(turn=ti, stage=3, name="detection and cropping", inputs=seen[:1],
                                       outputs=[a.id for a in crops], text=detection, started_s=st, ended_s=since(),
                                       extra={"terms": terms}))

        # Stage 4: one independent analysis per crop, concurrently
        crops = crops[: self.max_crops]
        by_id = {str(e.get("cropped_image")): e for e in entries}
        n = len(crops)
        global_analysis = o1.message.text

        async def analyse(k: int, crop: Artifact) -> tuple[Message, ModelOutput, float, float]:
            e = by_id.get(crop.id, {})
            text = STAGE4.format(question=question, global_analysis=global_analysis, k=k, n=n, crop_id=crop.id,
                                 label=e.get("label", "object"), score=e.get("confidence", "?"),
                                 bbox=e.get("bbox", "?"))
            u = Message.user(text, images=[self._image(crop, toolbox)])
            begun = since()
            out = await self._call([system, u], traj)
            return u, out, begun, since()

        st = since()
        results = await asyncio.gather(*(analyse(k, c) for k, c in enumerate(crops, start=1)))
        local_lines: list[str] = []
        calls: list[dict[str, Any]] = []
        for (u, out, begun, ended), crop in zip(results, crops, strict=True):
            traj.messages.extend([u, out.message])
            seen.append(crop.id)
            e = by_id.get(crop.id, {})
            local_lines.append(f"- {crop.id} ({e.get('label', 'object')}, box {e.get('bbox', '?')}): {out.message.text}")
            calls.append({"crop": crop.id, "started_s": begun, "ended_s": ended})
        local = "\n".join(local_lines) or NO_OBJECTS
        traj.stages.append(StageRecord(turn=ti, stage=4, name="in-depth analysis of each crop", model_calls=n,
                                       inputs=[c.id for c in crops], text=local, started_s=st, ended_s=since(),
                                       extra={"calls": calls}))

        # Stage 5: integration and the answer
        st = since()
        instructions = f"\n\n[The task's own instructions]\n{s.system_prompt}" if s.system_prompt else ""
        u5 = Message.user(STAGE5.format(detection=detection, local=local, fallback="" if n else FALLBACK,
                                        question=question, instructions=instructions))
        master.append(u5)
        o5 = await self._call(master, traj)
        traj.messages.extend([u5, o5.message])
        response = o5.message.text
        traj.stages.append(StageRecord(turn=ti, stage=5, name="integration", model_calls=1, text=response,
                                       started_s=st, ended_s=since()))
        return TurnResult(index=ti, response=response, answer=extract_answer(response, s.answer_format),
                          stop_reason="answered" if response.strip() else "no_answer", rounds=n + 3,
                          tool_calls=1 if images else 0, seen_images=seen)


