"""VisualToolBench texts, byte for byte from the reference code (`xi1ngang/VisualToolBench` @ d4f200a0).

System prompts (`scripts/prompt.py`), the tool descriptors of `VisionTools.get_tools` (`scripts/tools.py`),
and the literal strings `FunC_with_tools` (`scripts/model_inference.py`) puts into conversations. Where
the paper's wording differs (App. C.2, D.4) the reference code's text is kept and the difference is a
row in docs/fidelity.md (e.g. "carefullly", "simpy" for "sympy", bullets "•" for "--"). The paper's own
texts of the code tools (`PAPER_*`) are what the toolsight loop shows.
"""

from __future__ import annotations

from typing import Any

# scripts/prompt.py — `--system_prompt_level low|mid|high` (the CLI offers `medium`, which maps to no prompt)
SYSTEM_LOW = "You are a helpful visual reasoning assistant with access to tools to help you answer the user's question."
SYSTEM_MID = (
    "\nYou are a helpful visual reasoning assistant with access to tools to help you answer the user's question.\n"
    "1. You should use image processing tools to process the image for better visual understanding.\n"
    "2. Remember you must save the transformed image if you used the image processing tools for future reference.\n"
    "3. You should use other general-purpose tools to obtain necessary information to answer the user's question.\n"
)
SYSTEM_HIGH = (
    "\nYou are a *proactive, tool-empowered* visual-reasoning assistant.  \n"
    "When user supplies an image and requests to solve a problem that requires visual content that are small, "
    "ambiguous, or not centered, you must:\n"
    "1. Examine the image carefullly and mentally list the visual clues most likely to locate the target object.\n"
    "2. Proactively use the image-processing tools - such as crop, zoom, or enhance - to isolate and clarify the "
    "relevant region.\n"
    "3. Save each transformed image. The updated image will be appended to the conversation for your reference.\n"
    "4. Iterate as needed. Call the tools repeatedly until the visual evidence is clear enough to answer the "
    "user's request.\n"
    "5. Double-check your observations. Confirm that the final transformed image supports an accurate, confident "
    "response before replying to the user.\n"
    "6. Use other general-purpose tools if needed to answer the user's question.\n"
    "7. Please use the tools wisely as you have limited tool calls.\n"
)
#: the paper's names for the levels (App. C.2): strong = high (default), weak = low
SYSTEM_PROMPTS = {"low": SYSTEM_LOW, "mid": SYSTEM_MID, "high": SYSTEM_HIGH}

# scripts/model_inference.py
CAP_ANSWER = "Model hit the maximum number of tool calls"
TOOL_IMAGE_NOTE = "Here are the transformed images from the tool call {call_id}."
MODEL_FAILED = "Model inference failed after {trials} trials. Last error: {error}"
PROCESSING_ERROR = "Processing Error: {error}"
#: substrings of the model name that make the reference driver use temperature 1.0
REASONING_MODELS = ("o3", "o1", "o1-pro", "o4-mini", "gpt-5", "gpt-5-mini")
THINKING_BUDGET = 5000
MAX_TOOL_CALLS = 20  # the driver's `max_tool_calls`: counts rounds, not calls

