"""A malformed model reply is a model error, whatever the provider (issue 26, item 6): a body that is
not JSON or not UTF-8, a reply with no message, a number where the text belongs. It is retried per
`--retries` (the task goes on when the next reply is good) and, when it keeps coming, ends the task
as a model error with exit 3 — never a harness error, never a silent 0. Each provider's official
SDK talks to the scripted server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from clikit import dataset, records, ts
from toolsight.models.scripted.script import Script, Step
from toolsight.models.scripted.server import ScriptedServer

KINDS = ["not_json", "not_utf8", "no_message", "number_content"]


def _base_url(srv: ScriptedServer, provider: str) -> str:
    return srv.openai_base_url if provider == "openai" else srv.base_url


def _run(tmp: Path, provider: str, steps: list[Step], *flags: str) -> tuple[int, str, list[dict]]:
    ds = dataset(tmp / "ds", 1)  # gold A
    with ScriptedServer(Script(steps=steps)) as srv:
        r = ts("run", str(ds), "-m", f"{provider}/m", "--base-url", _base_url(srv, provider), "--out",
               str(tmp / "run"), "--no-report", "--backoff-base", "0.01", *flags)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, r.stderr, records(tmp / "run")


#: every provider × kind, except an Anthropic reply with no content blocks: that is a valid Messages API
#: reply (the model said nothing; see test_an_empty_anthropic_reply_is_an_empty_answer)
CASES = [(p, k) for p in ("openai", "anthropic", "google") for k in KINDS if (p, k) != ("anthropic", "no_message")]


@pytest.mark.parametrize(("provider", "kind"), CASES)
def test_a_malformed_reply_is_retried_and_the_task_goes_on(tmp_path: Path, provider: str, kind: str) -> None:
    code, err, (rec,) = _run(tmp_path, provider, [Step(fault="malformed", malformed=kind),
                                                  Step(text="<answer>A</answer>")], "--retries", "2")
    assert code == 0, err
    assert rec["error"] is None and rec["score"]["passed"] is True
    assert rec["trajectory"]["retries"] == 1  # the malformed reply cost one retry


@pytest.mark.parametrize("provider", ["openai", "google"])
def test_a_reply_that_stays_malformed_is_a_model_error_with_exit_3(tmp_path: Path, provider: str) -> None:
    code, err, (rec,) = _run(tmp_path, provider, [Step(fault="malformed", malformed="no_message")], "--retries", "1")
    assert code == 3, err
    assert rec["error"].startswith("model error") and "malformed reply" in rec["error"], rec["error"]
    assert "1 run error(s)" in err and "model" in err


def test_an_empty_anthropic_reply_is_an_empty_answer(tmp_path: Path) -> None:
    """`content: []` with stop_reason end_turn is what the Messages API returns when the model ends
    its turn at once: an answer (empty, so wrong), not an error."""
    code, err, (rec,) = _run(tmp_path, "anthropic", [Step(fault="malformed", malformed="no_message")])
    assert code == 0, err
    assert rec["error"] is None and rec["score"]["passed"] is False
