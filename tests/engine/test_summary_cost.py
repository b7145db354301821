"""The run summary line names the tokens read from prompt caches and the run's cost at the built-in prices."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolsight.engine.summary import RunSummary, dict_counts, record_counts
from toolsight.log.record import Record
from toolsight.log.trajectory import ModelCallRecord, Trajectory
from toolsight.models.base import Usage


def _record(model: str) -> Record:
    call = ModelCallRecord(index=0, input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=400_000)
    traj = Trajectory(model_call_log=[call], usage=Usage(input_tokens=1_000_000, output_tokens=100_000,
                                                         cache_read_tokens=400_000))
    return Record(task_id="t1", benchmark="b", setting="s", model=model, trajectory=traj)


def test_the_summary_prices_a_record_at_the_builtin_table(tmp_path: Path) -> None:
    rec = _record("openai/gpt-4o")  # built in: 2.50 input, 1.25 cached input, 10 output per 1M tokens
    # 600,000 × 2.50 + 400,000 × 1.25 + 100,000 × 10 = 1.50 + 0.50 + 1.00
    assert record_counts(rec)["cost"] == pytest.approx(3.0)
    assert dict_counts(json.loads(rec.model_dump_json()))["cost"] == pytest.approx(3.0)
    s = RunSummary(tmp_path, total=1)
    s.count(record_counts(rec))
    assert "; 1100000 tokens; 400000 input tokens read from prompt caches; $3.0000 at toolsight's price table" \
        in s.line()


def test_an_unpriced_model_adds_no_cost(tmp_path: Path) -> None:
    rec = _record("mock/alpha")
    assert record_counts(rec)["cost"] is None
    s = RunSummary(tmp_path, total=1)
    s.count(record_counts(rec))
    assert "$" not in s.line()


def test_a_given_table_prices_the_summary_and_is_named(tmp_path: Path) -> None:
    from toolsight.metrics.cost import Price

    rec = _record("mock/alpha")  # not in the built-in table
    table = {"mock/alpha": Price(input=1.0, output=2.0)}  # 1,000,000 × 1 + 100,000 × 2 = 1.20
    assert dict_counts(json.loads(rec.model_dump_json()), table)["cost"] == pytest.approx(1.2)
    assert record_counts(rec, table)["cost"] == pytest.approx(1.2)
    s = RunSummary(tmp_path, total=1, prices=table, price_file="mine.toml")
    s.count(record_counts(rec, table))
    assert "$1.2000 at the prices in mine.toml (over the built-in table) (1 task(s) priced)" in s.line()
