"""PyVision (agents-x-project/PyVision @ d08b4502) as a toolsight agent: `agent.py` (the loop),
`protocol.py` (messages and parsing), `prompts.py` (its templates), `executor.py` (its Python executor
as the `pyvision_python` tool, on a sandbox kernel running `_kernel_runtime.py`). docs/agents.md."""
