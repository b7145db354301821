"""`--prices FILE` on `run`, `retry` and `score`: the run summary's cost is priced with the file merged
over the built-in table and names it; a bad file is one line with exit code 2, before anything runs.
Real subprocesses against the scripted server; the expected cost is computed here from the token
counts the records hold and the prices this test wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from e2ekit import dataset, records, run

from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script

# a model the built-in table does not know: any cost in the summary comes from the file
PRICES = {"openai/scripted-1": {"input": 4.0, "output": 20.0}}


def _prices(path: Path, table: Mapping[str, object] = PRICES) -> Path:
    path.write_text(json.dumps(table))
    return path


def _expected(run_dir: Path) -> float:
    usage = [x["trajectory"]["usage"] for x in records(run_dir)]
    return sum(u["input_tokens"] * 4.0 + u["output_tokens"] * 20.0 for u in usage) / 1e6


def _run(srv: ScriptedServer, ds: Path, out: Path, *extra: str) -> list[str]:
    return ["run", str(ds), "-m", "openai/scripted-1", "--base-url", srv.openai_base_url, "--out", str(out),
            "--no-report", *extra]


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer(Script.model_validate({"steps": [{"text": "<answer>A</answer>"}]})) as srv:
        yield srv


def test_run_prices_the_summary_with_the_file_and_names_it(server: ScriptedServer, tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 3)
    table = _prices(tmp_path / "my-prices.json")
    r = run(*_run(server, ds, tmp_path / "priced", "--prices", str(table)))
    assert r.returncode in (0, 3), r.stderr
    m = re.search(r"\$(\d+\.\d{4}) at the prices in my-prices\.json \(over the built-in table\) \(3 task\(s\) priced\)",
                  r.stdout + r.stderr)
    assert m is not None, r.stdout + r.stderr
    assert float(m.group(1)) == pytest.approx(_expected(tmp_path / "priced"), abs=1e-4) and float(m.group(1)) > 0
    manifest = json.loads((tmp_path / "priced" / "manifest.json").read_text())
    assert manifest["options"]["prices"] == str(table)
    r = run(*_run(server, ds, tmp_path / "builtin"))  # the built-in table does not price this model
    assert r.returncode in (0, 3), r.stderr
    assert " at toolsight's price table" not in r.stdout + r.stderr and "task(s) priced" not in r.stdout + r.stderr


def test_retry_takes_prices_too(server: ScriptedServer, tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    out = tmp_path / "run"
    assert run(*_run(server, ds, out)).returncode in (0, 3)
    cheap = _prices(tmp_path / "cheap.toml", {})
    cheap.write_text('[models."openai/scripted-1"]\ninput = 4.0\noutput = 20.0\n')
    r = run("retry", str(out), "--base-url", server.openai_base_url, "--no-report", "--prices", str(cheap))
    assert r.returncode in (0, 3), r.stderr
    assert "at the prices in cheap.toml (over the built-in table) (2 task(s) priced)" in r.stdout + r.stderr


@pytest.mark.parametrize("content,why", [
    (None, "price table not found"),
    ("{not json", "not valid JSON"),
    ('{"openai/scripted-1": {"input": -1, "output": 2}}', "openai/scripted-1: input"),
])
def test_a_bad_price_file_is_one_line_and_exit_2(content: str | None, why: str, server: ScriptedServer,
                                                 tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 1)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    out = tmp_path / "run"
    r = run(*_run(server, ds, out, "--prices", str(bad)))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: --prices: ") and why in lines[0] and str(bad) in lines[0]
    assert not out.exists() and not server.requests  # nothing ran
    for args in (["retry", str(out)], ["score", str(out)]):
        r = run(*args, "--prices", str(bad))
        assert r.returncode == 2 and "Traceback" not in r.stderr and why in r.stderr


def test_score_prices_its_table(server: ScriptedServer, tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    out = tmp_path / "run"
    assert run(*_run(server, ds, out)).returncode in (0, 3)
    r = run("score", str(out), "--name", "plain")
    assert r.returncode in (0, 3), r.stderr
    assert "$" not in r.stdout.split("\n", 1)[1]  # the table (after the `wrote ...` line) has no cost
    r = run("score", str(out), "--name", "priced", "--prices", str(_prices(tmp_path / "p.json")))
    assert r.returncode in (0, 3), r.stderr
    assert f"{_expected(out):.4f}".rstrip("0") in r.stdout, r.stdout
