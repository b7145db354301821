"""The commands of issue 17 (items 3-6, 8): each gives one unwrapped line, the right exit code and
no traceback; hints name commands that work; nothing surprising happens silently."""

from __future__ import annotations

import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer

import toolsight
from clikit import TOOLSIGHT, assert_one_error_line, dataset, env, lines, records, ts
from toolsight.cli import app
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


@pytest.fixture(scope="module")
def gen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated VTC-style set whose reference solutions call OpenCV tools."""
    root = tmp_path_factory.mktemp("gen")
    r = ts("generate", "vtc-bars", "--n", "3", "--out", str(root / "gen"))
    assert r.returncode == 0, r.stderr
    return root / "gen"


@pytest.fixture(scope="module")
def wrong_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run whose answers differ from the gold (so a semantic judge is needed)."""
    root = tmp_path_factory.mktemp("wrong")
    ds = dataset(root / "ds", 4)
    with ScriptedServer(Script(steps=[Step(text="<answer>the blue square</answer>")]), record=False) as srv:
        r = ts("run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--out", str(root / "run"),
               "--no-report")
    assert r.returncode == 0, r.stderr
    return root / "run"


# ---- item 3: no tracebacks, honest exit codes --------------------------------------------------------------

def test_score_with_an_unknown_scorer(wrong_run: Path) -> None:
    r = ts("score", str(wrong_run), "--scorer", "foo")
    assert_one_error_line(r, 2, "unknown scorer 'foo'", "semantic_judge", "exact")


def test_score_with_an_unknown_mode_writes_nothing(wrong_run: Path) -> None:
    before = sorted(p.name for p in wrong_run.iterdir())
    r = ts("score", str(wrong_run), "--mode", "foo")
    assert_one_error_line(r, 2, "--mode 'foo'", "official", "corrected")
    assert sorted(p.name for p in wrong_run.iterdir()) == before  # no scores file labelled official


def test_semantic_judge_without_a_judge_fails_visibly(wrong_run: Path) -> None:
    r = ts("score", str(wrong_run), "--scorer", "semantic_judge")
    assert_one_error_line(r, 3, "4 task(s) could not be scored", "--judge")
    assert re.search(r"wrote \S+scores-semantic_judge-official\.jsonl: 0 scored, 4 score error\(s\)", r.stdout), r.stdout


def test_view_serve_on_a_taken_port(wrong_run: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        r = ts("view", str(wrong_run), "--serve", "--port", str(port), timeout=60)
    assert_one_error_line(r, 1, f"port {port}", "already in use", "--port")


def test_a_bad_flag_value_is_one_line(gen: Path) -> None:
    r = ts("run", str(gen), "-m", "reference", "--concurrency", "0")
    assert_one_error_line(r, 2, "--concurrency", "(see `toolsight run --help`)")
    r = ts("run", str(gen), "-m", "reference", "--no-such-flag")
    assert_one_error_line(r, 2, "No such option: --no-such-flag")


# ---- item 5: hints that work ----------------------------------------------------------------------------------

def test_a_misspelt_setting_suggests_a_command_that_works(gen: Path) -> None:
    r = ts("run", str(gen), "-m", "reference", "--setting", "opencvv")
    line = assert_one_error_line(r, 2, "unknown setting 'opencvv'", "did you mean 'opencv'?")
    hint = re.search(r"`(toolsight list settings [^`]+)`", line)
    assert hint is not None, line
    listed = subprocess.run([*TOOLSIGHT, *shlex.split(hint.group(1))[1:]], capture_output=True, text=True,
                            env=env(), timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^opencv( \(default\))?: .*opencv", listed.stdout, re.MULTILINE), listed.stdout


def test_a_misspelt_cap_lists_the_cap_names_on_one_line(gen: Path) -> None:
    r = ts("run", str(gen), "-m", "reference", "--cap", "max_tool_cals=3")
    line = assert_one_error_line(r, 2, "--cap max_tool_cals: unknown cap", "did you mean max_tool_calls",
                                 "max_rounds", "toolsight list caps")
    assert len(line) > 200  # a long message, still one line in a pipe
    r = ts("run", str(gen), "-m", "reference", "--cap", "max_tool_calls=many")
    line = assert_one_error_line(r, 2, "--cap max_tool_calls=", "valid integer")
    assert "http" not in line and "pydantic" not in line
    caps = ts("list", "caps")
    assert caps.returncode == 0
    names = [ln.split()[0] for ln in lines(caps.stdout)[:-1]]
    assert {"max_tool_calls", "max_rounds", "generate", "system_prompt"} <= set(names)


# ---- item 4: nothing hard-wrapped in a pipe -------------------------------------------------------------------

def _options(command: object) -> list[str]:
    params = getattr(command, "params", [])
    return [o for p in params for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])] if o.startswith("-")]