# scripts/tools.py — VisionTools.get_tools (the image list is the Python repr of a list of path strings)
IMAGE_DESCRIPTION = (
    "Generate arbitrary Python code for image manipulation and save the transformed image as PNG.\n"
    "• Read one source image (your choice) from the working-directory file list: {image_list}.\n"
    "• Perform any image processing with PIL, NumPy, or OpenCV. You cannot use matplotlib to show the image.\n"
    "• You **must save** the transformed image as PNG to {save_path} using the filename pattern "
    "\"transformed_image_i.png\", where the counter **i starts at 0 and increments on each invocation** "
    "so files are never overwritten. Example:\n"
    "    img.save(f\"{save_path}/transformed_image_{{i}}.png\", \"PNG\")\n"
)
INTERPRETER_DESCRIPTION = (
    "General-purpose Python interpreter. Run arbitrary Python code and capture stdout via print(). "
    "Any exceptions are returned in stderr.\n\n"
    "Pre-installed packages:\n"
    "  • numpy\n"
    "  • pandas\n"
    "  • requests\n"
    "  • scipy\n"
    "  • scikit-learn\n"
    "  • simpy\n"
    "  • tabulate\n"
    "  • beautifulsoup4\n"
    "  • yfinance"
)
CODE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "description": "Python code to run.", "minLength": 1, "maxLength": 5000},
    },
    "required": ["code"],
}
SEARCH_DESCRIPTION = (
    "Perform a Google search and return relevant results. "
    "Useful for finding current information, news, or facts about topics."
)
SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "The search query to look up"},
        "num_results": {"type": "integer", "description": "Number of results to return (1-10)", "default": 5},
    },
    "required": ["query"],
}
PAGE_TEXT_DESCRIPTION = (
    "Fetch a web page and extract its text content. "
    "Useful for reading articles, documentation, or any web page content."
)
PAGE_TEXT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"url": {"type": "string", "description": "The URL of the web page to fetch"}},
    "required": ["url"],
}
WEATHER_DESCRIPTION = (
    "Get historical weather data for a specific location and date. "
    "Useful for analyzing past weather patterns or events."
)
WEATHER_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string",
                     "description": "City name or coordinates (e.g., 'New York, NY' or '40.7128,-74.0060')"},
        "date": {"type": "string", "description": "Date in YYYY-MM-DD format"},
    },
    "required": ["location", "date"],
}
CALCULATOR_DESCRIPTION = (
    "A calculator tool that can perform basic arithmetic operations including +, -, *, /, %, ^, sqrt, sin, cos, "
    "tan, log, exp, and parentheses."
)
CALCULATOR_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "expression": {"type": "string", "description": "The expression to evaluate, e.g. \"2 * 3.14 * 5\"."},
    },
    "required": ["expression"],
}
# The paper's wording (App. D.4) of the code tools and the calculator: what the toolsight loop shows
# (docs/fidelity.md), through this benchmark's own tool sets (benchmark.py) on the generic tools.
PAPER_IMAGE_DESCRIPTION = (
    "Generate arbitrary Python code for image manipulation and save the transformed image as PNG.\n"
    "--Read one source image (your choice) from the working-directory file list: {image_list}.\n"
    "--Perform any image processing with PIL, NumPy, or OpenCV. You cannot use matplotlib to show the image.\n"
    "--You **must** save** the transformed image as PNG to {processed_image_save_path} using the filename pattern\n"
    "\"transformed_image_i.png\", where the counter **i starts at 0 and increments on each invocation**\n"
    "so files are never overwritten. Example:\n"
    "    img.save(f\"{processed_image_save_path}/transformed_image_{{i}}.png\", \"PNG\")\n"
)
PAPER_INTERPRETER_INTRO = (
    "General-purpose Python interpreter. Run arbitrary Python code and capture stdout via print(). "
    "Any exceptions are returned in stderr.\n\n"
    "Pre-installed packages:\n"
)
#: the paper's package list (pip name, import name); the description keeps only what is installed here
PAPER_PACKAGES = (
    ("numpy", "numpy"), ("pandas", "pandas"), ("requests", "requests"), ("scipy", "scipy"),
    ("scikit-learn", "sklearn"), ("sympy", "sympy"), ("tabulate", "tabulate"), ("beautifulsoup4", "bs4"),
    ("yfinance", "yfinance"),
)
#: the paper's calculator text is the code's (CALCULATOR_DESCRIPTION, CALCULATOR_PARAMETERS above)

#: get_tools order; the web tools' official names (the paper calls google_search `web_search`)
OFFICIAL_TOOL_ORDER = ("python_image_processing", "python_interpreter", "google_search", "browser_get_page_text",
                       "historical_weather", "calculator")
