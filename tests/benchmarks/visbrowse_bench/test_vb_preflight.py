"""Preflight (issue 26, item 11): before anything runs, a VisBrowse-Bench run that needs an LLM judge
and has none, or that would browse a live web that is not keyed or not reachable, stops with one
line (exit 2) naming the flag to pass — and no run directory is created. `--no-score` and the
`reference` baseline (whose answers are the gold) run without a judge. The model is the scripted
server on 127.0.0.1; the only network the tests touch is a listener they start on 127.0.0.1."""

from __future__ import annotations

import socket
from pathlib import Path

from clikit import assert_one_error_line, records, ts
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer


def _run(miniweb: Path, out: Path, *flags: str, **env: str) -> tuple[int, str]:
    with ScriptedServer(Script(steps=[Step(text="<answer>x</answer>")])) as srv:
        r = ts("run", "visbrowse-bench", "--data", str(miniweb), "-m", "openai/m", "--base-url", srv.openai_base_url,
               "--out", str(out), "--limit", "1", "--no-report", *flags, cwd=None, timeout=300, **env)
        asked = len(srv.requests)
    if r.returncode == 2:
        assert asked == 0  # refused before any model call
        assert_one_error_line(r, 2)
    return r.returncode, r.stderr


def test_a_run_that_needs_a_judge_refuses_to_start_without_one(miniweb: Path, tmp_path: Path) -> None:
    code, err = _run(miniweb, tmp_path / "a")
    assert code == 2
    assert "needs an LLM judge" in err and "--judge MODEL" in err and "--no-score" in err
    assert not (tmp_path / "a").exists()  # no run directory for a refused run
    code, err = _run(miniweb, tmp_path / "b", "--no-score")
    assert code == 0, err
    (rec,) = records(tmp_path / "b")
    assert rec["score"] is None and rec["error"] is None


def test_the_reference_baseline_needs_no_judge(miniweb: Path, tmp_path: Path) -> None:
    r = ts("run", "visbrowse-bench", "--data", str(miniweb), "-m", "reference", "--out", str(tmp_path / "r"),
           "--limit", "2", "--no-report")
    assert r.returncode == 0, r.stderr
    assert all(x["score"]["passed"] for x in records(tmp_path / "r"))


def test_live_web_without_a_search_key_or_a_reachable_search_api_refuses(miniweb: Path, tmp_path: Path) -> None:
    code, err = _run(miniweb, tmp_path / "nokey", "--no-score", "--web", "live", SERPER_API_KEY="")
    assert code == 2 and "SERPER_API_KEY is not set" in err and "--web offline=" in err and "--web replay=" in err
    assert not (tmp_path / "nokey").exists()
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    code, err = _run(miniweb, tmp_path / "down", "--no-score", "--web", "live", SERPER_API_KEY="k",
                     SERPER_BASE_URL=f"http://127.0.0.1:{port}")
    assert code == 2 and f"the search API at http://127.0.0.1:{port} is not reachable" in err
    assert not (tmp_path / "down").exists()
    with socket.socket() as listener:  # a reachable search API: the run starts
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        up = listener.getsockname()[1]
        code, err = _run(miniweb, tmp_path / "up", "--no-score", "--web", "live", SERPER_API_KEY="k",
                         SERPER_BASE_URL=f"http://127.0.0.1:{up}")
    assert code == 0, err
    assert len(records(tmp_path / "up")) == 1


def test_keyless_search_is_accepted_only_when_asked_for(miniweb: Path, tmp_path: Path) -> None:
    code, err = _run(miniweb, tmp_path / "keyless", "--no-score", "--web", "live", SERPER_API_KEY="",
                     TOOLSIGHT_WEB_KEYLESS="1")
    assert code == 0, err
