"""VisualToolBench's settings and texts, byte for byte (reference code @ d4f200a0; paper App. C.2, D.4)."""

from __future__ import annotations

from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.visualtoolbench import prompts as P
from toolsight.tools.registry import build_tools

# Paper App. C.2, "System Prompt (Strong)", one line per sentence as printed.
PAPER_STRONG = [
    "You are a *proactive, tool-empowered* visual-reasoning assistant.",
    "When user supplies an image and requests to solve a problem that requires visual content that are small, "
    "ambiguous, or not centered, you must:",
    "1. Examine the image carefully and mentally list the visual clues most likely to locate the target object.",
    "2. Proactively use the image-processing tools - such as crop, zoom, or enhance - to isolate and clarify the "
    "relevant region.",
    "3. Save each transformed image. The updated image will be appended to the conversation for your reference.",
    "4. Iterate as needed. Call the tools repeatedly until the visual evidence is clear enough to answer the user's "
    "request.",
    "5. Double-check your observations. Confirm that the final transformed image supports an accurate, confident "
    "response before replying to the user.",
    "6. Use other general-purpose tools if needed to answer the user's question.",
    "7. Please use the tools wisely as you have limited tool calls.",
]
PAPER_WEAK = "You are a helpful visual reasoning assistant with access to tools to help you answer the user's question."


def test_strong_prompt_is_the_codes_high_level_byte_for_byte() -> None:
    # the code's string: a leading newline, two spaces after the first sentence, "carefullly", a final newline
    code = "\n" + PAPER_STRONG[0] + "  \n" + "\n".join(PAPER_STRONG[1:]).replace("carefully", "carefullly") + "\n"
    assert code == P.SYSTEM_HIGH
    assert P.SYSTEM_HIGH.encode().count(b"carefullly") == 1
    assert P.SYSTEM_LOW == PAPER_WEAK
    assert P.SYSTEM_PROMPTS == {"low": P.SYSTEM_LOW, "mid": P.SYSTEM_MID, "high": P.SYSTEM_HIGH}


def test_settings() -> None:
    b = get_benchmark("visualtoolbench")
    s = b.settings()
    assert list(s) == ["strong", "weak", "no-vision-tool", "no-tools"] and b.default_setting == "strong"
    assert s["strong"].system_prompt == P.SYSTEM_HIGH and s["weak"].system_prompt == P.SYSTEM_LOW
    assert s["no-vision-tool"].system_prompt == P.SYSTEM_HIGH and s["no-tools"].system_prompt is None
    assert all(x.loop == "official" and x.history == "gold" and x.max_tool_calls == 20 for x in s.values())
    web = ["web_search", "browser_get_page_text", "historical_weather"]
    assert s["strong"].tools == s["weak"].tools == ["vtb_python_image_processing", "vtb_python_interpreter",
                                                    "vtb_calculator", *web]
    assert s["no-vision-tool"].tools == ["vtb_python_interpreter", "vtb_calculator", *web] and s["no-tools"].tools == []
    # the benchmark's own sets: the generic tools under their names, with the paper's texts (App. D.4)
    tools = {t.name: t for t in build_tools(s["strong"].tools, b.toolsets())}
    assert list(tools)[:3] == ["python_image_processing", "python_interpreter", "calculator"]
    assert tools["python_image_processing"].description == P.PAPER_IMAGE_DESCRIPTION
    assert tools["python_interpreter"].description.startswith(P.PAPER_INTERPRETER_INTRO + "    • numpy\n")
    assert (tools["calculator"].description, tools["calculator"].parameters) == (P.CALCULATOR_DESCRIPTION,
                                                                                 P.CALCULATOR_PARAMETERS)
    assert s["strong"].tool_image_note.format(call_id="call_1") == \
        "Here are the transformed images from the tool call call_1."


def test_tool_descriptors_are_the_references() -> None:
    desc = P.IMAGE_DESCRIPTION.format(image_list=repr(["/d/a.png"]), save_path="/d/out")
    assert desc == (
        "Generate arbitrary Python code for image manipulation and save the transformed image as PNG.\n"
        "• Read one source image (your choice) from the working-directory file list: ['/d/a.png'].\n"
        "• Perform any image processing with PIL, NumPy, or OpenCV. You cannot use matplotlib to show the image.\n"
        "• You **must save** the transformed image as PNG to /d/out using the filename pattern "
        "\"transformed_image_i.png\", where the counter **i starts at 0 and increments on each invocation** so "
        "files are never overwritten. Example:\n"
        "    img.save(f\"/d/out/transformed_image_{i}.png\", \"PNG\")\n")
    # the code lists simpy (the paper: sympy) with two-space bullets
    assert P.INTERPRETER_DESCRIPTION.endswith("Pre-installed packages:\n  • numpy\n  • pandas\n  • requests\n"
                                              "  • scipy\n  • scikit-learn\n  • simpy\n  • tabulate\n"
                                              "  • beautifulsoup4\n  • yfinance")
    assert P.CODE_PARAMETERS["properties"]["code"] == {"type": "string", "description": "Python code to run.",
                                                       "minLength": 1, "maxLength": 5000}
    assert P.SEARCH_PARAMETERS["properties"]["num_results"]["default"] == 5
    assert P.CAP_ANSWER == "Model hit the maximum number of tool calls"
    assert P.OFFICIAL_TOOL_ORDER[2] == "google_search"
