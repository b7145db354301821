"""DeepEyes (Visual-Agent/DeepEyes @ 6c5e7967, `eval/eval_vstar.py`) as a toolsight agent: `agent.py`
(the loop), `protocol.py` (messages, parsing, smart_resize), `prompts.py` (its texts), `zoom.py` (its
zoom-in as the `image_zoom_in_tool` tool, run in the sandbox). docs/agents.md."""
