"""The markdown report and the trace viewer of a fixed run are byte-for-byte what they were.

Memory work on the end of `toolsight run` (docs/speed.md) must not change what the report and the
viewer contain. The fixture run (`runfixture`, deterministic: every task shape, real PNG artifacts,
its dataset for the gold answers) is built in a temporary folder; its outputs, with that folder's
path replaced by `{ROOT}`, must hash to what `golden/report_viewer.json` holds. After a change
to the report or the viewer *on purpose*, rewrite that file:
`TOOLSIGHT_REGOLD=1 pytest tests/report/test_report_bytes.py` (and say so in the commit).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from runfixture import make_fixture_run
from toolsight.report import build_report
from toolsight.report.viewer import build_viewer

GOLDEN = Path(__file__).parent / "golden" / "report_viewer.json"


def outputs(root: Path, run_dir: Path) -> dict[str, str]:
    """sha256 of each output (the report as `report.md`, each viewer file by its path in the site)."""
    texts = {"report.md": build_report([run_dir], by=[], fmt="md")}
    site = build_viewer(run_dir, None).parent
    for f in sorted(site.rglob("*")):
        if f.is_file():
            texts["viewer/" + f.relative_to(site).as_posix()] = f.read_text(encoding="utf-8")
    live = json.loads(texts["viewer/live.json"])  # its version is the build time
    live.pop("version")
    live["sources"] = len(live["sources"])  # (size, mtime) of records.jsonl, whose paths vary with the tmp folder
    texts["viewer/live.json"] = json.dumps(live, sort_keys=True)
    return {name: hashlib.sha256(text.replace(str(root.resolve()), "{ROOT}").encode()).hexdigest()
            for name, text in texts.items()}


@pytest.mark.parametrize("setting", ["code", "base"])
def test_the_report_and_viewer_of_a_fixed_run_are_unchanged(tmp_path: Path, setting: str) -> None:
    run_dir = make_fixture_run(tmp_path, name=f"{setting}-run", setting=setting, n_tasks=14, seed=3,
                               tools=setting != "base")
    got = outputs(tmp_path, run_dir)
    golden = json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}
    if os.environ.get("TOOLSIGHT_REGOLD"):
        golden[setting] = got
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    want = golden.get(setting)
    assert want is not None, f"{GOLDEN} has no '{setting}' entry: run with TOOLSIGHT_REGOLD=1 once"
    changed = sorted(k for k in want.keys() | got.keys() if want.get(k) != got.get(k))
    assert not changed, f"these outputs changed: {changed} (on purpose? see this module's docstring)"
    assert len(got) == 14 + 3  # report.md, index.html, live.json and one page per task
