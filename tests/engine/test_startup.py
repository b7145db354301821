"""Start-up stays light: `toolsight --help` must not import numpy, PIL, OpenCV or a provider SDK."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numpy", "PIL", "cv2", "openai", "anthropic", "google.genai", "pydantic")

PROBE = """
import json, sys
sys.argv = ["toolsight", "--help"]
import toolsight.cli
try:
    toolsight.cli.main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {"numpy", "PIL", "cv2", "openai", "anthropic", "pydantic"} or m.startswith("google.genai"))))
"""


def test_help_imports_no_heavy_module() -> None:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True)
    assert "Usage" in r.stdout and "run" in r.stdout
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}], loaded
