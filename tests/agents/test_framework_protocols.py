"""PyVision's and DeepEyes' protocols as pure functions: parsing replies, building messages, sizes.
The expected values are the originals' (their code read at the pinned commits, and the sizes in the
DeepEyes transcripts)."""

from __future__ import annotations

import pytest

from toolsight.agents.deepeyes import protocol as D
from toolsight.agents.deepeyes.prompts import system_prompt
from toolsight.agents.pyvision import protocol as P
from toolsight.agents.pyvision.prompts import MULTI_IMAGE, NO_TOOL, V2
from toolsight.models.base import ImagePart, TextPart


def test_pyvision_reply_parsing() -> None:
    assert P.wants_code("text <code>\nprint(1)") and P.wants_code("x</code>") and not P.wants_code("<answer>A</answer>")
    assert P.extract_code("a\n```python\nx = 1\n```\nb\n```python\ny = 2\n```\n") == "y = 2"  # the last fence
    assert P.extract_code("<code>\nprint('no fence')\n") == "<code>\nprint('no fence')"  # the whole reply
    assert P.extract_code("<code>\n```python\n```\n") == ""


def test_pyvision_templates_and_first_message() -> None:
    assert P.template_for("vistool", 1) is V2 and P.template_for("vistool_with_img_info", 3) is MULTI_IMAGE
    assert P.template_for("no_tool", 2) is NO_TOOL
    a, b = ImagePart(path="/a.png"), ImagePart(path="/b.jpg")
    msg = P.first_message("vistool_with_img_info_v2", "Q?", [(a, 10, 20), (b, 30, 40)])
    texts = [p.text if isinstance(p, TextPart) else "IMG" for p in msg.content]
    assert texts[:6] == ["<image_clue_0>", "IMG", "</image_clue_0>\n\n", "<image_clue_1>", "IMG", "</image_clue_1>\n\n"]
    assert ("width of image_clue_0: 10, height of image_clue_0: 20\nwidth of image_clue_1: 30, height of "
            "image_clue_1: 40\n") in texts[6] and "\nQ?\n" in texts[6]
    no_tool = P.first_message("no_tool", "Q?", [(a, 10, 20)])
    first, second = no_tool.content
    assert isinstance(first, ImagePart) and isinstance(second, TextPart)
    assert second.text.endswith("*user question*:\nQ?")


def test_pyvision_interpreter_messages() -> None:
    err = P.interpreter_message("Error: division by zero", None, [], 1)
    assert [p.text for p in err.content if isinstance(p, TextPart)] == ["<interpreter>Error: division by zero",
                                                                         "</interpreter>\n"]
    none = P.interpreter_message("Done", None, [], 1)
    assert [p.text for p in none.content if isinstance(p, TextPart)] == [
        "<interpreter>\nText Result:\nNone\nImage Result:\n", "None", "</interpreter>\n"]
    figs = P.interpreter_message("Done", "hi", [ImagePart(path="/f1.png"), ImagePart(path="/f2.png")], 3)
    assert [p.text for p in figs.content if isinstance(p, TextPart)] == [
        "<interpreter>\nText Result:\nhi\nImage Result:\n", "<image_clue_3>", "</image_clue_3>", "<image_clue_4>",
        "</image_clue_4>", "</interpreter>\n"]
    assert P.code_message("x\n").text == "x\n</code>\n"


def test_deepeyes_reply_parsing() -> None:
    two = '<tool_call>\n{"a": 1}\n</tool_call>\n<tool_call>\n{"b": 2}\n</tool_call>'
    assert D.first_tool_call(two) == '{"a": 1}' and D.first_tool_call("no call") is None
    assert D.first_tool_call("<tool_call>{'unclosed': 1}") == "{'unclosed': 1}"
    assert D.answer_of("<answer> A </answer> <answer>B</answer>") == "A"
    assert D.answer_of("A</answer>") == "A</answer>"  # both tags or the whole reply


@pytest.mark.parametrize(("w", "h", "want"), [(700, 180, (700, 168)), (600.25, 299.75, (588, 308)),
                                               (200, 200, (196, 196)), (10, 10, (56, 56))])
def test_smart_resize_as_the_transcripts_show(w: float, h: float, want: tuple[int, int]) -> None:
    assert D.smart_resize(w, h) == want  # called as the driver does: (width, height) → (new_w, new_h)


def test_deepeyes_options_and_toolsight_parsing() -> None:
    assert D.options_block(["x", "y"], official=True) == "\nA. x\nB. y\n"
    seven = [str(i) for i in range(7)]
    with pytest.raises(D.TooManyOptions):
        D.options_block(seven, official=True)
    assert D.options_block(seven, official=False).endswith("G. 6\n")
    assert D.parse_call('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [1, 2, 3.5, 4]}}') == [1, 2, 3.5, 4]
    for bad, why in (("{'name': 1}", "Invalid tool call format"), ('{"name": "other", "arguments": {}}', "Unknown tool"),
                     ('{"name": "image_zoom_in_tool", "arguments": {"bbox": [1, 2, 3, 4]}}', "bbox_2d"),
                     ('{"name": "image_zoom_in_tool", "arguments": {"bbox_2d": [1, 2, true, 4]}}', "four numbers")):
        with pytest.raises(ValueError, match=why):
            D.parse_call(bad)
    assert D.clamp([-5, 10, 2000, 300], 1600, 1200) == [0, 10, 1600, 300]
    with pytest.raises(ValueError, match="ZOOM IN ARGUMENTS ARE INVALID"):
        D.clamp([400, 100, 200, 300], 640, 480)
    assert '"required":["bbox"]' in system_prompt() and '"required":["bbox_2d"]' in system_prompt(fixed_schema=True)
