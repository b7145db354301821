"""The tool interface in one import: Tool, ToolResult, Artifact, ArtifactStore, Toolbox and @tool.

Each lives in its own module (`result`, `artifacts`, `tool`, `function_tool`, `toolbox`); this module
re-exports them so `from toolsight.tools.base import …` keeps working.
"""

from toolsight.log.artifact import Artifact
from toolsight.log.toolspec import ToolSpec
from toolsight.tools.artifacts import ArtifactStore
from toolsight.tools.function_tool import FunctionTool, format_validation_error, parse_docstring, tool
from toolsight.tools.result import ToolError, ToolResult
from toolsight.tools.tool import Tool, ToolContext, ToolFn, parse_arguments
from toolsight.tools.toolbox import Toolbox

__all__ = [
    "Artifact",
    "ArtifactStore",
    "FunctionTool",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolFn",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "format_validation_error",
    "parse_arguments",
    "parse_docstring",
    "tool",
]
