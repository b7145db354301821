"""Official and corrected scores of every fidelity vector, and the reviewed golden files that pin them.

`tests/fidelity/golden/<benchmark>.jsonl` holds one line per vector: `vector_id`, `case`,
`input_sha256` (so a changed vector forces a new review), the expected `official` and `corrected`
results, and `why` — the docs/fidelity.md rule that explains a difference between the two (empty
when they agree). The expected values were reviewed against docs/fidelity.md by hand; they are
not a snapshot to refresh when a test fails.

    python tests/scoring/goldenkit.py --diff     # what the code gives now vs the golden files
    python tests/scoring/goldenkit.py --write    # rewrite them (keeps each `why`); review the diff!
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make the test helpers importable as pytest does
    sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from fidelitykit import vectors
from judgekit import ScriptedJudge
from toolsight.benchmarks.phystoolbench.scorer import (
    phystool_correct,
    phystool_parse_cot,
    phystool_parse_no_cot,
)
from toolsight.benchmarks.registry import get_scorer
from toolsight.benchmarks.tir_bench.scorer import TirOfficialCrash, tir_score_item
from toolsight.benchmarks.visualtoolbench.scorer import task_from_official
from toolsight.benchmarks.vtc_bench.scorer import vtc_goes_to_judge, vtc_rule_score
from toolsight.scoring.base import ScoreContext
from toolsight.tasks.schema import Task, Turn

GOLDEN = Path(__file__).resolve().parents[1] / "fidelity" / "golden"
MODES = ("official", "corrected")
Result = dict[str, Any]


def input_sha256(vec: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(vec["input"], sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _tir(inp: dict[str, Any], mode: str) -> Result:
    try:
        return {"score": tir_score_item(inp, mode)}  # type: ignore[arg-type]
    except TirOfficialCrash:
        return {"score": None, "crash": True}


def _vtc(inp: dict[str, Any], mode: str) -> Result:
    row = inp["row"]
    return {"rule_score": vtc_rule_score(row, mode), "to_judge": vtc_goes_to_judge(row, mode)}  # type: ignore[arg-type]


def _phys(inp: dict[str, Any], mode: str) -> Result:
    gold = inp["correct_tool"]
    cot = phystool_parse_cot(inp["cot_response"], mode)  # type: ignore[arg-type]
    no_cot = phystool_parse_no_cot(inp["no_cot_response"], mode)  # type: ignore[arg-type]
    return {"cot_correct": phystool_correct(cot, gold, mode),  # type: ignore[arg-type]
            "no_cot_correct": phystool_correct(no_cot, gold, mode)}  # type: ignore[arg-type]


def _vtb(inp: dict[str, Any], mode: str) -> Result:
    task, responses = task_from_official(inp["example"], inp["clean_rubrics_item"])
    judge = ScriptedJudge(dict(inp["judge_replies_by_rubric_description"]))
    s = asyncio.run(get_scorer("visualtoolbench", mode).score(task, responses, ScoreContext(judge=judge)))
    if s.error is not None:
        return {"error": True, "dropped": bool(s.details.get("dropped"))}
    return {"score": round(s.value, 12), "passed": s.passed}


def _visbrowse(inp: dict[str, Any], mode: str) -> Result:
    item, reply = inp["item"], inp["stub_judge_reply"]
    task = Task(id=str(item["id"]), benchmark="visbrowse",
                turns=[Turn(prompt=item["question"], answer=list(item["answer"]), answer_type="open")])
    # 'No answer' is what the reference's infer.py records when no <answer> tag came: send no tag
    gen = item["gen"]
    response = "I could not find it." if gen == "No answer" else f"Thinking...\n<answer>{gen}</answer>"
    judge = ScriptedJudge(default=reply if reply is not None else "UNEXPECTED JUDGE CALL")
    s = asyncio.run(get_scorer("visbrowse", mode).score(task, [response], ScoreContext(judge=judge)))
    return {"correct": s.passed, "judge_called": bool(judge.prompts), "error": s.error is not None}


BENCHMARKS: dict[str, tuple[Callable[[dict[str, Any], str], Result], Callable[[dict[str, Any]], bool]]] = {
    "tir-bench": (_tir, lambda v: True),
    "vtc-bench": (_vtc, lambda v: True),
    "phystoolbench": (_phys, lambda v: True),
    "visualtoolbench": (_vtb, lambda v: True),
    # the decryption vectors have no scoring modes
    "visbrowse-bench": (_visbrowse, lambda v: str(v["vector_id"]).startswith("vb-eval-")),
}


def current(name: str) -> list[dict[str, Any]]:
    """What the code gives now for every scored vector of one benchmark (golden line layout)."""
    fn, keep = BENCHMARKS[name]
    out = []
    for vec in vectors(name):
        if keep(vec):
            out.append({"vector_id": vec["vector_id"], "case": vec["case"], "input_sha256": input_sha256(vec),
                        "official": fn(vec["input"], "official"), "corrected": fn(vec["input"], "corrected")})
    return out


def golden(name: str) -> list[dict[str, Any]]:
    path = GOLDEN / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _main(argv: list[str]) -> int:
    write = "--write" in argv
    names = [a for a in argv if not a.startswith("--")] or list(BENCHMARKS)
    changed = 0
    for name in names:
        rows = current(name)
        path = GOLDEN / f"{name}.jsonl"
        old = {r["vector_id"]: r for r in golden(name)} if path.exists() else {}
        for r in rows:
            prev = old.get(r["vector_id"], {})
            r["why"] = prev.get("why", "")
            if {k: prev.get(k) for k in ("input_sha256", "official", "corrected")} != {
                    k: r[k] for k in ("input_sha256", "official", "corrected")}:
                changed += 1
                print(f"{name} {r['vector_id']} {r['case']!r}\n  was {prev.get('official')} / {prev.get('corrected')}"
                      f"\n  now {r['official']} / {r['corrected']}")
        if write:
            GOLDEN.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{changed} vector(s) differ from the golden files" + (" (rewritten: review the diff)" if write else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
