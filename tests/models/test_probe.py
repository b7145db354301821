"""The outage breaker's health probe costs nothing (issue 25 item 16): each provider's `probe()` is
its models listing through its own SDK, never a completion — a billed request on a paid API. Against
the scripted server (which plays the listing like a request: a fault step answers with its error):
a 503 is a transient failure (the breaker keeps waiting), a 401 names the key, and an answer is
"up" — and the server saw only listings, no chat, messages or generateContent request."""

from __future__ import annotations

import asyncio

import pytest
from wirekit import PROVIDERS, make_model

from toolsight.calls.retry import classify
from toolsight.models.base import Model, ModelError
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script, Step


def _probe(model: Model) -> ModelError | None:
    async def go() -> ModelError | None:
        try:
            await model.probe(timeout=10)
        except ModelError as exc:
            return exc
        finally:
            await model.aclose()
        return None

    return asyncio.run(go())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_probe_is_the_models_listing_and_reads_its_answer(provider: str) -> None:
    script = Script(steps=[Step(fault="status", status=503), Step(fault="status", status=401), Step(text="up")])
    with ScriptedServer(script) as srv:
        down = _probe(make_model(provider, srv))
        refused = _probe(make_model(provider, srv))
        up = _probe(make_model(provider, srv))
        paths = [(r.path, r.body) for r in srv.requests]
    assert down is not None and down.status == 503 and classify(down) == "transient", down
    assert refused is not None and refused.status == 401 and classify(refused) == "fatal", refused
    assert up is None
    listing = "/v1beta/models" if provider == "google" else "/v1/models"
    assert [p for p, _ in paths] == [listing] * 3 and all(body == {} for _, body in paths), paths
