"""Provider arguments from the command line (-M, --extra-body, --cap generate=…) reach the wire as
each provider's official SDK sends them; `.env` supplies keys and endpoints (issue 17, items 2, 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clikit import assert_one_error_line, dataset, ts
from toolsight.log.files import read_manifest
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import RecordedRequest, ScriptedServer

ANSWER = Script(steps=[Step(text="<answer>A</answer>")])


def _run(ds: Path, out: Path, model: str, base_url: str, *flags: str) -> None:
    r = ts("run", str(ds), "-m", model, "--base-url", base_url, "--out", str(out), "--limit", "1", "--no-report",
           "--setting", "direct", *flags)
    assert r.returncode == 0, r.stderr


def _body(srv: ScriptedServer) -> dict[str, Any]:
    reqs: list[RecordedRequest] = srv.requests
    assert reqs, "no request reached the server"
    return reqs[-1].body


def test_model_args_and_extra_body_reach_an_openai_compatible_server(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    with ScriptedServer(ANSWER) as srv:
        _run(ds, tmp_path / "run", "openai/qwen", srv.openai_base_url,
             "-M", "top_p=0.8", "-M", "stop=END", "--model-args", 'chat_template_kwargs={"enable_thinking": false}',
             "-M", "repetition_penalty=1.05", "--extra-body", '{"top_k": 20, "min_p": 0}', "--temperature", "0.6")
        body = _body(srv)
    assert body["top_p"] == 0.8 and body["stop"] == ["END"] and body["temperature"] == 0.6
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["repetition_penalty"] == 1.05 and body["top_k"] == 20 and body["min_p"] == 0
    gen = read_manifest(tmp_path / "run").options["generate"]
    assert gen["top_p"] == 0.8 and gen["extra_body"]["chat_template_kwargs"] == {"enable_thinking": False}


def test_a_generate_cap_is_applied_and_flags_win_over_it(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    cap = 'generate={"top_p": 0.5, "seed": 7, "extra_body": {"min_p": 0.1}}'
    with ScriptedServer(ANSWER) as srv:
        _run(ds, tmp_path / "a", "openai/x", srv.openai_base_url, "--cap", cap)
        applied = _body(srv)
        _run(ds, tmp_path / "b", "openai/x", srv.openai_base_url, "--cap", cap, "-M", "top_p=0.7",
             "-M", "min_p=0.2")
        overridden = _body(srv)
    assert applied["top_p"] == 0.5 and applied["seed"] == 7 and applied["min_p"] == 0.1
    assert overridden["top_p"] == 0.7 and overridden["seed"] == 7 and overridden["min_p"] == 0.2
    settings = read_manifest(tmp_path / "a").agent_settings
    assert settings["generate"]["top_p"] == 0.5  # recorded as applied, not only as asked


def test_anthropic_and_google_place_extra_arguments_where_their_apis_want_them(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    with ScriptedServer(ANSWER) as srv:
        _run(ds, tmp_path / "claude", "anthropic/claude", srv.base_url, "-M", "top_k=5", "-M", "top_p=0.9")
        claude = _body(srv)
        _run(ds, tmp_path / "gemini", "google/gemini", srv.base_url, "--temperature", "0.3",
             "--extra-body", '{"generationConfig": {"topK": 20}}')
        gemini = _body(srv)
    assert claude["top_k"] == 5 and claude["top_p"] == 0.9
    # merged recursively: the temperature the SDK set stays beside the extra key
    assert gemini["generationConfig"]["topK"] == 20 and gemini["generationConfig"]["temperature"] == 0.3


def test_bad_provider_arguments_are_one_line(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    r = ts("run", str(ds), "-m", "openai/x", "-M", "top_p")
    assert_one_error_line(r, 2, "-M 'top_p': expected KEY=VALUE")
    r = ts("run", str(ds), "-m", "openai/x", "-M", "temperature=hot")
    assert_one_error_line(r, 2, "-M: temperature", "valid number")
    r = ts("run", str(ds), "-m", "openai/x", "--extra-body", "[1, 2]")
    assert_one_error_line(r, 2, "--extra-body: expected a JSON object")
    body_file = tmp_path / "body.json"
    body_file.write_text("{oops", encoding="utf-8")
    r = ts("run", str(ds), "-m", "openai/x", "--extra-body", str(body_file))
    assert_one_error_line(r, 2, "--extra-body: not valid JSON")


def test_dotenv_supplies_the_key_and_endpoint_and_the_environment_wins(tmp_path: Path) -> None:
    ds = dataset(tmp_path / "ds", 2)
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    with ScriptedServer(ANSWER) as srv:
        (work / ".env").write_text(f"OPENAI_API_KEY=sk-from-dotenv\nOPENAI_BASE_URL={srv.openai_base_url}\n",
                                   encoding="utf-8")
        # no --base-url and no key in the environment: both come from ../.env (found upwards)
        r = ts("run", str(ds), "-m", "openai/gpt-x", "--out", str(tmp_path / "r1"), "--limit", "1", "--no-report",
               "--setting", "direct", cwd=work / "sub")
        assert r.returncode == 0, r.stderr
        assert srv.requests[-1].headers["Authorization"] == "Bearer sk-from-dotenv"
        r = ts("run", str(ds), "-m", "openai/gpt-x", "--out", str(tmp_path / "r2"), "--limit", "1", "--no-report",
               "--setting", "direct", cwd=work, OPENAI_API_KEY="sk-from-env")
        assert r.returncode == 0, r.stderr
        assert srv.requests[-1].headers["Authorization"] == "Bearer sk-from-env"
    # without the .env the same command has no key: one line naming the variable
    r = ts("run", str(ds), "-m", "openai/gpt-x", "--limit", "1", cwd=tmp_path)
    assert_one_error_line(r, 2, "OPENAI_API_KEY")
    assert json.loads((tmp_path / "r1" / "manifest.json").read_text())["model"] == "openai/gpt-x"


def test_tool_choice_from_the_command_line_goes_in_the_body_as_given() -> None:
    """`GenerateConfig.tool_choice` (auto / none) is the loops' own; `-M tool_choice=…` stays a body
    field, so any provider's value (OpenAI's `required`, Anthropic's `{"type": "any"}`) is sent as given."""
    from toolsight.api.options import generation

    for value in ("required", {"type": "any"}, "none"):
        gen = generation(None, {"tool_choice": value, "top_p": 0.5})
        assert gen.extra_body == {"tool_choice": value} and gen.tool_choice is None and gen.top_p == 0.5
