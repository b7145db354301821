"""What a tool call did to an image, without an LLM, and the vocabularies that name it.

Layer 2 and benchmark-neutral: `call_operations` / `code_operations` recognise operations
(`Operation`: line, canonical API, qualifiers); a benchmark's `Vocabulary` labels them;
`classify_call` gives a call's labels under a list of vocabularies.
"""

from toolsight.tools.operations.calls import call_operations
from toolsight.tools.operations.code import code_operations
from toolsight.tools.operations.operation import Operation
from toolsight.tools.operations.vocabulary import Vocabulary, classify_call

__all__ = ["Operation", "Vocabulary", "call_operations", "classify_call", "code_operations"]
