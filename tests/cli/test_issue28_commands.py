"""The commands of issue 28 (items 2-5, 7): each runs as a user types it and gives the documented
result — one unwrapped error line naming the flag, file or field and the fix, the right exit code,
nothing written when nothing runs, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import assert_one_error_line, dataset, lines, records, ts, write_png
from toolsight.models.scripted.script import Script
from toolsight.models.scripted.server import ScriptedServer


@pytest.fixture(scope="module")
def vtc(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated VTC-style set (its reference solutions call OpenCV tools)."""
    root = tmp_path_factory.mktemp("vtc")
    r = ts("generate", "vtc-bars", "--n", "2", "--out", str(root / "gen"))
    assert r.returncode == 0, r.stderr
    return root / "gen"


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory, vtc: Path) -> Path:
    run = tmp_path_factory.mktemp("fin") / "run"
    r = ts("run", str(vtc), "-m", "reference", "--out", str(run), "--no-report")
    assert r.returncode == 0, r.stderr
    return run


# ---- item 2: $prev in the first tool call ---------------------------------------------------------------

def test_prev_in_the_first_tool_call_is_the_input_image(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    script = Script.model_validate({"steps": [
        {"tool_calls": [{"name": "crop", "arguments": {"image": "$prev", "bbox": [0, 0, 0.5, 0.5]}}]},
        {"text": "<answer>A</answer>"},
    ]})
    with ScriptedServer(script, record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--setting", "crop",
               "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 0, r.stderr
    for rec in records(tmp_path / "run"):
        call = rec["trajectory"]["tool_calls"][0]
        assert json.loads(call["arguments"])["image"] == "pic.png", call
        assert call["ok"] and call["artifacts"], call


# ---- item 3: flags that were accepted silently --------------------------------------------------------

def test_data_naming_the_dataset_folder_target_itself_is_an_error(vtc: Path, tmp_path: Path) -> None:
    r = ts("run", str(vtc), "--data", str(vtc), "-m", "reference", "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, f"--data {vtc}", "already a dataset folder", f"toolsight run {vtc}")
    assert not (tmp_path / "run").exists()


def test_vtc_missing_images_names_the_data_flag(tmp_path: Path) -> None:
    data = tmp_path / "vtc"
    data.mkdir()
    (data / "VTC-Bench.tsv").write_text("index\tid\tcategory\timage\tquestion\tanswer\tA\tB\n"
                                        "1\tc_1\tchart\timages/chart/c_1.jpg\tHow many?\tA\t1\t2\n", encoding="utf-8")
    r = ts("run", "vtc-bench", "--data", str(data), "-m", "reference", "--out", str(tmp_path / "run"))
    line = assert_one_error_line(r, 2, "image(s) missing", "pass that folder with --data PATH")
    assert "image_root" not in line
    assert not (tmp_path / "run").exists()


def test_a_misspelt_web_backend_is_an_error_even_without_web_tools(vtc: Path, tmp_path: Path) -> None:
    r = ts("run", str(vtc), "-m", "reference", "--setting", "opencv", "--web", "offlin", "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, "--web 'offlin'", "did you mean 'offline'?")
    assert not (tmp_path / "run").exists()
    ok = ts("run", str(vtc), "-m", "reference", "--setting", "opencv", "--web", "offline", "--out",
            str(tmp_path / "ok"), "--no-report")
    assert ok.returncode == 0, ok.stderr
    assert "note: --web offline has no effect: setting 'opencv' offers no web tools" in ok.stderr


@pytest.mark.parametrize(("args", "needles"), [
    (["--out", ""], ["--out ''", "give a folder"]),
    (["-M", "max_tokens=-5"], ["-M", "max_tokens", "greater than or equal to 1"]),
    (["--cap", "time_limit_s=-3"], ["--cap time_limit_s=-3", "greater than 0"]),
    (["--cap", "max_tool_calls=-1"], ["--cap max_tool_calls=-1", "greater than or equal to 0"]),
    (["--extra-body", "missing.json"], ["--extra-body missing.json", "no such file"]),
])
def test_out_of_range_values_are_refused_before_anything_runs(vtc: Path, tmp_path: Path, args: list[str],
                                                               needles: list[str]) -> None:
    r = ts("run", str(vtc), "-m", "reference", *args, cwd=tmp_path)
    line = assert_one_error_line(r, 2, *needles)
    assert "not valid JSON" not in line
    assert list(tmp_path.iterdir()) == []  # no runs/ folder, no run directory


def test_an_html_report_written_to_out_is_not_also_printed(finished: Path, tmp_path: Path) -> None:
    r = ts("report", str(finished), "--format", "html", "--out", str(tmp_path / "rep"))
    assert r.returncode == 0, r.stderr
    assert lines(r.stdout) == [f"wrote {tmp_path / 'rep' / 'report.html'}"]
    assert r.stderr == ""  # no matplotlib warning either
    assert (tmp_path / "rep" / "report.html").read_text(encoding="utf-8").startswith("<!doctype html>")


# ---- item 4: one line instead of a traceback ----------------------------------------------------------------

def test_view_serve_with_a_port_out_of_range(finished: Path) -> None:
    r = ts("view", str(finished), "--serve", "--port", "99999")
    assert_one_error_line(r, 2, "--port", "65535")


@pytest.mark.parametrize("where", ["file", "proc"])
def test_generate_into_a_place_it_cannot_write(tmp_path: Path, where: str) -> None:
    target = tmp_path / "afile" if where == "file" else Path("/proc/toolsight-x")
    if where == "file":
        target.write_text("x", encoding="utf-8")
    r = ts("generate", "jigsaw", "--n", "1", "--out", str(target))
    assert_one_error_line(r, 2, f"--out {target}", "a file is in the way" if where == "file" else "cannot write there")
    assert r.stdout == ""


def test_a_dataset_with_an_integer_too_long_to_read(tmp_path: Path) -> None:
    write_png(tmp_path / "ds" / "images" / "pic.png")
    task = {"id": "t0", "tags": {"n": 1}, "turns": [{"prompt": "q", "images": [{"path": "images/pic.png"}], "answer": "A"}]}
    text = json.dumps(task).replace('"n": 1', '"n": ' + "9" * 5000)
    (tmp_path / "ds" / "tasks.jsonl").write_text(text + "\n", encoding="utf-8")
    v = ts("validate", str(tmp_path / "ds"))
    assert v.returncode == 1 and "Traceback" not in v.stderr, v.stderr
    assert "tasks.jsonl:1: (json): holds an integer too long to read (over 4,300 digits)" in v.stdout
    r = ts("run", str(tmp_path / "ds"), "-m", "reference", "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, "tasks.jsonl:1", "integer too long")
    assert not (tmp_path / "run").exists()


def test_an_unwritable_log_file(tmp_path: Path) -> None:
    r = ts("list", "models", TOOLSIGHT_LOG_FILE=str(tmp_path / "no" / "such" / "log.txt"))
    assert_one_error_line(r, 2, f"TOOLSIGHT_LOG_FILE={tmp_path / 'no' / 'such' / 'log.txt'}", "cannot write the log")


def test_a_ray_start_timeout_that_is_not_a_number(vtc: Path, tmp_path: Path) -> None:
    r = ts("run", str(vtc), "-m", "reference", "--executor", "ray", "--out", str(tmp_path / "run"),
           TOOLSIGHT_RAY_START_TIMEOUT="abc")
    assert_one_error_line(r, 2, "TOOLSIGHT_RAY_START_TIMEOUT='abc'", "not a positive number")
    assert not (tmp_path / "run").exists()


def test_a_malformed_env_line_is_reported_once_with_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TOOLSIGHT_X=1\nthis is not an assignment\n", encoding="utf-8")
    r = ts("list", "models", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    warnings = lines(r.stderr)
    assert len(warnings) == 1, r.stderr
    assert warnings[0].startswith(f"warning: {tmp_path / '.env'}:2: not a KEY=VALUE line"), warnings


# ---- item 5: sweeps check their plan first; 429 is called what it is ---------------------------------------

PLAN = """name = "p"
[defaults]
{defaults}
[[models]]
spec = "{model}"
[[benchmarks]]
name = "{bench}"
{data}
"""


@pytest.mark.parametrize(("defaults", "model", "data", "needles"), [
    ("caps = { max_tool_cals = 3 }", "reference", "", ["caps.max_tool_cals", "did you mean max_tool_calls?"]),
    ("", "opnai/gpt-4o", "", ["models[0].spec", "did you mean 'openai/gpt-4o'?"]),
    ("", "reference", 'data = "nothere"', ["benchmarks[0].data", "nothere does not exist"]),
])
def test_a_bad_sweep_plan_exits_2_before_the_sweep_folder_exists(vtc: Path, tmp_path: Path, defaults: str, model: str,
                                                                 data: str, needles: list[str]) -> None:
    bench = "tir-bench" if data else str(vtc)
    plan = tmp_path / "plans" / "p.toml"
    plan.parent.mkdir()
    plan.write_text(PLAN.format(defaults=defaults, model=model, bench=bench, data=data), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    r = ts("sweep", str(plan), cwd=work)
    line = assert_one_error_line(r, 2, str(plan), *needles)
    assert "--resume" not in line
    assert list(work.iterdir()) == [] and list(plan.parent.iterdir()) == [plan]


def test_a_sweep_writes_under_the_runs_folder_not_beside_its_plan(vtc: Path, tmp_path: Path) -> None:
    plan = tmp_path / "repo" / "examples" / "s.toml"
    plan.parent.mkdir(parents=True)
    plan.write_text(PLAN.format(defaults="", model="reference", bench=str(vtc), data='settings = ["opencv"]'),
                    encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    r = ts("sweep", str(plan), "--no-report", cwd=work)
    assert r.returncode == 0, r.stderr
    assert list(plan.parent.iterdir()) == [plan]  # nothing written into the "repository"
    assert (work / "runs" / "sweeps" / "p" / "sweep.json").is_file()
    assert f"sweep folder: {work / 'runs' / 'sweeps' / 'p'}" in r.stderr or "sweep folder: runs/sweeps/p" in r.stderr


def test_an_endpoint_answering_429_is_rate_limited_not_unreachable(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    script = Script.model_validate({"steps": [{"fault": "status", "status": 429}]})
    with ScriptedServer(script, record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--out", str(tmp_path / "run"),
               "--retries", "5", "--backoff-base", "0.05", "--outage-timeout", "1", "--no-report")
    assert r.returncode == 4, r.stderr
    assert "rate-limited (HTTP 429)" in r.stderr
    assert "unreachable" not in r.stderr, r.stderr


def test_a_limit_cut_says_why(tmp_path: Path) -> None:
    """Against a server that answers without delay the limit is cut only when the machine itself slows the
    replies down (a loaded test machine); when it is, the summary says it was latency, not overload answers."""
    ds = dataset(tmp_path / "ds", 96)
    with ScriptedServer(Script.answer("<answer>A</answer>"), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--concurrency", "32",
               "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 0, r.stderr
    summary = lines(r.stderr)[-1]
    assert "overload answer(s))" not in summary.replace("no overload answer)", ""), summary
    changes = [json.loads(x) for x in (tmp_path / "run" / "limits.jsonl").read_text().splitlines() if x.strip()]
    latency = [c for c in changes if c.get("reason") == "latency"]
    assert all(c["latency_s"] - c["baseline_s"] >= 0.25 for c in latency), latency
    if latency:
        assert "(rising latency, no overload answer)" in summary, summary


# ---- item 7: name the judge; did-you-mean for models; generated folders' setting; listings --------------------

def test_a_judge_without_a_key_is_named_as_the_judge(vtc: Path, tmp_path: Path) -> None:
    r = ts("run", str(vtc), "-m", "reference", "--judge", "openai/gpt-4o", "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, "--judge openai/gpt-4o: no API key", "OPENAI_API_KEY")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("spec", "hint"), [("gpt-4o", "did you mean 'openai/gpt-4o'?"),
                                            ("refrence", "did you mean 'reference'?"),
                                            ("claude-sonnet-4", "did you mean 'anthropic/claude-sonnet-4'?")])
def test_a_model_spec_gets_a_did_you_mean(vtc: Path, tmp_path: Path, spec: str, hint: str) -> None:
    r = ts("run", str(vtc), "-m", spec, "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, f"--model {spec}", hint)


@pytest.mark.parametrize(("kind", "setting"), [("vtc-bars", "opencv"), ("jigsaw", "code")])
def test_a_generated_folder_defaults_to_the_setting_its_reference_needs(tmp_path: Path, kind: str, setting: str) -> None:
    g = ts("generate", kind, "--n", "1", "--out", str(tmp_path / "g"))
    assert g.returncode == 0, g.stderr
    r = ts("run", str(tmp_path / "g"), "-m", "reference", "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 0, r.stderr
    assert f"note: no --setting given: using {setting!r}" in r.stderr, r.stderr
    assert "warning: --model reference" not in r.stderr
    assert records(tmp_path / "run")[0]["score"]["value"] == 1.0


def test_list_tools_names_the_benchmarks_own_tool_sets() -> None:
    r = ts("list", "tools")
    assert r.returncode == 0, r.stderr
    heads = [ln.split(":")[0] for ln in lines(r.stdout) if not ln.startswith(" ")]
    for name in ("vtc_interface_official (vtc-bench only)", "tir_code (tir-bench only)",
                 "visbrowse_browse (visbrowse-bench only)", "opencv"):
        assert name in heads, heads


def test_help_is_not_wrapped_at_80_columns_in_a_pipe() -> None:
    r = ts("run", "--help")
    assert r.returncode == 0
    assert max(len(x) for x in r.stdout.splitlines()) > 100
    assert any("Writes a run directory (manifest, records, artifacts); Ctrl-C keeps finished records and prints" in x
               for x in r.stdout.splitlines())


def test_result_scores_counts_are_integers(vtc: Path, tmp_path: Path) -> None:
    import toolsight

    res = toolsight.evaluate(str(vtc), model="reference", setting="opencv", out=str(tmp_path / "run"), progress=False)
    row = res.scores.iloc[0]
    assert isinstance(row["N"].item(), int) and row["N"] == 2
    assert isinstance(row["Errors"].item(), int) and row["Errors"] == 0
    assert isinstance(row["Score %"].item(), float)

