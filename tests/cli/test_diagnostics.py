"""Diagnostics go through `logging`: TOOLSIGHT_LOG_LEVEL / TOOLSIGHT_LOG_FILE show what a run retried."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolsight.calls.retry import ModelCaller
from toolsight.diagnostics import configure_logging
from toolsight.models.base import GenerateConfig, Message, Model, ModelError, ModelOutput, TextPart
from toolsight.tools.base import ToolSpec


class FlakyOnce(Model):
    """Fails its first request with a 500, then answers."""

    def __init__(self) -> None:
        super().__init__("flaky/once")
        self.calls = 0

    async def generate(self, messages: list[Message], tools: list[ToolSpec], config: GenerateConfig) -> ModelOutput:
        self.calls += 1
        if self.calls == 1:
            raise ModelError("server error 500", retryable=True, status=500)
        return ModelOutput(message=Message(role="assistant", content=[TextPart(text="ok")]))


@pytest.fixture
def clean_logger() -> Iterator[logging.Logger]:
    logger = logging.getLogger("toolsight")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    logger.handlers.clear()
    yield logger
    for h in logger.handlers:
        h.close()
    logger.handlers[:], logger.level, logger.propagate = saved


def test_a_retried_call_is_logged_at_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          clean_logger: logging.Logger) -> None:
    log_file = tmp_path / "toolsight.log"
    monkeypatch.setenv("TOOLSIGHT_LOG_FILE", str(log_file))
    monkeypatch.setenv("TOOLSIGHT_LOG_LEVEL", "info")
    configure_logging()
    caller = ModelCaller(FlakyOnce(), retries=2, backoff_base=0.0)
    out = asyncio.run(caller([Message.user("hi")], [], GenerateConfig()))
    assert out.text == "ok" and caller.stats.retries == 1
    text = log_file.read_text(encoding="utf-8")
    assert "INFO toolsight.calls.retry" in text and "attempt 1" in text and "server error 500" in text


def test_default_level_keeps_info_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      clean_logger: logging.Logger) -> None:
    log_file = tmp_path / "quiet.log"
    monkeypatch.setenv("TOOLSIGHT_LOG_FILE", str(log_file))
    monkeypatch.delenv("TOOLSIGHT_LOG_LEVEL", raising=False)
    configure_logging()
    caller = ModelCaller(FlakyOnce(), retries=2, backoff_base=0.0)
    asyncio.run(caller([Message.user("hi")], [], GenerateConfig()))
    assert log_file.read_text(encoding="utf-8") == ""
