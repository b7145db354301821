"""`log.arguments.load_arguments`: the bounded decoder for model-written tool-call arguments."""

from __future__ import annotations

import json

import pytest

from toolsight.log.arguments import ArgumentsError, check_depth, depth, load_arguments


def _nested_lists(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_depth_counts_levels_of_objects_and_lists() -> None:
    assert depth(1, limit=10) == 0
    assert depth({}, limit=10) == 1
    assert depth({"a": [1, {"b": []}]}, limit=10) == 4
    assert depth([[], [[[]]]], limit=10) == 4


def test_the_limit_is_inclusive() -> None:
    assert load_arguments(_nested_lists(5), max_depth=5) == json.loads(_nested_lists(5))
    with pytest.raises(ArgumentsError, match="more than 5 levels deep"):
        load_arguments(_nested_lists(6), max_depth=5)
    with pytest.raises(ArgumentsError, match="more than 5 levels deep"):
        check_depth({"a": {"b": {"c": {"d": {"e": {}}}}}}, max_depth=5)


def test_nesting_too_deep_for_pythons_decoder_is_an_arguments_error() -> None:
    with pytest.raises(ArgumentsError, match="levels deep"):
        load_arguments(_nested_lists(100_000))


def test_size_and_syntax() -> None:
    with pytest.raises(ArgumentsError, match="11 characters long, over the limit of 10"):
        load_arguments('{"a": "12"}', max_chars=10)
    assert load_arguments('{"a": "1"}', max_chars=10) == {"a": "1"}
    with pytest.raises(ArgumentsError, match="not valid JSON"):
        load_arguments('{"a": ')
