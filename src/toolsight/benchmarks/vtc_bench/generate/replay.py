"""Replay a generated task's reference interface calls through the real OpenCV tools.

`$input` in an argument is the task's input image (its workspace file name); `$prev` the image the
previous call produced. The answer is read from the last call's INFO JSON with `turn.meta['answer_from']`:
`{"field": "a.b.0", "op": "len"?, "map": {value: answer}?}` (the same rule the `reference` baseline uses).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from pydantic import BaseModel

from toolsight.models.baselines import read_answer
from toolsight.tasks.schema import Task
from toolsight.tools.base import ArtifactStore, Toolbox


class ReplayResult(BaseModel):
    texts: list[str]
    ok: bool
    answer: str | None
    error: str | None = None


async def replay(task: Task, dataset_root: Path, workspace: Path | None = None) -> ReplayResult:
    """Run turn 0's `reference_calls` with the real OpenCV tools in a fresh workspace."""
    from toolsight.tools.opencv import opencv_tools

    turn = task.turns[0]
    calls = turn.meta.get("reference_calls") or []
    own = workspace is None
    ws = Path(tempfile.mkdtemp(prefix="vtc-replay-")) if workspace is None else workspace
    try:
        src = dataset_root / turn.images[0].path
        name = src.name
        shutil.copyfile(src, ws / name)
        store = ArtifactStore(ws)
        store.add_file(ws / name, source="input", keep_name=True)
        box = Toolbox(opencv_tools(), store, task_id=task.id)
        prev = name
        texts: list[str] = []
        for i, spec in enumerate(calls):
            args = json.loads(json.dumps(spec.get("arguments", {})))
            for k, v in list(args.items()):
                if v == "$prev":
                    args[k] = prev
                elif v == "$input":
                    args[k] = name
            res = await box.call(str(spec["tool"]), args, call_id=f"ref-{i}")
            texts.append(res.model_text())
            if not res.ok:
                return ReplayResult(texts=texts, ok=False, answer=None, error=f"call {i} ({spec['tool']}): {res.text}")
            if res.artifacts:
                prev = res.artifacts[0].id
        rule = turn.meta.get("answer_from") or {}
        ans = read_answer(texts[-1] if texts else "", rule if isinstance(rule, dict) else {})
        return ReplayResult(texts=texts, ok=True, answer=ans)
    finally:
        if own:
            shutil.rmtree(ws, ignore_errors=True)
