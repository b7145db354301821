"""The baselines: `random` a uniform guess over the options seeded per task and epoch (no answer without
options); `reference` warns when a setting lacks the tools its solutions call."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

from clikit import dataset as cli_dataset
from clikit import lines, records, ts
from toolsight.metrics.compute import compute_run_metrics
from toolsight.models.base import GenerateConfig, Message
from toolsight.models.baselines import RandomModel, _answer_from_info
from toolsight.tasks.schema import Task


def _task(i: int, options: dict[str, str] | None) -> Task:
    return Task.model_validate({"id": f"r{i}", "turns": [{"prompt": f"q{i}", "options": options}]})


def test_random_is_uniform_and_deterministic() -> None:
    opts = {"A": "1", "B": "2", "C": "3", "D": "4"}
    model = RandomModel(seed=7)

    def answer(i: int) -> str:
        t = _task(i, opts)
        out = asyncio.run(model.for_task(t).generate([Message.user(f"q{i}")], [], GenerateConfig()))
        return out.text

    first = [answer(i) for i in range(400)]
    assert first == [answer(i) for i in range(400)]
    counts = Counter(first)
    assert set(counts) == {f"<answer>{k}</answer>" for k in opts}
    assert all(60 < c < 140 for c in counts.values()), counts  # 100 expected each
    assert [answer(i) for i in range(50)] != [
        asyncio.run(RandomModel(seed=8).for_task(_task(i, opts)).generate([Message.user(f"q{i}")], [],
                                                                          GenerateConfig())).text
        for i in range(50)
    ]
    free = asyncio.run(model.for_task(_task(1, None)).generate([Message.user("q1")], [], GenerateConfig()))
    assert free.text == "<answer></answer>"


def test_answer_from_info_rules() -> None:
    text = 'Found blobs. INFO: {"total_components": 4, "components": [{"area": 10}, {"area": 3}]}'
    assert _answer_from_info(text, {"field": "total_components"}) == "4"
    assert _answer_from_info(text, {"field": "components", "op": "len"}) == "2"
    assert _answer_from_info(text, {"field": "components.0.area"}) == "10"
    assert _answer_from_info(text, {"field": "total_components", "map": {"4": "C"}}) == "C"
    assert _answer_from_info(text, {"field": "missing"}) is None
    assert _answer_from_info("no info here", {"field": "x"}) is None


# ---- issue 26 item 13: the baselines tell the truth about a run --------------------------------------------------

def test_reference_warns_only_when_the_setting_lacks_its_tools(tmp_path: Path) -> None:
    """The documented demo (docs/generators.md): the default setting offers every tool the reference
    solutions call (`google_search` is `web_search`'s alias), so no warning and 100%; `no-tools` lacks
    them all, so the warning says so and the score is 0."""
    data = tmp_path / "vtbdemo"
    assert ts("generate", "vtb", "--n", "8", "--out", str(data)).returncode == 0
    ok = ts("run", "visualtoolbench", "--data", str(data), "-m", "reference", "--out", str(tmp_path / "strong"),
            "--no-report")
    assert ok.returncode == 0, ok.stderr
    assert "warning" not in ok.stderr and "expect a score of 0" not in ok.stderr, ok.stderr
    assert "accuracy 100.0% over 8 scored" in ok.stderr, ok.stderr
    bare = ts("run", "visualtoolbench", "--data", str(data), "-m", "reference", "--setting", "no-tools",
              "--out", str(tmp_path / "bare"), "--no-report")
    warn = [ln for ln in lines(bare.stderr) if ln.startswith("warning: --model reference")]
    assert len(warn) == 1, bare.stderr
    assert "solves 8 of 8 task(s) by calling" in warn[0] and "google_search" in warn[0], warn
    assert "(no tools): expect a score of 0" in warn[0], warn
    assert "accuracy 0.0% over 8 scored" in bare.stderr, bare.stderr


def _guesses(run: Path) -> dict[tuple[str, int], str]:
    return {(r["task_id"], r["epoch"]): r["score"]["answer"] for r in records(run)}


def test_random_guesses_afresh_in_every_epoch_and_reproducibly(tmp_path: Path) -> None:
    """Seeded per (task, epoch): the epochs differ (a spread, pass@k above mean@k), a second run with the
    same seed makes the same guesses, another seed other ones."""
    ds = cli_dataset(tmp_path / "ds", 12)
    runs = {}
    for name, model in (("a", "random"), ("b", "random"), ("c", "random/1")):
        r = ts("run", str(ds), "-m", model, "--epochs", "4", "--out", str(tmp_path / name), "--no-report")
        assert r.returncode == 0, r.stderr
        runs[name] = _guesses(tmp_path / name)
    a = runs["a"]
    assert len(a) == 48
    per_task = [{a[(f"t{i}", e)] for e in range(1, 5)} for i in range(12)]
    assert sum(len(s) > 1 for s in per_task) >= 6, per_task  # 2 options, 4 epochs: 7/8 of tasks vary
    assert runs["b"] == a
    assert runs["c"] != a
    e = compute_run_metrics(tmp_path / "a").epochs
    assert e is not None and e.k == 4
    assert e.per_epoch_sd is not None and e.per_epoch_sd > 0, e
    assert e.pass_at_k is not None and e.mean_at_k is not None and e.pass_at_k > e.mean_at_k, e
