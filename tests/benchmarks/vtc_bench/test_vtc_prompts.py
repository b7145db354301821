"""VTC-Bench prompts byte for byte, and the settings data.

Expected strings: system prompts and user templates are the `agent.system_prompt` / `prompt_template`
YAML literal blocks of zhuzil/VTC-Bench `eval/eval_config/qwen3_vl_30B_A3B_Thinking_*.yaml` (copied below
with their YAML indentation and de-indented the way a YAML literal block is); loop notes are from
`eval/qwen_agent/agents/fncall_agent.py`; paper App. D (../shared/papers/vtc-bench.txt) is checked too.
"""

from __future__ import annotations

import textwrap

import pytest

from sharedfiles import SHARED_ENV, in_ci, shared_dir
from toolsight.benchmarks.vtc_bench import prompts as P
from toolsight.benchmarks.vtc_bench.settings import (
    SETTINGS,
    VTCSetting,
    last_call_note,
    render_user_prompt,
    to_agent_settings,
)
from toolsight.tasks.schema import ImageRef, Task, ToolStep, Turn

PAPER = shared_dir() / "papers" / "vtc-bench.txt"


def _yaml_block(block: str) -> str:
    """A YAML `|` literal block: common indentation removed, blank lines kept, one final newline."""
    return textwrap.dedent(block).strip("\n") + "\n"


# qwen3_vl_30B_A3B_Thinking_interface.yaml (same in _code.yaml and _interface_StrongPrompt.yaml)
STRONG_YAML = """
      Your role is that of a helpful assistant specialized in solving real-world visual problems using image processing tools. Answer questions about images by combining your visual understanding with the precision of available tools.

      Please follow this structured thinking process and show your work.

      Start an iterative loop for each question:

      - **First, look closely:** Begin with a detailed description of the image in the context of the user's real-life query. List what is immediately visible, and explicitly identify what specific visual details need to be clarified, adjusted, or measured using tools.
      - **Next, apply tools:** Select and invoke just one appropriate function to process the image.
      - **Then, review the findings:** Carefully analyze the tool's output (e.g., the processed image, detected features, or status) and decide on your next action (e.g., did the rotation fix the view? do you need further adjustments?).

      Continue this loop until you have sufficient information.

      To finish, bring everything together in a clear, synthesized answer that fully responds to the user's question.

      Image Path **MUST** be Absolute Path. And only **ONE** tool can be used at a time.
"""

# qwen3_vl_30B_A3B_Thinking_interface_WeakPrompt.yaml (note the space after "tools.")
WEAK_EXPECTED = (
    "Your role is that of a helpful assistant specialized in solving real-world visual problems using image "
    "processing tools. \n\nImage Path **MUST** be Absolute Path. And only **ONE** tool can be used at a time.\n"
)

# prompt_template of the interface / code / WeakPrompt configs
USER_YAML = """
  <image>

  {question}

  ### User Image Path:** "{image_path}"

  ### User Image Size:** "{image_size}"

  ### **Output Format (strict adherence required):**

  <think>Your detailed reasoning process, should go here.</think>

  <answer>Your final answer to the user's question goes here.</answer>
"""

# prompt_template of the StrongPrompt config (two spaces after "problems :")
USER_GT_YAML = """
  <image>

  {question}

  ### User Image Path:** "{image_path}"

  ### User Image Size:** "{image_size}"

  ### Here is the **Reference Trajectory**. You can refer to this trajectory to use tools to solve problems :  "{reference_trajectory}"

  ### **Output Format (strict adherence required):**

  <think>Your detailed reasoning process, should go here.</think>

  <answer>Your final answer to the user's question goes here.</answer>
"""


def test_system_prompts_byte_for_byte() -> None:
    assert _yaml_block(STRONG_YAML) == P.SYSTEM_STRONG
    assert WEAK_EXPECTED == P.SYSTEM_WEAK
    assert P.SYSTEM_DEFAULT == "You are a helpful assistant."  # init_agent's fallback


def test_user_templates_byte_for_byte() -> None:
    assert _yaml_block(USER_YAML) == P.USER_TEMPLATE
    assert _yaml_block(USER_GT_YAML) == P.USER_TEMPLATE_GT


@pytest.mark.skipif(not PAPER.is_file() and not in_ci(), reason=f"paper text absent from {PAPER} (set {SHARED_ENV})")
def test_strong_prompt_matches_paper_appendix_d() -> None:
    text = PAPER.read_text(encoding="utf-8")
    body = text.split("System Prompt (Strong)", 1)[1].split("System Prompt (Weak)", 1)[0]
    paper = " ".join(body.split()).replace("’", "'")
    # same words and order; the paper omits the last paragraph (the absolute-path rule)
    ours = P.SYSTEM_STRONG.rsplit("\n\n", 1)[0]
    assert paper == " ".join(ours.split())
    weak = text.split("System Prompt (Weak)", 1)[1].split("User Prompt", 1)[0].strip()
    assert P.SYSTEM_WEAK.startswith(weak + " ")
    assert "### Here is the **Reference Trajectory**. You can refer to this" in text


