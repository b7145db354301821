"""JudgeRunner against a scripted in-process judge Model (`judgekit.ScriptedJudge`, shared by the scoring
and benchmark tests)."""

from __future__ import annotations

import asyncio

import pytest

from judgekit import RAISE, ScriptedJudge
from toolsight.models.base import GenerateConfig
from toolsight.scoring.base import ScoreContext
from toolsight.scoring.judge import JudgeRunner, JudgeUnavailableError


def _yes_no(reply: str) -> bool | None:
    return {"yes": True, "no": False}.get(reply.strip().lower())


def test_call_records_model_prompt_reply_seed_and_settings() -> None:
    judge = ScriptedJudge({"Q1": ["yes"]})
    runner = JudgeRunner.from_context(ScoreContext(judge=judge), "t")
    out = asyncio.run(runner.ask("Q1?", _yes_no))
    assert out.value is True and out.error is None
    [call] = out.calls
    assert (call.model, call.prompt, call.reply, call.seed, call.temperature, call.error) == (
        "scripted/judge", "Q1?", "yes", 0, 0.0, None)
    assert judge.configs[0].temperature == 0.0 and judge.configs[0].seed == 0


def test_unparseable_reply_is_retried_then_an_error_not_a_fail() -> None:
    judge = ScriptedJudge({"Q": ["maybe", "perhaps", "yes"]})
    out = asyncio.run(JudgeRunner(judge, retries=3).ask("Q", _yes_no))
    assert out.value is True and [c.reply for c in out.calls] == ["maybe", "perhaps", "yes"]

    judge = ScriptedJudge({"Q": ["maybe"]})
    out = asyncio.run(JudgeRunner(judge, retries=2).ask("Q", _yes_no))
    assert out.value is None and len(out.calls) == 2
    assert out.error is not None and "could not be parsed after 2" in out.error and "maybe" in out.error


def test_raised_errors_are_recorded_and_retried() -> None:
    judge = ScriptedJudge({"Q": [RAISE, RAISE, "no"]})
    out = asyncio.run(JudgeRunner(judge, retries=3).ask("Q", _yes_no))
    assert out.value is False
    assert [c.error is not None for c in out.calls] == [True, True, False]
    assert "ModelError: scripted judge failure" in (out.calls[0].error or "")

    judge = ScriptedJudge({"Q": [RAISE]})
    out = asyncio.run(JudgeRunner(judge, retries=3).ask("Q", _yes_no))
    assert out.value is None and out.reply is None and "failed 3 time(s)" in (out.error or "")


def test_context_settings_are_used() -> None:
    judge = ScriptedJudge({"Q": ["x"]})
    ctx = ScoreContext(judge=judge, judge_config=GenerateConfig(temperature=0.5, seed=7), judge_retries=4)
    out = asyncio.run(JudgeRunner.from_context(ctx, "t").ask("Q", _yes_no))
    assert len(out.calls) == 4 and {c.seed for c in out.calls} == {7} and judge.configs[0].temperature == 0.5


def test_concurrency_is_bounded_by_the_semaphore() -> None:
    async def main() -> tuple[int, int]:
        gate = asyncio.Event()
        judge = ScriptedJudge(default="yes", gate=gate)
        runner = JudgeRunner(judge, concurrency=3)
        tasks = [asyncio.create_task(runner.ask(f"q{i}", _yes_no)) for i in range(12)]
        for _ in range(20):
            await asyncio.sleep(0)
        waiting = judge.in_flight
        gate.set()
        outs = await asyncio.gather(*tasks)
        assert all(o.value is True for o in outs)
        return waiting, judge.max_in_flight

    waiting, peak = asyncio.run(main())
    assert waiting == 3 and peak == 3


def test_missing_judge_is_a_clear_error() -> None:
    with pytest.raises(JudgeUnavailableError, match="--judge"):
        JudgeRunner.from_context(ScoreContext(), "rubric")
    with pytest.raises(ValueError, match="concurrency"):
        JudgeRunner(ScriptedJudge(), concurrency=0)
