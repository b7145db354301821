"""A third-party benchmark end to end, with nothing in toolsight naming it.

The example package `examples/plugin-benchmark` (benchmark `shapes`, generator `shape-count`, its own
tool `count_shapes`) is installed by pip (conftest.py) and driven through the real CLI in
subprocesses: listed, generated, run with the reference agent (100 %, through the tool: without the
tool it scores 0), reported in its own table layout, swept with `reference` and `random`, configured
with its own option, re-scored with its named scorer, and refused on bad input with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH, KIND = "shapes", "shape-count"


def ts(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolsight", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "records.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def one_error_line(r: subprocess.CompletedProcess[str], code: int, *needles: str) -> str:
    assert r.returncode == code, (r.returncode, r.stdout[-1000:], r.stderr[-2000:])
    assert "Traceback" not in r.stdout + r.stderr, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def generated(shapes_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Six generated items (two per level) in the plugin's own format."""
    out = tmp_path_factory.mktemp("shapes") / "set"
    r = ts(shapes_env, "generate", KIND, "--n", "6", "--seed", "5", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"toolsight run {BENCH} --data {out} --model reference" in r.stdout  # run with the benchmark
    return out


def test_the_cli_lists_the_benchmark_its_settings_options_and_generator(shapes_env: dict[str, str]) -> None:
    benches = ts(shapes_env, "list", "benchmarks")
    assert benches.returncode == 0, benches.stderr
    assert any(ln.split()[:2] == [BENCH, "Shapes"] for ln in benches.stdout.splitlines()), benches.stdout
    settings = ts(shapes_env, "list", "settings", BENCH)
    assert settings.returncode == 0, settings.stderr
    assert "tool (default): loop toolsight; tools: shapes;" in settings.stdout
    assert "direct: loop toolsight; tools: no tools;" in settings.stdout
    options = ts(shapes_env, "list", "options", BENCH)
    assert options.stdout.split()[:1] == ["min_area"] and "(default: 40)" in options.stdout, options.stdout
    kinds = ts(shapes_env, "list", "generators")
    assert kinds.returncode == 0, kinds.stderr
    line = next((ln for ln in kinds.stdout.splitlines() if ln.split()[:1] == [KIND]), "")
    assert line.split()[1] == f"{BENCH}:" and "--difficulty 1 = easy, 2 = medium, 3 = hard" in line, kinds.stdout


def test_a_generated_set_is_in_the_plugins_own_format(generated: Path) -> None:
    info = json.loads((generated / "generated.json").read_text())
    assert (info["kind"], info["benchmark"], info["n"], info["run_with_benchmark"]) == (KIND, BENCH, 6, True)
    doc = json.loads((generated / "shapes.json").read_text())
    assert doc["format"] == "shapes/1" and not (generated / "tasks.jsonl").exists()
    assert [i["level"] for i in doc["items"]] == ["easy", "medium", "hard"] * 2
    for item in doc["items"]:  # the solution names what the question asks, never the answer
        assert item["solution"] == [{"tool": "count_shapes", "arguments": {
            "image": "$input", "color": item["color"], "shape": item["shape"]}}]
        assert (generated / item["image"]).is_file()


def test_the_reference_agent_solves_every_generated_task_through_the_tool(
        shapes_env: dict[str, str], generated: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    r = ts(shapes_env, "run", BENCH, "--data", str(generated), "--model", "reference", "--out", str(run),
           "--no-report")
    assert r.returncode == 0, r.stderr[-2000:]
    recs = records(run)
    assert len(recs) == 6
    gold = {i["id"]: str(i["answer"]) for i in json.loads((generated / "shapes.json").read_text())["items"]}
    for rec in recs:
        assert rec["benchmark"] == BENCH and rec["setting"] == "tool" and rec["error"] is None
        assert rec["score"]["value"] == 1.0 and rec["score"]["scorer"] == "shapes", rec["score"]
        assert rec["score"]["answer"] == gold[rec["task_id"]]
        calls = rec["trajectory"]["tool_calls"]
        assert [c["name"] for c in calls] == ["count_shapes"] and calls[0]["ok"], calls
        assert f'"count": {gold[rec["task_id"]]}' in calls[0]["text"]  # the count came from the pixels
    # the report lays the run out as the benchmark declares: its levels in order, then its shapes
    rep = ts(shapes_env, "report", str(run))
    assert rep.returncode == 0, rep.stderr[-2000:]
    assert "| reference | tool | 6 | 0 | 100.0 [100.0–100.0]" in rep.stdout, rep.stdout
    level = rep.stdout.split("### Score % by level")[1].split("\n\n")[1].splitlines()
    assert level[0] == "| Model | Setting | Overall | easy | medium | hard |", level
    assert level[2] == "| reference | tool | 100.0 | 100.0 | 100.0 | 100.0 |", level
    assert "### Score % by shape" in rep.stdout
    assert "| Model | Setting | count\\_shapes |" in rep.stdout  # its own tool in the tool-call share


def test_without_its_tool_or_with_its_option_the_reference_finds_nothing(
        shapes_env: dict[str, str], generated: Path, tmp_path: Path) -> None:
    direct = ts(shapes_env, "run", BENCH, "--data", str(generated), "--model", "reference", "--setting", "direct",
                "--out", str(tmp_path / "direct"), "--no-report")
    assert direct.returncode == 0, direct.stderr[-2000:]
    assert "count_shapes, which this setting does not offer" in direct.stderr  # the baseline's own warning
    assert [r["score"]["value"] for r in records(tmp_path / "direct")] == [0.0] * 6  # it never reads the gold
    big = ts(shapes_env, "run", BENCH, "--data", str(generated), "--model", "reference", "-B", "min_area=100000",
             "--out", str(tmp_path / "big"), "--no-report")
    assert big.returncode == 0, big.stderr[-2000:]
    recs = records(tmp_path / "big")
    assert [r["score"]["answer"] for r in recs] == ["0"] * 6  # the option reached the tool: no blob is big enough
    bad = ts(shapes_env, "run", BENCH, "--data", str(generated), "--model", "reference", "-B", "min_size=3",
             "--out", str(tmp_path / "bad"))
    one_error_line(bad, 2, "-B min_size", "options of shapes: min_area")


def test_its_named_scorer_rescores_a_run(shapes_env: dict[str, str], generated: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    r = ts(shapes_env, "run", BENCH, "--data", str(generated), "--model", "random", "--out", str(run), "--no-report")
    assert r.returncode == 0, r.stderr[-2000:]
    exact = {x["task_id"]: x["score"] for x in records(run)}
    s = ts(shapes_env, "score", str(run), "--scorer", "shapes-near")
    assert s.returncode == 0, s.stderr[-2000:]
    near = [json.loads(x) for x in (run / "scores-shapes-near-official.jsonl").read_text().splitlines()]
    assert len(near) == 6 and all(x["score"]["scorer"] == "shapes-near" for x in near)
    for x in near:  # the same answers; partial credit where the count was close, full credit where exact
        before = exact[x["task_id"]]
        assert x["score"]["answer"] == before["answer"]
        assert x["score"]["value"] >= before["value"] and (x["score"]["value"] == 1.0) == (before["value"] == 1.0)
    assert any(0.0 < x["score"]["value"] < 1.0 for x in near), near  # random guesses near misses too


def test_a_sweep_generates_its_set_and_reports_reference_and_random(shapes_env: dict[str, str], tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('name = "shapes"\nparallel = 2\n\n[defaults]\nconcurrency = 4\n\n'
                    '[[models]]\nspec = "reference"\n\n[[models]]\nspec = "random"\n\n'
                    f'[[benchmarks]]\nname = "{BENCH}"\nsettings = ["tool", "direct"]\n'
                    f'generate = {{ kind = "{KIND}", n = 6, seed = 2 }}\n')
    r = ts(shapes_env, "sweep", str(plan), "--out", str(tmp_path / "sw"))
    assert r.returncode == 0, r.stderr[-3000:]
    sw = tmp_path / "sw"
    (data,) = (sw / "data").iterdir()
    assert (data / "shapes.json").is_file()  # made once, in the plugin's format, read with --data
    runs = sorted(p.name for p in (sw / "runs").iterdir())
    assert runs == ["shapes__direct__random", "shapes__direct__reference", "shapes__tool__random",
                    "shapes__tool__reference"]
    for name in runs:
        manifest = json.loads((sw / "runs" / name / "manifest.json").read_text())
        assert manifest["benchmark"] == BENCH and len(records(sw / "runs" / name)) == 6
    table = r.stdout.split("### shapes: score by model × setting")[1].split("\n\n")[1].splitlines()
    assert table[0] == "| Model | tool · score % [95% CI] | direct · score % [95% CI] |", table
    assert table[2].startswith("| reference | **100.0 [100.0–100.0]** | 0.0 [0.0–0.0] |"), table
    assert table[3].startswith("| random |"), table
    assert "### Score % by level" in r.stdout


def test_bad_input_is_one_line_naming_the_file_item_and_field(
        shapes_env: dict[str, str], generated: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "images").symlink_to(generated / "images")
    doc = json.loads((generated / "shapes.json").read_text())
    doc["items"][2]["shape"] = "hexagon"
    (broken / "shapes.json").write_text(json.dumps(doc))
    r = ts(shapes_env, "run", BENCH, "--data", str(broken), "--model", "reference", "--out", str(tmp_path / "run"))
    one_error_line(r, 2, f"{broken / 'shapes.json'}: items[2].shape:", "'hexagon'")
    assert not (tmp_path / "run").exists()  # refused before a run directory was made
    doc["items"][2]["shape"] = "circle"
    doc["items"][4]["image"] = "images/missing.png"
    (broken / "shapes.json").write_text(json.dumps(doc))
    r = ts(shapes_env, "run", BENCH, "--data", str(broken), "--model", "reference")
    one_error_line(r, 2, "items[4]", ".image: images/missing.png does not exist")
    r = ts(shapes_env, "run", BENCH, "--model", "reference")
    one_error_line(r, 2, "shapes has no default data: pass --data DIR")
