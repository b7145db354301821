"""Summarise a `make mutation` run: counts by status, and every surviving mutant sorted into a kind.

Run after `mutmut run` in the repository root (it reads mutmut's results in `mutants/`):

    python tests/mutationkit.py                        # figures and survivors by kind, to stdout
    python tests/mutationkit.py --write docs/mutation-survivors.md

The kinds are found from the mutant's diff by plain rules (below), so a reader can check them;
`REVIEWED` holds the survivors read by hand, each with why it is accepted (equivalent mutants,
defaults no caller relies on). Everything else is listed as open: a test gap nobody has judged yet.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# mutant name (without the `toolsight.` prefix) → why it is accepted
REVIEWED: dict[str, str] = {
    # the official VTC letter rule has a first `if` that the next line makes redundant (reproduced
    # verbatim from the reference): mutating it cannot change a score
    **{f"scoring.vtc.x__mcq_official__mutmut_{i}": "equivalent: the official first single-letter test is "
       "subsumed by the letter-prefix test on the next line (reference code kept verbatim)"
       for i in (7, 8, 17, 18, 19, 20, 23)},
    "scoring.vtc.x_vtc_judge_hit__mutmut_71": "equivalent: 'Z' alone also scores 0 through the set comparison",
    "scoring.vtc.x_vtc_judge_hit__mutmut_81": "equivalent: the gold letters are upper-cased again on the next line",
    "scoring.extract.x_choice_letter__mutmut_13": "equivalent: patterns 1 and 2 are anchored at the start, "
                                                 "so finditer and search find the same match",
    "scoring.extract.x_choice_letter__mutmut_30": "equivalent: exactly one letter has already returned above",
    "scoring.tir.x_resolve_choice__mutmut_10": "equivalent: a lower-case bare letter is read by choice_letter's "
                                               "first pattern two rules later",
    "scoring.tir.x_resolve_choice__mutmut_13": "equivalent: a bare letter outside the options never equals the "
                                               "gold, which is always allowed",
    "scoring.tir.x_tir_score_item__mutmut_101": "equivalent: the last element of rsplit('/', 2) is the file name too",
    "scoring.tir.x_tir_score_item__mutmut_260": "equivalent: a letter gold also reaches judge_choice through "
                                                "classify_string == 1",
    "scoring.vtc.x__gold_letter__mutmut_11": "equivalent in practice: without options, the open-answer rule "
                                             "scores a single-letter gold the same way",
    "scoring.vtc.x__rule_corrected__mutmut_25": "equivalent: an empty prediction or gold scores 0 on every "
                                                "later path",
    "metrics.chain.x_task_chain__mutmut_1": "equivalent: turn_chain recomputes the producers when given none "
                                            "(the argument only saves work)",
    "metrics.chain.x_task_chain__mutmut_8": "equivalent: as above (producers recomputed)",
    "metrics.chain.x_task_chain__mutmut_11": "equivalent: as above (producers recomputed)",
    "metrics.chain.x_turn_chain__mutmut_2": "equivalent: as above (producers recomputed)",
}

KIND_REASON = {
    "default": "accepted: a default argument value; every caller in the code and tests passes it explicitly",
    "message": "accepted: text of an error message, explanation or log line (tests check that an error "
               "happens and what it names, not every word)",
    "reviewed": "accepted after review (reason given)",
    "timeout": "killed in effect: the mutant hangs (e.g. a loop that never ends) and mutmut stops it",
    "no tests": "open: no selected test reaches this function",
    "regex": "open: a changed pattern or literal in matching code that no test tells apart",
    "none-arg": "open: an argument replaced by None or dropped without a test noticing",
    "logic": "open: a changed operator, constant or branch without a test noticing",
}
MESSAGE_HINT = re.compile(r"\b(raise|error|explanation|print|warn|reason|detail|note|msg|message)\b|f\"|f'",
                          re.IGNORECASE)


def _strings_masked(line: str) -> str | None:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    skip = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    return " ".join("S" if t.type == tokenize.STRING else t.string for t in toks if t.type not in skip)


def kind_of(name: str, status: str, minus: list[str], plus: list[str]) -> str:
    short = name.removeprefix("toolsight.")
    if short in REVIEWED:
        return "reviewed"
    if status != "survived":
        return status
    old, new = " ".join(minus), " ".join(plus)
    if old.lstrip().startswith("def ") or old.lstrip().startswith("async def "):
        return "default"
    if _strings_masked(old) is not None and _strings_masked(old) == _strings_masked(new):
        if re.search(r"""\br["']""", old):
            return "regex"
        return "message" if MESSAGE_HINT.search(old) else "regex"
    if re.search(r"\bNone\b", new) and not re.search(r"\bNone\b", old):
        return "none-arg"
    if len(new) < len(old) and "," in old:
        return "none-arg"
    return "logic"


def collect() -> list[dict[str, Any]]:
    """Every mutant mutmut knows, with its status and (for the non-killed) its diff."""
    from mutmut.__main__ import collect_source_file_mutation_data
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code

    _, data = collect_source_file_mutation_data(mutant_names=[])
    rows = []
    for path, d in data.items():
        for name, code in d.exit_code_by_key.items():
            status = status_by_exit_code[code]
            row: dict[str, Any] = {"name": name, "status": status}
            if status not in ("killed", "not checked", "skipped"):
                diff = get_diff_for_mutant(name, path=path).splitlines()
                row["minus"] = [x[1:] for x in diff if x.startswith("-") and not x.startswith("---")]
                row["plus"] = [x[1:] for x in diff if x.startswith("+") and not x.startswith("+++")]
                row["kind"] = kind_of(name, status, row["minus"], row["plus"])
            rows.append(row)
    return rows


def report(rows: list[dict[str, Any]]) -> str:
    status = Counter(r["status"] for r in rows if r["status"] != "not checked")
    kinds = Counter(r["kind"] for r in rows if "kind" in r)
    lines = ["# Surviving mutants", "",
             "Generated by `python tests/mutationkit.py --write docs/mutation-survivors.md` after `make mutation`",
             "(see docs/testing.md). Kinds and reasons:", ""]
    lines += [f"- **{k}** ({kinds[k]}): {KIND_REASON[k]}" for k in KIND_REASON if kinds[k]]
    lines += ["", "Status counts: " + ", ".join(f"{k} {v}" for k, v in sorted(status.items())), ""]
    by_fn: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if "kind" in r:
            by_fn[re.sub(r"__mutmut_\d+$", "", r["name"])].append(r)
    for fn in sorted(by_fn):
        lines += [f"## `{fn.removeprefix('toolsight.')}`", ""]
        for r in sorted(by_fn[fn], key=lambda r: int(r["name"].rsplit("_", 1)[1])):
            why = REVIEWED.get(r["name"].removeprefix("toolsight."), "")
            old = " / ".join(x.strip() for x in r["minus"])[:140].replace("|", "\\|")
            new = " / ".join(x.strip() for x in r["plus"])[:140].replace("|", "\\|")
            lines.append(f"- {r['name'].rsplit('_', 1)[1]} **{r['kind']}**{': ' + why if why else ''} — "
                         f"`{old}` → `{new}`")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    rows = collect()
    text = report(rows)
    if "--write" in argv:
        Path(argv[argv.index("--write") + 1]).write_text(text + "\n", encoding="utf-8")
    head = text.split("\n## ", 1)[0]
    print(head)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
