"""`--batch` takes an optional value (`toolsight.cli.batch_flag`): alone it means `--batch calls`,
wherever it stands; `--batch rounds` / `--batch calls` keep their value; a bad value is one line."""

from __future__ import annotations

import pytest

from toolsight.cli import batch_flag


@pytest.mark.parametrize("args,want", [
    (["run", "B", "--batch"], ["run", "B", "--batch=calls"]),
    (["run", "--batch", "B", "-m", "M"], ["run", "--batch=calls", "B", "-m", "M"]),
    (["run", "B", "--batch", "--limit", "2"], ["run", "B", "--batch=calls", "--limit", "2"]),
    (["run", "B", "--batch", "rounds"], ["run", "B", "--batch", "rounds"]),
    (["run", "B", "--batch", "calls"], ["run", "B", "--batch", "calls"]),
    (["run", "B", "--judge-batch"], ["run", "B", "--judge-batch"]),
    (["run", "--", "--batch"], ["run", "--", "--batch"]),
])
def test_batch_flag(args: list[str], want: list[str]) -> None:
    assert batch_flag(args) == want


def test_a_bad_batch_value_is_one_line(tmp_path: object) -> None:
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "toolsight", "run", "starter", "-m", "reference", "--batch=sometimes"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert "--batch 'sometimes': use --batch (one-call settings) or --batch rounds" in r.stderr
    assert "Traceback" not in r.stderr