def test_help_shows_every_option_name_whole() -> None:
    root = typer.main.get_command(app)
    commands: dict[str, object] = {}
    for name, cmd in getattr(root, "commands", {}).items():
        sub = getattr(cmd, "commands", None)
        if sub:
            commands.update({f"{name} {n}": c for n, c in sub.items()})
        else:
            commands[name] = cmd
    assert {"run", "score", "view", "list caps"} <= set(commands)
    for name, cmd in commands.items():
        r = ts(*name.split(), "--help")
        assert r.returncode == 0, (name, r.stderr)
        assert "…" not in r.stdout, (name, r.stdout)
        for opt in _options(cmd):
            assert re.search(rf"(^|[\s,/]){re.escape(opt)}([\s,=]|$)", r.stdout, re.MULTILINE), (name, opt)


def test_version() -> None:
    r = ts("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"toolsight {toolsight.__version__}"


# ---- item 6: no silent surprises ------------------------------------------------------------------------------

def test_a_dataset_folder_says_which_setting_it_defaults_to_and_reference_warns(gen: Path, tmp_path: Path) -> None:
    r = ts("run", str(gen), "-m", "reference", "--out", str(tmp_path / "run"), "--no-report")
    assert r.returncode == 0, r.stderr
    err = r.stderr
    # a generated set defaults to the setting its reference solutions need (issue 28, item 7)
    assert f"note: no --setting given: using 'opencv' (opencv), the default for {gen}; others: direct, crop, code" in err
    assert "warning:" not in err
    bare = ts("run", str(gen), "-m", "reference", "--setting", "direct", "--out", str(tmp_path / "run2"), "--no-report")
    warn = [ln for ln in lines(bare.stderr) if ln.startswith("warning: --model reference")]
    assert len(warn) == 1 and "opencv_" in warn[0] and "expect a score of 0" in warn[0], bare.stderr
    assert "no --setting" not in bare.stderr


def test_data_with_a_folder_target_is_refused(gen: Path, tmp_path: Path) -> None:
    other = dataset(tmp_path / "other", 2)
    r = ts("run", str(gen), "-m", "reference", "--data", str(other), "--out", str(tmp_path / "run"))
    assert_one_error_line(r, 2, f"--data {other}", "already a dataset folder")
    assert not (tmp_path / "run").exists()
    same = ts("run", str(gen), "-m", "reference", "--setting", "opencv", "--data", str(gen), "--limit", "1",
              "--out", str(tmp_path / "same"), "--no-report")
    assert_one_error_line(same, 2, f"--data {gen}", "already a dataset folder")  # docs/cli.md: an error, always


@pytest.mark.parametrize(("kind", "needle"), [("vtc-bars", "no difficulty levels"), ("jigsaw", "choose one of: 3, 4, 5, 6"),
                                              ("phystool", "choose one of: 0 = Easy")])
def test_generate_with_a_difficulty_out_of_range(kind: str, needle: str, tmp_path: Path) -> None:
    r = ts("generate", kind, "--difficulty", "9", "--n", "2", "--out", str(tmp_path / "g"))
    assert_one_error_line(r, 2, needle)
    assert not (tmp_path / "g" / "tasks.jsonl").exists()


# ---- the Ctrl-C hint: one line that resumes when pasted -------------------------------------------------------

def test_ctrl_c_hint_is_one_pasteable_line(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "a folder with spaces", 12)
    run = tmp_path / "run"
    script = Script(steps=[Step(text="<answer>A</answer>", seconds=0.15)])
    with ScriptedServer(script, record=False) as srv:
        argv = [*TOOLSIGHT, "run", str(ds), "-m", "openai/x", "--base-url", srv.openai_base_url, "--out", str(run),
                "--concurrency", "1", "--no-report", "--setting", "direct"]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(),
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not ((run / "records.jsonl").exists()
                                                    and len(records(run)) >= 2):
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        hint = [ln for ln in lines(err) if "resume with:" in ln]
        assert len(hint) == 1 and "Traceback" not in err, err
        command = hint[0].split("resume with: ", 1)[1]
        argv2 = shlex.split(command)
        assert argv2[0] == "toolsight" and argv2[-1] == "--resume"
        again = subprocess.run([sys.executable, "-m", "toolsight", *argv2[1:]], capture_output=True, text=True,
                               env=env(), timeout=300)
    assert again.returncode == 0, again.stderr
    ids = [r["task_id"] for r in records(run)]
    assert sorted(ids) == sorted(f"t{i}" for i in range(12))  # every task exactly once
