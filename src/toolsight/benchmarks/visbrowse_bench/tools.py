"""VisBrowse-Bench's browsing tools: the web layer's tools (`toolsight.tools.web_tools`) with the
reference's descriptions and JSON schemas (`tool_util.py` @ 10b95c0c, byte for byte, whitespace
quirks included) and its page-summariser prompt. The settings offer them as this benchmark's tool sets
`visbrowse_browse` (`+IS`: all five) and `visbrowse_browse_text` (`+TS`: text_search, visit); the
official loop sends these schemas as they are.
"""

from __future__ import annotations

from typing import Any

from toolsight.benchmarks.visbrowse_bench.prompts import EXTRACTOR_PROMPT
from toolsight.tools.base import Tool
from toolsight.tools.web_tools import ImageCrop, ImageSearch, ReverseImageSearch, TextSearch, Visit, WebTool

#: the reference's tool schemas (tool_util.py), in its order
REFERENCE_SCHEMAS: dict[str, dict[str, Any]] = {
    "text_search": {
        "description": "Performs batched web searches: supply a 'query'; the tool retrieves the top 5 results for "
                       "the query in one call.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "The search query."}},
                       "required": ["query"]},
    },
    "reverse_image_search": {
        "description": "Utilize the image search engine to retrieve relevant information based on the input image.",
        "parameters": {"type": "object",
                       "properties": {"image_url": {"type": "string", "description": "The url of the image to be searched."}},
                       "required": ["image_url"]},
    },
    "visit": {
        "description": "visit a webpage and return the summary of webpage.",
        "parameters": {"type": "object", "properties": {
            "url": {"type": "string", "description": "The url of webpage you want to explore."},
            "goal": {"type": "string", "description": "The goal of the visit for the webpage."}},
            "required": ["url", "goal"]},
    },
    "image_search": {
        "description": "Performs image search: supply a 'query'; the tool retrieves relevant images and web pages "
                       "based on the input query.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "The search query."}},
                       "required": ["query"]},
    },
    "image_crop": {
        "description": "Zoom in on a specific region of an image by cropping it based on a bounding box (bbox) and "
                       "return the url of cropped image.",
        "parameters": {"type": "object", "properties": {
            "image_url": {"type": "string", "description": "The url of origin image."},
            "bbox": {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4,
                     "description": "The bounding box of the region to zoom in, in the form of a text array of "
                                    "coordinates [xmin, ymin, xmax, ymax], where (xmin, ymin) is the top-left corner "
                                    "and (xmax, ymax) is the bottom-right corner." + " " * 33 + "These coordinates "
                                    "must be relative position coordinates, ranging from 0 to 1, and rounded to "
                                    "three decimal places."}},
            "required": ["image_url", "bbox"]},
    },
}


def _reference(cls: type[WebTool]) -> WebTool:
    spec = REFERENCE_SCHEMAS[cls.tool_name]
    if cls is Visit:
        return Visit(spec["description"], spec["parameters"], summary_prompt=EXTRACTOR_PROMPT)
    return cls(spec["description"], spec["parameters"])


def reference_tools() -> list[Tool]:
    """The five tools, in the reference's order (the order its `tools` array is sent in)."""
    return [_reference(c) for c in (TextSearch, ReverseImageSearch, Visit, ImageSearch, ImageCrop)]


def reference_text_tools() -> list[Tool]:
    """`+TS`: text search and page visits only."""
    return [_reference(c) for c in (TextSearch, Visit)]
