"""TIR-Bench's official `code` setting on the sandbox kernel (issue 13 items 10 and 12): one stateful
`code_interpreter(code)` whose description does not depend on the machine and whose listed packages
all import in the kernel; end to end against the scripted server on 127.0.0.1, with the paper's
feedback after each result and the shown image sent with it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from toolsight.benchmarks.registry import get_benchmark
from toolsight.benchmarks.tir_bench.data import export_official
from toolsight.benchmarks.tir_bench.generate import generate
from toolsight.benchmarks.tir_bench.tools import (
    DESCRIPTION,
    PACKAGE_MODULES,
    TIRCodeInterpreter,
    tir_code_tools,
)
from toolsight.engine.options import RunOptions
from toolsight.engine.runner import Runner, load_for_run
from toolsight.models.registry import get_model
from toolsight.models.scripted import ScriptedServer
from toolsight.models.scripted.script import Script
from toolsight.tools.base import ArtifactStore, Toolbox, ToolContext


def test_fixed_description_listed_packages_import_status_and_state(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store = ArtifactStore(tmp_path / "ws")
    Image.new("RGB", (30, 20), (10, 200, 10)).save(tmp_path / "ws" / "in.png")
    store.add_file(tmp_path / "ws" / "in.png", source="input", keep_name=True)
    box = Toolbox(list(tir_code_tools()), store, "t")
    (spec,) = box.specs()
    assert spec.name == "code_interpreter" and spec.parameters["required"] == ["code"]
    assert spec.description == DESCRIPTION.format(image_list="in.png")
    assert spec.description.endswith("Pre-installed packages: numpy, opencv-python (cv2), Pillow (PIL), matplotlib, "
                                     "scipy, pandas, sympy, scikit-learn.")
    # the same text on a machine where nothing can be found: the list is not probed
    monkeypatch.setattr(importlib.util, "find_spec", lambda *a, **k: None)
    assert TIRCodeInterpreter().spec(ToolContext(store=store)).description == spec.description
    monkeypatch.undo()

    async def go() -> list[Any]:
        try:
            return [await box.call("code_interpreter", {"code": "import " + ", ".join(PACKAGE_MODULES) + "\nprint('ok')"}),
                    await box.call("code_interpreter", {"code": "from PIL import Image\nim = Image.open('in.png')\n"
                                                                "plt.imshow(im); plt.show()\nim.size"}),
                    await box.call("code_interpreter", {"code": "im.size[0] / 0"})]
        finally:
            await box.aclose()

    ok, shown, err = asyncio.run(go())
    # (scikit-learn's joblib warns on stderr that it runs serially: the sandbox has no /dev/shm)
    assert ok.ok and ok.text.startswith("Status: success\n") and ok.text.endswith("\nok") and "Error" not in ok.text
    assert shown.ok and shown.text == "Status: success\nOut[2]: (30, 20)" and len(shown.artifacts) == 1
    assert box.specs()[0].description == spec.description  # produced images do not change the description
    assert not err.ok and err.text.startswith("Status: error\n") and "ZeroDivisionError" in err.text  # state kept


def test_official_code_setting_end_to_end(tmp_path: Path) -> None:
    gen = tmp_path / "gen"
    tasks = generate("rotation_game", 1, 5, gen)
    data = tmp_path / "official"
    export_official(tasks, gen, data)
    rec = json.loads((data / "TIR-Bench.json").read_text())[0]
    name = Path(rec["image_1"]).name
    script = {"steps": [
        {"tool_calls": [{"name": "code_interpreter", "arguments": {
            "code": f"from PIL import Image\nim = Image.open('{name}')\nprint(im.size[0] > 0)"}}]},
        {"tool_calls": [{"name": "code_interpreter", "arguments": {
            "code": "plt.imshow(im.rotate(90)); plt.axis('off'); plt.show()\n6 * 7"}}]},
        {"text": f"The answer is {rec['answer']}."},
    ]}
    run = tmp_path / "run"
    with ScriptedServer(Script.model_validate(script)) as srv:
        opts = RunOptions.of(benchmark="tir-bench", model="openai/open-vlm", setting="code", data=str(data),
                          base_url=srv.openai_base_url, out=str(run), concurrency=1, cache=False, retries=0)
        bench = get_benchmark("tir-bench")
        asyncio.run(Runner(opts, bench, load_for_run(bench, str(data)), get_model(opts.model.spec, base_url=opts.model.base_url)).run())
        bodies = [r.body for r in srv.requests]
    assert len(bodies) == 3
    (tool,) = bodies[0]["tools"]
    assert tool["function"]["name"] == "code_interpreter" and f"working directory: {name}." in tool["function"]["description"]
    assert all(b["temperature"] == 0 and b["max_tokens"] == 2048 for b in bodies)  # App. E, open model
    second = bodies[1]["messages"]
    assert second[-2]["role"] == "tool" and second[-2]["content"] == "Status: success\nTrue"
    feedback = "The returning status and the processed image or text (if any) of the code is attached."
    assert second[-1] == {"role": "user", "content": feedback}  # after a text-only result too
    third = bodies[2]["messages"]
    assert third[-2]["role"] == "tool" and third[-2]["content"] == "Status: success\nOut[2]: 42"  # state kept
    parts = third[-1]["content"]
    assert third[-1]["role"] == "user" and [p["type"] for p in parts] == ["image_url", "text"]
    assert parts[1]["text"] == feedback  # the shown figure travels with the feedback
    (out,) = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert out["error"] is None and out["score"]["value"] == 1.0
    calls = out["trajectory"]["tool_calls"]
    assert [c["name"] for c in calls] == ["code_interpreter"] * 2 and [len(c["artifacts"]) for c in calls] == [0, 1]
    assert json.loads((run / "manifest.json").read_text())["agent_settings"]["tools"] == ["tir_code"]
