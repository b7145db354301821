"""Cost from recorded usage (metrics/cost.py): a constructed price table, numbers computed by hand.

Prices are USD per million tokens. The test table (`TABLE`) has round numbers so every expected
figure below can be checked on paper; the comments show the sums.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clikit import assert_one_error_line, ts
from toolsight.api.result import sample_row
from toolsight.engine.store import RecordWriter, write_manifest
from toolsight.log.manifest import Manifest
from toolsight.log.record import Record
from toolsight.log.score import JudgeCall
from toolsight.log.trajectory import ModelCallRecord, ToolCallRecord, Trajectory, TurnResult
from toolsight.metrics import compute_run_metrics
from toolsight.metrics.billing import billed, billed_dict
from toolsight.metrics.cost import (
    CallTokens,
    Price,
    PriceError,
    builtin_prices,
    call_cost,
    cost_of,
    list_cost,
    load_prices,
    price_for,
)
from toolsight.metrics.views import iter_views
from toolsight.models.base import Usage
from toolsight.report.viewer import task_cost
from toolsight.scoring.base import Score

MODEL = "anthropic/agent-1"
JUDGE = "openai/judge-1"
TABLE = {
    # batch_discount 0.4, not 0.5: a discount applied as the multiplier would give the same number at 0.5
    "agent-1": Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0, batch_discount=0.4),
    "openai/judge-1": Price(input=1.0, output=4.0),  # no cache prices: cache tokens cost what input costs
}


# --- one call ------------------------------------------------------------------------------------

CALL = CallTokens(MODEL, input=10_000, output=500, cache_read=6_000, cache_write=1_000)


def test_a_call_costs_its_uncached_cached_written_and_output_tokens() -> None:
    # 3,000 uncached × 2 + 6,000 read × 0.5 + 1,000 written × 2.5 + 500 out × 8 = 6,000 + 3,000 + 2,500 + 4,000
    assert call_cost(TABLE["agent-1"], CALL) == pytest.approx(15_500 / 1e6)
    # on-line without cache: 10,000 × 2 + 500 × 8
    assert list_cost(TABLE["agent-1"], CALL) == pytest.approx(24_000 / 1e6)


def test_a_batch_call_gets_the_batch_discount_and_a_replayed_call_costs_nothing() -> None:
    batch = CallTokens(MODEL, 10_000, 500, 6_000, 1_000, batch=True)
    assert call_cost(TABLE["agent-1"], batch) == pytest.approx(15_500 * 0.6 / 1e6)
    replayed = CallTokens(MODEL, 10_000, 500, replayed=True)
    assert call_cost(TABLE["agent-1"], replayed) == 0.0
    c = cost_of([CALL, batch, replayed], TABLE)
    assert c.cost_usd == pytest.approx((15_500 + 9_300) / 1e6)
    assert c.list_cost_usd == pytest.approx(2 * 24_000 / 1e6)
    assert c.cache_saving_usd == pytest.approx(2 * (24_000 - 15_500) / 1e6)
    assert c.batch_saving_usd == pytest.approx((15_500 - 9_300) / 1e6)
    assert (c.calls, c.priced_calls, c.batch_calls, c.replayed_calls) == (3, 3, 1, 1)


def test_cache_tokens_without_cache_prices_cost_what_input_costs() -> None:
    t = CallTokens(JUDGE, input=1_000, output=100, cache_read=400)
    assert call_cost(TABLE[JUDGE], t) == pytest.approx((1_000 * 1.0 + 100 * 4.0) / 1e6)


def test_models_match_by_full_name_short_name_or_without_a_date() -> None:
    table = builtin_prices()
    assert price_for("anthropic/claude-sonnet-4-5-20250929", table) is table["anthropic/claude-sonnet-4-5"]
    assert price_for("gpt-4o-2024-08-06", table) is table["openai/gpt-4o"]
    assert price_for("openai/gpt-4o-mini", table) is table["openai/gpt-4o-mini"]  # not gpt-4o's
    assert price_for("openai/gpt-4o-mini-tts", table) is None
    assert price_for("mock/alpha", table) is None
    assert cost_of([CallTokens("mock/alpha", 10, 10)], table).unpriced_models == ["mock/alpha"]


# --- the tables ----------------------------------------------------------------------------------

def test_the_builtin_table_prices_the_papers_models_and_says_when_and_where() -> None:
    table = builtin_prices()
    for name in ("openai/gpt-4o", "openai/gpt-4.1", "openai/o3", "openai/o4-mini", "openai/gpt-5",
                 "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "google/gemini-2.5-pro",
                 "google/gemini-2.5-flash"):
        p = table[name]
        assert p.taken is not None and p.source and p.source.startswith("https://")
        assert p.cached_input is not None and p.cached_input < p.input < p.output
        assert p.batch_discount == 0.5
    assert table["anthropic/claude-sonnet-4-5"].cache_write == pytest.approx(1.25 * 3.0)


# The figures checked on 2026-11-27 against stored copies of the providers' pricing pages (prices.toml's
# header names the copies): (input, cached_input, cache_write, output); batch is half price for every one.
CHECKED = {
    "openai/gpt-4o": (2.50, 1.25, None, 10.00), "openai/gpt-4o-mini": (0.15, 0.075, None, 0.60),
    "openai/gpt-4.1": (2.00, 0.50, None, 8.00), "openai/gpt-4.1-mini": (0.40, 0.10, None, 1.60),
    "openai/gpt-4.1-nano": (0.10, 0.025, None, 0.40), "openai/o3": (2.00, 0.50, None, 8.00),
    "openai/o4-mini": (1.10, 0.275, None, 4.40), "openai/gpt-5": (1.25, 0.125, None, 10.00),
    "openai/gpt-5-mini": (0.25, 0.025, None, 2.00), "openai/gpt-5.1": (1.25, 0.125, None, 10.00),
    "anthropic/claude-sonnet-4-5": (3.00, 0.30, 3.75, 15.00), "anthropic/claude-sonnet-4-0": (3.00, 0.30, 3.75, 15.00),
    "anthropic/claude-sonnet-4": (3.00, 0.30, 3.75, 15.00), "anthropic/claude-opus-4-1": (15.00, 1.50, 18.75, 75.00),
    "anthropic/claude-opus-4-0": (15.00, 1.50, 18.75, 75.00), "anthropic/claude-opus-4": (15.00, 1.50, 18.75, 75.00),
    "anthropic/claude-haiku-4-5": (1.00, 0.10, 1.25, 5.00),
    "google/gemini-2.5-pro": (1.25, 0.125, None, 10.00), "google/gemini-2.5-flash": (0.30, 0.03, None, 2.50),
    "google/gemini-2.5-flash-lite": (0.10, 0.01, None, 0.40),
}


def test_the_builtin_table_holds_the_checked_figures_and_names_the_stored_copy() -> None:
    table = builtin_prices()
    assert sorted(table) == sorted(CHECKED)
    for name, (inp, cached, write, out) in CHECKED.items():
        p = table[name]
        assert (p.input, p.cached_input, p.cache_write, p.output, p.batch_discount) == (inp, cached, write, out, 0.5), name
        assert str(p.taken) == "2026-11-27" and p.source and "stored copy" in p.source, name
    # gpt-5.1 is its own entry, not gpt-5's (and a dated gpt-5.1 finds it)
    assert price_for("openai/gpt-5.1-2025-11-13", table) is table["openai/gpt-5.1"]


def test_an_override_file_merges_over_the_builtin_table_model_by_model(tmp_path: Path) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"openai/gpt-4o": {"input": 2.0}, "acme/vision": {"input": 1, "output": 3}}))
    table = load_prices(f)
    gpt = table["openai/gpt-4o"]
    assert (gpt.input, gpt.cached_input, gpt.output) == (2.0, 1.25, 10.0)  # one field replaced, the rest kept
    assert gpt.taken is None  # the built-in date no longer describes a changed price
    assert table["acme/vision"].output == 3
    assert table["google/gemini-2.5-pro"] == builtin_prices()["google/gemini-2.5-pro"]
    with pytest.raises(PriceError, match="openai/gpt-4o: output"):  # alone, the partial entry is incomplete
        load_prices(f, builtin=False)


def test_a_toml_override_with_defaults(tmp_path: Path) -> None:
    f = tmp_path / "prices.toml"
    f.write_text('[defaults]\ntaken = "2026-01-02"\nsource = "our contract"\n\n'
                 '[models."acme/vision"]\ninput = 1.5\noutput = 6\ncached_input = 0.15\n')
    p = load_prices(f)["acme/vision"]
    assert (p.input, p.cached_input, p.output, str(p.taken), p.source) == (1.5, 0.15, 6.0, "2026-01-02", "our contract")


@pytest.mark.parametrize(("content", "needles"), [
    ('{"acme/vision": {"input": 1}}', ["acme/vision", "output", "Field required"]),
    ('{"openai/gpt-4o": {"input": -1}}', ["openai/gpt-4o", "input"]),
    ('{"openai/gpt-4o": {"inptu": 1}}', ["openai/gpt-4o", "inptu"]),
    ('{"openai/gpt-4o": {"batch_discount": 2}}', ["openai/gpt-4o", "batch_discount"]),
    ('{"openai/gpt-4o": 3}', ["openai/gpt-4o", "expected a table"]),
    ('{"openai/gpt-4o": ', ["not valid JSON"]),
])
def test_a_bad_price_file_is_one_message_naming_file_model_and_field(tmp_path: Path, content: str,
                                                                    needles: list[str]) -> None:
    f = tmp_path / "prices.json"
    f.write_text(content)
    with pytest.raises(PriceError) as err:
        load_prices(f)
    for n in [str(f), *needles]:
        assert n in str(err.value)


# --- a run ---------------------------------------------------------------------------------------

def _call(i: int, inp: int, out: int, read: int = 0, write: int = 0, *, batch: bool = False,
          cached: bool = False, error: str | None = None) -> ModelCallRecord:
    return ModelCallRecord(index=i, input_tokens=inp, output_tokens=out, cache_read_tokens=read,
                           cache_write_tokens=write, batch=batch, cached=cached, error=error)


def _judge(inp: int, out: int, batch: bool = False) -> JudgeCall:
    return JudgeCall(model=JUDGE, prompt="rubric?", reply="yes", usage=Usage(input_tokens=inp, output_tokens=out),
                     batch=batch)


@pytest.fixture
def priced_run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    log1 = [_call(0, 2_000, 100, write=2_000), _call(1, 3_000, 100, read=2_000, write=1_000),
            _call(2, 0, 0, error="model error: 500")]  # a failed call: no tokens, no cost
    log2 = [_call(0, 4_000, 200, batch=True), _call(1, 4_000, 200, cached=True)]  # replayed: free
    recs = [
        Record(task_id="t1", benchmark="hand", setting="s", model=MODEL,
               trajectory=Trajectory(model_call_log=log1, turns=[TurnResult(index=0)],
                                     usage=Usage(input_tokens=5_000, output_tokens=200, cache_read_tokens=2_000,
                                                 cache_write_tokens=3_000)),
               score=Score(value=1.0, judge_calls=[_judge(1_000, 10), _judge(1_000, 10)])),
        Record(task_id="t2", benchmark="hand", setting="s", model=MODEL,
               trajectory=Trajectory(model_call_log=log2, turns=[TurnResult(index=0)],
                                     usage=Usage(input_tokens=8_000, output_tokens=400)),
               # per-turn scores listing no calls of the task's own: their calls are counted once
               score=Score(value=0.0, turns=[Score(judge_calls=[_judge(500, 20, batch=True)])])),
    ]
    w = RecordWriter(run)
    for r in recs:
        w.write(r)
    w.close()
    write_manifest(run, Manifest(run_id="priced", benchmark="hand", setting="s", model=MODEL))
    return run


# t1 agent: call 0: 2,000 written × 2.5 + 100 × 8 = 5,000 + 800 = 5,800
#           call 1: 2,000 read × 0.5 + 1,000 written × 2.5 + 100 × 8 = 1,000 + 2,500 + 800 = 4,300
#    judge: 2 × (1,000 × 1 + 10 × 4) = 2,080                                    t1 = 12,180
# t2 agent: call 0 (batch): (4,000 × 2 + 200 × 8) × (1 − 0.4) = 5,760; call 1 replayed: 0
#    judge: (500 × 1 + 20 × 4), no batch discount in the judge's table = 580    t2 = 6,340
T1, T2 = 12_180 / 1e6, 6_340 / 1e6
# list cost: t1 agent (5,000 × 2 + 200 × 8) = 11,600, judge 2,080; t2 agent 9,600 (replayed: 0), judge 580
LIST = (11_600 + 2_080 + 9_600 + 580) / 1e6


def test_run_cost_is_the_sum_of_its_tasks_model_and_judge_calls(priced_run: Path) -> None:
    u = compute_run_metrics(priced_run, prices=TABLE).usage
    assert u.cost_usd == pytest.approx(T1 + T2)
    assert u.cost_per_task_usd == pytest.approx((T1 + T2) / 2)
    assert u.judge_cost_usd == pytest.approx((2_080 + 580) / 1e6)
    assert u.list_cost_usd == pytest.approx(LIST)
    # cache: t1's calls on-line without cache 11,600 − with it 10,100 = 1,500; batch: t2 call 0 9,600 − 5,760
    assert u.cache_saving_usd == pytest.approx(1_500 / 1e6)
    assert u.batch_saving_usd == pytest.approx(3_840 / 1e6)
    assert u.saving_usd == pytest.approx(LIST - (T1 + T2))
    assert (u.batch_calls, u.replayed_calls, u.unpriced_models) == (2, 1, [])
    assert (u.cache_read_tokens, u.cache_write_tokens) == (2_000, 3_000)


def test_each_task_shows_its_own_cost(priced_run: Path) -> None:
    views = {v.task_id: v for v in iter_views(priced_run)}
    assert task_cost(views["t1"], TABLE) == pytest.approx(T1)
    assert task_cost(views["t2"], TABLE) == pytest.approx(T2)
    assert task_cost(views["t1"], None) is None
    from toolsight.log.files import latest_records

    rows = {r.task_id: sample_row(r, TABLE) for r in latest_records(priced_run)}
    assert rows["t1"]["cost_usd"] == pytest.approx(T1) and rows["t2"]["cost_usd"] == pytest.approx(T2)


def test_a_model_without_a_price_is_named_not_priced(priced_run: Path) -> None:
    u = compute_run_metrics(priced_run, prices={"agent-1": TABLE["agent-1"]}).usage
    assert u.unpriced_models == [JUDGE]
    assert u.cost_usd == pytest.approx((5_800 + 4_300 + 5_760) / 1e6)
    assert compute_run_metrics(priced_run).usage.cost_usd is None


def test_toolsight_report_shows_cost_and_saving(priced_run: Path, tmp_path: Path) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({name: p.model_dump(exclude_none=True) for name, p in TABLE.items()}))
    r = ts("report", str(priced_run), "--prices", str(f))
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("| " + MODEL) and "0.0185" in line)
    assert f"{T1 + T2:.4f}" in row and f"{(T1 + T2) / 2:.5f}" in row and f"{LIST:.4f}" in row


def test_toolsight_report_names_a_bad_price_file(priced_run: Path, tmp_path: Path) -> None:
    f = tmp_path / "prices.json"
    f.write_text(json.dumps({"acme/vision": {"input": 1}}))
    r = ts("report", str(priced_run), "--prices", str(f))
    assert_one_error_line(r, 2, str(f), "acme/vision", "output")


def test_a_batch_calls_cache_reads_cost_batch_cached_input_when_the_table_gives_it() -> None:
    # agent-1 with Gemini's rule: a cache hit in a batch costs 0.45 (not 0.5 x 0.6 = 0.3); the rest is discounted
    gem = Price(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0, batch_discount=0.4, batch_cached_input=0.45)
    batch = CallTokens(MODEL, 10_000, 500, 6_000, 1_000, batch=True)
    # (3,000 x 2 + 1,000 x 2.5 + 500 x 8) x 0.6 + 6,000 x 0.45 = 12,500 x 0.6 + 2,700
    assert call_cost(gem, batch) == pytest.approx((12_500 * 0.6 + 2_700) / 1e6)
    assert call_cost(gem, CALL) == pytest.approx(15_500 / 1e6)  # on-line: unchanged
    c = cost_of([batch], {MODEL: gem})
    assert c.batch_saving_usd == pytest.approx((15_500 - 12_500 * 0.6 - 2_700) / 1e6)
    # the built-in Gemini rows: cache hits in a batch at the Standard context-caching price
    flash = builtin_prices()["google/gemini-2.5-flash"]
    assert flash.batch_cached_input == flash.cached_input == 0.03
    hit = CallTokens("google/gemini-2.5-flash", 1_000_000, 0, cache_read=1_000_000, batch=True)
    assert call_cost(flash, hit) == pytest.approx(0.03)


# --- hosted code-interpreter containers -----------------------------------------------------------

HOSTED = Price(input=2.0, output=8.0, batch_discount=0.5, container=0.03)


def _hosted_call(cid: str | None, n: int) -> ToolCallRecord:
    return ToolCallRecord(id=f"ci_{n}", turn=0, round=1, name="code_interpreter", arguments="{}", ok=True,
                          extra={"hosted": True, "container_id": cid})


def test_a_hosted_container_costs_its_fee_once_undiscounted_and_counts_in_the_list_cost() -> None:
    one = CallTokens(MODEL, 1_000, 100, containers=1)
    assert call_cost(HOSTED, one) == pytest.approx((1_000 * 2 + 100 * 8) / 1e6 + 0.03)
    batched = CallTokens(MODEL, 1_000, 100, batch=True, containers=2)  # tokens at half price, containers not
    assert call_cost(HOSTED, batched) == pytest.approx((1_000 * 2 + 100 * 8) * 0.5 / 1e6 + 0.06)
    assert call_cost(HOSTED, CallTokens(MODEL, 1_000, 100, replayed=True, containers=1)) == 0.0
    c = cost_of([one, batched], {MODEL: HOSTED})
    assert c.list_cost_usd == pytest.approx(2 * 2_800 / 1e6 + 0.09)
    assert c.batch_saving_usd == pytest.approx(2_800 * 0.5 / 1e6) and c.cache_saving_usd == pytest.approx(0)
    assert call_cost(TABLE["agent-1"], one) == pytest.approx(2_800 / 1e6)  # a table without a container price


def test_a_records_hosted_containers_are_counted_once_each_on_its_first_call(tmp_path: Path) -> None:
    """Three hosted runs in two containers (one id twice), a local tool call and a hosted run naming no
    container: the task pays two containers, on its first call; the record as read from records.jsonl
    (run summaries) is priced the same."""
    tools = [_hosted_call("cntr_a", 1), _hosted_call("cntr_b", 2), _hosted_call("cntr_a", 3),
             _hosted_call(None, 4),
             ToolCallRecord(id="c5", turn=0, round=1, name="crop", arguments="{}", ok=True,
                            extra={"container_id": "not-hosted"})]
    rec = Record(task_id="t1", benchmark="tir-bench", setting="code", model=MODEL,
                 trajectory=Trajectory(model_call_log=[_call(0, 1_000, 100), _call(1, 500, 50)], tool_calls=tools,
                                       turns=[TurnResult(index=0)]))
    calls = billed(rec)
    assert [c.containers for c in calls] == [2, 0]
    assert cost_of(calls, {MODEL: HOSTED}).cost_usd == pytest.approx((1_500 * 2 + 150 * 8) / 1e6 + 0.06)
    assert billed_dict(json.loads(rec.model_dump_json())) == calls
    # the built-in table prices OpenAI's containers
    assert builtin_prices()["openai/o3"].container == 0.03
    w = RecordWriter(tmp_path / "run")
    w.write(rec)
    w.close()
    write_manifest(tmp_path / "run", Manifest(run_id="hosted", benchmark="tir-bench", setting="code", model=MODEL))
    u = compute_run_metrics(tmp_path / "run", prices={MODEL: HOSTED}).usage
    assert u.cost_usd == pytest.approx((1_500 * 2 + 150 * 8) / 1e6 + 0.06)
