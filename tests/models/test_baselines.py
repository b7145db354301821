"""The random baseline: a uniform, seeded guess over the options; no answer without options."""

from __future__ import annotations

import asyncio
from collections import Counter

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
