"""VTC-Bench's settings as data: `base`, `code`, `interface`, `weak`, `strong`, `strong+gt`.

Each is a `VTCSetting` holding the official prompts (`prompts.py`) and the reference loop's
parameters (fncall_agent.py); `to_agent_settings` maps one onto the generic `AgentSettings` the
agent loop runs, and `render_user_prompt` builds the first user message exactly as the driver does.
The driver's time limits (`ATTEMPT_TIMEOUT_S`, `DRIVER_RERUN_WAITS`) live here, read by the official
loop (`loop.py`) and by the settings' task timeout.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsight.agents.settings import AgentSettings
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.log.modes import LoopMode
from toolsight.models.base import GenerateConfig
from toolsight.tasks.schema import Task

ToolSet = Literal["none", "code", "interface"]

#: seconds the driver waits before re-running a task (attempt 1 → 2, 2 → 3); tests may shorten them
DRIVER_RERUN_WAITS = (5.0, 10.0)
ATTEMPT_TIMEOUT_S = 3600.0  # the driver's per-attempt SIGALRM limit


class VTCSetting(BaseModel):
    """One VTC-Bench setting: prompts, tools and the reference loop's parameters (fncall_agent.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    system_prompt: str
    user_template: str = Field(description="fields: question, image_path, image_size[, reference_trajectory]")
    tool_set: ToolSet
    include_gt_toolchain: bool = False
    max_model_calls: int = 20
    no_tools_on_last_call: bool = True
    remaining_note: str = P.REMAINING_NOTE
    remaining_note_max: int = Field(default=5, description="note when 1 < calls left <= this")
    last_call_note: str = P.LAST_CALL_NOTE
    continue_nudge: str = P.CONTINUE_NUDGE
    final_nudge: str = P.FINAL_NUDGE
    no_answer_retry: str = P.NO_ANSWER_RETRY
    max_nudges: int = Field(default=5, description="retries of the no-answer prompt on the last call")
    tool_image_note: str = P.TOOL_IMAGE_NOTE
    task_attempts: int = Field(default=3, description="whole-task reruns on an empty/refusing answer")
    retry_answer_keywords: tuple[str, ...] = P.RETRY_ANSWER_KEYWORDS
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 20
    max_tokens: int = 40960
    seed: int = 1234
    repetition_penalty: float = 1.0
    presence_penalty: float = 0


def _setting(name: str, desc: str, system: str, tools: ToolSet, gt: bool = False) -> VTCSetting:
    return VTCSetting(
        name=name, description=desc, system_prompt=system,
        user_template=P.USER_TEMPLATE_GT if gt else P.USER_TEMPLATE, tool_set=tools, include_gt_toolchain=gt,
    )


SETTINGS: dict[str, VTCSetting] = {
    s.name: s
    for s in (
        _setting("base", "direct answer, no tools (paper's Base; not in the official code)", P.SYSTEM_DEFAULT, "none"),
        _setting("code", "code_interpreter with the Allowed Capabilities description", P.SYSTEM_STRONG, "code"),
        _setting("interface", "the 35 OpenCV interface tools, strong system prompt", P.SYSTEM_STRONG, "interface"),
        _setting("weak", "interface tools, weak system prompt (prompt ablation)", P.SYSTEM_WEAK, "interface"),
        _setting("strong", "interface tools, strong system prompt (= interface)", P.SYSTEM_STRONG, "interface"),
        _setting("strong+gt", "strong prompt + the reference toolchain in the user prompt", P.SYSTEM_STRONG,
                 "interface", gt=True),
    )
}
DEFAULT_SETTING = "interface"


def render_user_prompt(task: Task, image_path: str, width: int, height: int, setting: VTCSetting) -> str:
    """The first user message's text exactly as the reference builds it (`format_user_prompt`).

    `image_path` is what the model should pass to tools: in toolsight the workspace file name.
    """
    turn = task.turns[0]
    fields: dict[str, str] = {
        "question": turn.prompt,
        "image_path": image_path,
        "image_size": f"{width}x{height}",
    }
    if setting.include_gt_toolchain:
        raw = turn.meta.get("model_tools_gt")
        if not isinstance(raw, str) or not raw:
            raw = json.dumps([s.tool for s in turn.reference_steps], ensure_ascii=False)
        fields["reference_trajectory"] = raw
    return setting.user_template.format(**fields)


def last_call_note(question: str, setting: VTCSetting) -> str:
    """The note appended to the tool result when exactly one model call remains."""
    return setting.last_call_note.format(question=question)


TOOLSETS: dict[ToolSet, list[str]] = {"none": [], "code": ["vtc_code"], "interface": ["opencv"]}
# the official loop offers the reference's own schemas and result texts: the 35 interface tools
# (benchmarks/vtc/interface.py) and the code interpreter on the kernel (benchmarks/vtc/code.py)
OFFICIAL_TOOLSETS: dict[ToolSet, list[str]] = {"none": [], "code": ["vtc_code_official"],
                                               "interface": ["vtc_interface_official"]}


def official_task_timeout(setting: VTCSetting) -> float:
    """The driver's longest task: 3600 s per attempt (its SIGALRM) times the attempts, plus the waits
    between them. The runner's default --task-timeout for the official loop, so it never ends a task
    the driver would still be running (an explicit --task-timeout wins)."""
    W = DRIVER_RERUN_WAITS
    waits = sum(W[min(i, len(W) - 1)] for i in range(setting.task_attempts - 1))
    return setting.task_attempts * ATTEMPT_TIMEOUT_S + waits


def to_agent_settings(setting: VTCSetting, loop: LoopMode = "official") -> AgentSettings:
    """The generic loop settings for a VTC setting (user template fields renamed to the loop's).

    The loop fills `{prompt}` (question + options), `{image_names}` (workspace file names) and turn meta
    fields (`image_size`, `reference_trajectory`). The reference's different note when one call is
    left becomes the loop's `last_round_note`. `loop="official"` (the default) runs the driver's own
    loop (`benchmarks/vtc/loop.py`) with the reference tools and the driver's full request parameters;
    `"toolsight"` runs the generic loop with toolsight's tools, image budget and downscaling.
    """
    official = loop == "official"
    template = (
        setting.user_template.replace("{question}", "{prompt}").replace("{image_path}", "{image_names}")
    )
    extra: dict[str, Any] = {"top_k": setting.top_k}
    if official:
        extra.update(repetition_penalty=setting.repetition_penalty, presence_penalty=setting.presence_penalty)
    caps: dict[str, Any] = {"time_limit_s": None, "max_images_in_context": None, "max_image_pixels": None,
                            "task_timeout_s": official_task_timeout(setting)} if official else {}
    return AgentSettings(
        name=setting.name,
        loop=loop,
        system_prompt=setting.system_prompt,
        user_template=template,
        answer_format="answer_tag",
        tools=(OFFICIAL_TOOLSETS if official else TOOLSETS)[setting.tool_set],
        max_tool_calls=setting.max_model_calls * 5,
        max_rounds=setting.max_model_calls,
        no_tools_on_last_round=setting.no_tools_on_last_call,
        remaining_note=setting.remaining_note,
        remaining_note_from=setting.remaining_note_max,
        last_round_note=setting.last_call_note,
        nudge=setting.continue_nudge,
        final_nudge=setting.final_nudge,
        max_nudges=setting.max_nudges,
        tool_image_note=setting.tool_image_note,
        generate=GenerateConfig(
            temperature=setting.temperature, top_p=setting.top_p, max_tokens=setting.max_tokens,
            seed=setting.seed, extra_body=extra,
        ),
        **caps,
    )