def test_loop_notes_byte_for_byte() -> None:
    assert P.REMAINING_NOTE.format(n=3) == "\n[Note: You have 3 more conversation opportunities remaining.]"
    assert P.CONTINUE_NUDGE == "Please continue the analysis based on the tool"
    assert P.FINAL_NUDGE == "Please provide your final answer in the required format:\n<answer>Your final answer here</answer>"
    assert P.NO_ANSWER_RETRY == (
        "Please answer the questions directly based on the results of the previous processing. "
        "Please provide your final answer in the required format:\n<answer>Your final answer here</answer>."
    )
    s = SETTINGS["interface"]
    assert last_call_note("How many?", s) == (
        "\n[You have just 1 more conversation opportunity. Please answer the following questions directly "
        "based on the results of the previous processing: [How many?]], ### **Output Format (strict adherence "
        "required):**\n<think>Your detailed reasoning process, should go here.</think>\n"
        "<answer>Your final answer to the user's question goes here.</answer>"
    )


def test_code_tool_description() -> None:
    d = P.CODE_PARAM_DESCRIPTION
    assert d.startswith(
        "\nExecutes Python code to handle images based strictly on the allowed capabilities listed below.\n\n"
        "**CRITICAL INSTRUCTIONS FOR MODEL:**\n1.  **RESTRICTED SCOPE:** You are strictly permitted to implement "
        "*only* the specific image handling operations defined"
    )
    assert d.endswith("default values, and calculation logic).\n" + " " * 16)
    assert d.count("**CRITICAL INSTRUCTIONS FOR MODEL:**") == 2
    # the 35 operations, each a "### name" heading
    ops = [ln[4:] for ln in d.splitlines() if ln.startswith("### ")]
    assert len(ops) == 35 and len(set(ops)) == 35
    assert ops[0] == "colorspace_gray" and ops[-1] == "draw_circle"
    assert "  - `flags` (integer, optional): Integer. Default: 4|FLOODFILL_FIXED_RANGE\n" in d
    assert P.CODE_TOOL_PARAMETERS["required"] == ["reasoning", "code"]
    assert P.CODE_TOOL_DESCRIPTION.endswith("Without the display() call, saved images will not be returned in the results.\n")


def _task() -> Task:
    return Task(
        id="color_16",
        benchmark="vtc-bench",
        turns=[Turn(
            prompt="Q?\n\nOptions:\nA. 1\n\nB. 2\n", images=[ImageRef(path="images/color/color_16.jpg")],
            answer="A", options={"A": "1", "B": "2"}, answer_type="choice",
            reference_steps=[ToolStep(tool="Crop"), ToolStep(tool="Flip")],
            meta={"model_tools_gt": '["Crop", “Flip"]', "image_size": "640x480",
                  "reference_trajectory": '["Crop", “Flip"]'},
        )],
    )


def test_render_user_prompt_each_setting() -> None:
    t = _task()
    plain = render_user_prompt(t, "color_16.jpg", 640, 480, SETTINGS["interface"])
    assert plain == (
        '<image>\n\nQ?\n\nOptions:\nA. 1\n\nB. 2\n\n\n### User Image Path:** "color_16.jpg"\n\n'
        '### User Image Size:** "640x480"\n\n### **Output Format (strict adherence required):**\n\n'
        "<think>Your detailed reasoning process, should go here.</think>\n\n"
        "<answer>Your final answer to the user's question goes here.</answer>\n"
    )
    for name in ("base", "code", "weak", "strong"):
        assert render_user_prompt(t, "color_16.jpg", 640, 480, SETTINGS[name]) == plain
    gt = render_user_prompt(t, "color_16.jpg", 640, 480, SETTINGS["strong+gt"])
    # the raw TSV cell, curly quote included, exactly as the reference passes model_tools_gt
    assert 'to solve problems :  "["Crop", “Flip"]"\n\n### **Output Format' in gt


def test_settings_data() -> None:
    assert set(SETTINGS) == {"base", "code", "interface", "weak", "strong", "strong+gt"}
    assert SETTINGS["base"].tool_set == "none"
    assert SETTINGS["code"].tool_set == "code" and SETTINGS["code"].system_prompt == P.SYSTEM_STRONG
    assert SETTINGS["weak"].system_prompt == P.SYSTEM_WEAK
    assert SETTINGS["strong+gt"].include_gt_toolchain and SETTINGS["strong+gt"].user_template == P.USER_TEMPLATE_GT
    for s in SETTINGS.values():
        assert s.max_model_calls == 20 and s.no_tools_on_last_call and s.max_nudges == 5
        assert s.remaining_note_max == 5
    with pytest.raises(ValueError):
        VTCSetting(name="x", system_prompt="", user_template="", tool_set="magic")


def test_agent_settings_render_the_same_prompt() -> None:
    t = _task()
    a = to_agent_settings(SETTINGS["strong+gt"], "toolsight")
    assert a.tools == ["opencv"] and a.max_rounds == 20 and a.no_tools_on_last_round
    official = to_agent_settings(SETTINGS["strong+gt"])  # the default: the driver's own loop and tools
    assert official.loop == "official" and official.tools == ["vtc_interface_official"]
    assert official.generate.extra_body == {"top_k": 20, "repetition_penalty": 1.0, "presence_penalty": 0}
    assert a.nudge == P.CONTINUE_NUDGE and a.final_nudge == P.FINAL_NUDGE and a.max_nudges == 5
    assert a.generate.temperature == 0.6 and a.generate.seed == 1234
    turn = t.turns[0]
    loop_text = a.user_template.format(
        prompt=turn.prompt, options="", image_names="color_16.jpg",
        **{k: v for k, v in turn.meta.items() if isinstance(v, str | int | float)},
    )
    assert loop_text == render_user_prompt(t, "color_16.jpg", 640, 480, SETTINGS["strong+gt"])
    assert to_agent_settings(SETTINGS["base"]).tools == []
