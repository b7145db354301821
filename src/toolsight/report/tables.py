"""The papers' tables, built from RunMetrics and rendered as markdown, HTML fragments or CSV rows.

Rows are runs (model × setting). The score table has the overall score and APR with 95% CIs;
one table per grouping tag has the overall score and one column per tag value. The best and
second-best value of each column are marked (bold / underline; a tie is not), and with a base setting every
other run of the same model shows its delta in points. The tool-use table follows VTC-Bench
Table 5 and VisualToolBench B.4; the share tables give calls per tool and, per vocabulary a run's
benchmark declares, its image operations per label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from toolsight.metrics.compute import GroupScore, RunMetrics
from toolsight.metrics.stats import Estimate
from toolsight.tools.operations import Vocabulary

Direction = int  # +1 higher is better, -1 lower is better, 0 not ranked


@dataclass
class Cell:
    value: float | None
    text: str
    delta: float | None = None
    mark: str = ""  # "best" | "second" | ""
    lo: float | None = None
    hi: float | None = None


@dataclass
class Column:
    name: str
    direction: Direction = 0
    percent: bool = False
    delta: bool | None = None  # show the difference to the base setting (default: ranked columns)

    @property
    def shows_delta(self) -> bool:
        return self.delta if self.delta is not None else self.direction != 0


@dataclass
class Table:
    title: str
    key_columns: list[str]
    columns: list[Column]
    rows: list[tuple[list[str], list[Cell]]] = field(default_factory=list)
    note: str = ""
    group_key: str | None = None  # the tag whose values are the columns (group and chain tables)
    #: the runs (positions in the report's list) the run rows are, when not all of them (tool tables)
    run_rows: list[int] | None = None
    # (row, column) -> URL of the trace viewer's filtered task list; column -1 = the row's Setting cell
    links: dict[tuple[int, int], str] = field(default_factory=dict)


def pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}"


def num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _est_cell(e: Estimate, percent: bool = True, ci: bool = True) -> Cell:
    if e.value is None:
        return Cell(None, "–")
    f = pct if percent else num
    text = f(e.value)
    if ci and e.lo is not None and e.hi is not None and e.n > 1:
        text += f" [{f(e.lo)}–{f(e.hi)}]"
    return Cell(e.value, text, lo=e.lo, hi=e.hi)


_LEADING_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")


def _shown(c: Cell) -> float:
    """The value as its cell prints it (the leading number): two values that print alike are a tie."""
    m = _LEADING_NUMBER.match(c.text.strip())
    return float(m.group()) if m else round(c.value or 0.0, 12)


def _rank(table: Table) -> None:
    """Bold the best value of each ranked column and underline the second best — each only when one
    row alone holds it: a tie (several runs at 0.0, or at 100.0) has no best run, so nothing is marked
    for it. "Second best" needs a value below it too: of two values the lower is the worst."""
    if len(table.rows) < 2:
        return
    for ci, col in enumerate(table.columns):
        if not col.direction:
            continue
        shown = [(c, _shown(c)) for _, cells in table.rows if (c := cells[ci]).value is not None]
        counts = Counter(v for _, v in shown)
        order = sorted(counts, reverse=col.direction > 0)
        if len(order) < 2 or counts[order[0]] > 1:
            continue
        second = order[1] if len(order) > 2 and counts[order[1]] == 1 else None
        for c, v in shown:
            if v == order[0]:
                c.mark = "best"
            elif v == second:
                c.mark = "second"


def _deltas(table: Table, metrics: Sequence[RunMetrics], base_setting: str | None) -> None:
    if not base_setting:
        return
    base_rows = {m.model: i for i, m in enumerate(metrics) if m.setting == base_setting}
    for i, m in enumerate(metrics):
        bi = base_rows.get(m.model)
        if bi is None or bi == i:
            continue
        for ci, col in enumerate(table.columns):
            c, b = table.rows[i][1][ci], table.rows[bi][1][ci]
            if col.shows_delta and c.value is not None and b.value is not None:
                c.delta = c.value - b.value
                scale = 100 if col.percent else 1
                c.text += f" ({c.delta * scale:+.{1 if col.percent else 2}f})"


def _keys(m: RunMetrics) -> list[str]:
    return [m.model, m.setting]


def score_table(metrics: Sequence[RunMetrics], base_setting: str | None = None) -> Table:
    t = Table(
        "Score", ["Model", "Setting"],
        [Column("N"), Column("Errors"), Column("Score % [95% CI]", 1, True), Column("APR % [95% CI]", 1, True)],
        note="Score = mean score value (accuracy / ARS); APR = share passed. Errors (run or score errors) are "
             "left out of both and counted apart.",
    )
    for m in metrics:
        t.rows.append((_keys(m), [
            Cell(float(m.overall.n), str(m.overall.n)),  # tasks: a run with epochs is scored per task
            Cell(float(m.n_errors + m.n_score_errors), str(m.n_errors + m.n_score_errors)),
            _est_cell(m.overall.score), _est_cell(m.overall.pass_rate),
        ]))
    _rank(t)
    _deltas(t, metrics, base_setting)
    _random_row(t, metrics, lambda m: [Cell(None, ""), Cell(None, ""), Cell(m.random_guess, pct(m.random_guess)),
                                       Cell(None, "")])
    return t


def _random_row(t: Table, metrics: Sequence[RunMetrics], cells: Callable[[RunMetrics], list[Cell]]) -> None:
    """The expected score of a uniform guess over the options (TIR-Bench's random row), unranked."""
    m = next((x for x in metrics if x.random_guess is not None), None)
    if m is not None:
        t.rows.append((["random guess (expected)", "–"], cells(m)))


def group_table(metrics: Sequence[RunMetrics], tag: str, base_setting: str | None = None,
                metric: str = "score") -> Table:
    values: list[str] = []
    for m in metrics:
        for v in m.groups.get(tag, {}):
            if v not in values:
                values.append(v)
    values = ordered_values(tag, values, metrics)
    label = "APR" if metric == "pass_rate" else "Score"
    t = Table(f"{label} % by {tag}", ["Model", "Setting"],
              [Column("Overall", 1, True), *[Column(v, 1, True) for v in values]],
              note=f"n per group in the JSON output; '–' = no scored task with that {tag}.", group_key=tag)
    from toolsight.benchmarks.registry import group_cis

    ci = any(group_cis(name) for name in dict.fromkeys(m.benchmark for m in metrics))
    if ci:
        t.note += " Brackets: 95% bootstrap CI."
    for m in metrics:
        overall: GroupScore = m.overall
        cells = [_est_cell(getattr(overall, metric), ci=ci)]
        for v in values:
            g = m.groups.get(tag, {}).get(v)
            cells.append(_est_cell(getattr(g, metric), ci=ci) if g else Cell(None, "–"))
        t.rows.append((_keys(m), cells))
    _rank(t)
    _deltas(t, metrics, base_setting)
    if metric == "score":
        _random_row(t, metrics, lambda m: [Cell(m.random_guess, pct(m.random_guess)), *[
            Cell(m.random_guess_groups.get(tag, {}).get(v), pct(m.random_guess_groups.get(tag, {}).get(v)))
            for v in values]])
        _reference_rows(t, metrics, tag, values)
    return t


def _reference_rows(t: Table, metrics: Sequence[RunMetrics], tag: str, values: list[str]) -> None:
    """Rows the benchmark's paper reports for this grouping (e.g. PhysToolBench's human testers), unranked."""
    from toolsight.benchmarks.registry import reference_rows

    for name in dict.fromkeys(m.benchmark for m in metrics):
        for label, row in reference_rows(name, tag).items():
            cells = [Cell(row.get("Overall", 0.0) / 100 if "Overall" in row else None, _ref(row.get("Overall")))]
            cells += [Cell(row[v] / 100 if v in row else None, _ref(row.get(v))) for v in values]
            t.rows.append(([f"{label} (paper)", "–"], cells))
        if reference_rows(name, tag):
            return


def _ref(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def ordered_values(tag: str, values: list[str], metrics: Sequence[RunMetrics]) -> list[str]:
    """Group columns in the order a run's benchmark declares for `tag` (its paper's), else sorted."""
    from toolsight.benchmarks.registry import category_order

    for name in dict.fromkeys(m.benchmark for m in metrics):
        order = category_order(name, tag)
        if order:
            rank = {c: i for i, c in enumerate(order)}
            return sorted(values, key=lambda v: (rank.get(v, len(rank)), v))
    return sorted(values)


def chain_table(metrics: Sequence[RunMetrics], tag: str) -> Table | None:
    """Mean effective / reference chain length per group (tasks with a reference chain only)."""
    values: list[str] = []
    for m in metrics:
        values.extend(v for v in m.chain_groups.get(tag, {}) if v not in values)
    if not values:
        return None
    values = ordered_values(tag, values, metrics)
    t = Table(f"Chain length by {tag} (effective / reference)", ["Model", "Setting"],
              [Column(v) for v in values],
              note="Mean effective chain length / mean reference chain length over the group's tasks that have "
                   "a reference chain; MAE of the effective length in parentheses.", group_key=tag)
    for m in metrics:
        cells: list[Cell] = []
        for v in values:
            g = m.chain_groups.get(tag, {}).get(v)
            if g is None or g.effective is None:
                cells.append(Cell(None, "–"))
            else:
                cells.append(Cell(g.effective, f"{num(g.effective)} / {num(g.reference)} ({num(g.mae_effective)})"))
        t.rows.append((_keys(m), cells))
    return t


def tool_table(metrics: Sequence[RunMetrics], base_setting: str | None = None) -> Table:
    cols: list[tuple[Column, Callable[[RunMetrics], Cell]]] = [
        (Column("TCR %", 0, True, delta=True), lambda m: _est_cell(m.tool_use.proactivity, ci=False)),
        (Column("Success %", 1, True), lambda m: _est_cell(m.tool_use.success_rate, ci=False)),
        (Column("Calls/task", delta=True), lambda m: _est_cell(m.tool_use.volume, percent=False, ci=False)),
        (Column("Uniq. tools"), lambda m: Cell(float(m.tool_use.unique_tools), str(m.tool_use.unique_tools))),
        (Column("Eff. calls/task"), lambda m: _est_cell(m.tool_use.effective_volume, percent=False, ci=False)),
        (Column("Eff. uniq."), lambda m: Cell(float(m.tool_use.effective_unique_tools),
                                              str(m.tool_use.effective_unique_tools))),
        (Column("MAE all", -1), lambda m: _est_cell(m.tool_use.mae_all, percent=False, ci=False)),
        (Column("MAE eff.", -1), lambda m: _est_cell(m.tool_use.mae_effective, percent=False, ci=False)),
        (Column("Eff_tool %", 1, True), lambda m: _est_cell(m.tool_use.eff_tool, ci=False)),
        (Column("Turns/task"), lambda m: Cell(m.tool_use.turns_per_task, num(m.tool_use.turns_per_task))),
        (Column("Rounds/task"), lambda m: Cell(m.tool_use.rounds_per_task, num(m.tool_use.rounds_per_task))),
        (Column("Tokens/task"), lambda m: Cell(m.usage.tokens_per_task, num(m.usage.tokens_per_task, 0))),
        (Column("Cost/task $", -1), lambda m: Cell(m.usage.cost_per_task_usd, num(m.usage.cost_per_task_usd, 4))),
    ]
    t = Table("Tool use", ["Model", "Setting"], [c for c, _ in cols],
              note="TCR = tasks with ≥1 tool call; Eff. = effective toolchain (provenance of the last image "
                   "seen); MAE vs the reference chain length; Eff_tool = Σ effective / Σ calls.")
    for m in metrics:
        t.rows.append((_keys(m), [f(m) for _, f in cols]))
    _rank(t)
    _deltas(t, metrics, base_setting)
    return t


def tool_group_table(metrics: Sequence[RunMetrics], tag: str) -> Table | None:
    """Proactivity, success rate and volume per value of `tag` (VisualToolBench Table 7), with total calls."""
    values: list[str] = []
    for m in metrics:
        values.extend(v for v in m.tool_groups.get(tag, {}) if v not in values)
    if not values:
        return None
    values = ordered_values(tag, values, metrics)
    cols = [Column("Total #")]
    for v in values:
        cols += [Column(f"{v} proactivity", 1), Column(f"{v} success rate", 1), Column(f"{v} volume")]
    t = Table(f"Tool use by {tag}", ["Model", "Setting"], cols,
              note="Proactivity = share of tasks with ≥1 tool call; success rate = calls whose output is not an "
                   "error / all calls; volume = calls per task (paper App. B.4).")
    for m in metrics:
        groups = m.tool_groups.get(tag, {})
        cells = [Cell(float(m.tool_use.calls), str(m.tool_use.calls))]
        for v in values:
            g = groups.get(v)
            if g is None:
                cells += [Cell(None, "–")] * 3
                continue
            cells += [Cell(g.proactivity, num(g.proactivity, 4)), Cell(g.success_rate, num(g.success_rate, 4)),
                      Cell(g.volume, num(g.volume))]
        t.rows.append((_keys(m), cells))
    _rank(t)
    return t


def epochs_table(metrics: Sequence[RunMetrics]) -> Table | None:
    """Runs made with --epochs K > 1: mean@k, pass@k, pass^k, each epoch's score and their spread."""
    runs = [m for m in metrics if m.epochs is not None]
    if not runs:
        return None
    k = max(m.epochs.k for m in runs if m.epochs is not None)
    t = Table("Epochs", ["Model", "Setting"], [
        Column("k"), Column("Reducer"), Column("Tasks"), Column("mean@k %", 1, True), Column("pass@k %", 1, True),
        Column("pass^k %", 1, True), *[Column(f"Epoch {e} %", 0, True) for e in range(1, k + 1)],
        Column("SD across epochs (pts)", -1),
    ], note="A run with --epochs K runs every task K times; its Score row is over tasks, each reduced over its "
            "epochs by the reducer. mean@k = mean of the epochs' values; pass@k = share of tasks any epoch "
            "passed; pass^k = share every epoch passed; SD = standard deviation of the per-epoch scores.")
    for m in runs:
        e = m.epochs
        assert e is not None
        sd = e.per_epoch_sd
        t.rows.append((_keys(m), [
            Cell(float(e.k), str(e.k)), Cell(None, e.reducer), Cell(float(e.tasks), f"{e.tasks}"
                                                                     + (f" ({e.complete} complete)" if e.complete < e.tasks else "")),
            Cell(e.mean_at_k, pct(e.mean_at_k)), Cell(e.pass_at_k, pct(e.pass_at_k)),
            Cell(e.pass_all_k, pct(e.pass_all_k)),
            *[Cell(e.per_epoch.get(i), pct(e.per_epoch.get(i))) for i in range(1, k + 1)],
            Cell(None if sd is None else 100 * sd, "–" if sd is None else f"{100 * sd:.1f}"),
        ]))
    _rank(t)
    return t


def cost_table(metrics: Sequence[RunMetrics]) -> Table | None:
    """What each run cost and what the prompt cache and batch APIs saved (docs/cost.md), when priced."""
    priced = [m for m in metrics if m.usage.cost_usd is not None]
    if not priced:
        return None

    def usd(x: float | None, digits: int = 4) -> Cell:
        return Cell(x, "–" if x is None else f"{x:.{digits}f}")

    t = Table("Cost (USD)", ["Model", "Setting"], [
        Column("Cost $", -1), Column("Cost/task $", -1), Column("Judge $"), Column("List cost $"),
        Column("Cache saving $"), Column("Batch saving $"), Column("Saving %"), Column("Cached input %")],
        note="Cost = uncached input × input + cache reads × cached input + cache writes × cache write + output × "
             "output, × (1 − batch discount) for batch calls, judge calls included; list cost = the same tokens "
             "on-line without cache; saving = list cost − cost. Prices: toolsight's table and --prices (docs/cost.md).")
    for m in metrics:
        u = m.usage
        share = u.saving_usd / u.list_cost_usd if u.saving_usd is not None and u.list_cost_usd else None
        cached = u.cache_read_tokens / u.input_tokens if u.input_tokens else None
        t.rows.append((_keys(m), [usd(u.cost_usd), usd(u.cost_per_task_usd, 5), usd(u.judge_cost_usd),
                                  usd(u.list_cost_usd), usd(u.cache_saving_usd), usd(u.batch_saving_usd),
                                  Cell(share, pct(share)), Cell(cached, pct(cached))]))
        if u.unpriced_models:
            t.note += f" {m.label}: no price for {', '.join(u.unpriced_models)} (not in the cost)."
    return t


def error_category_table(metrics: Sequence[RunMetrics]) -> Table | None:
    """Failed tasks by error category, when a judge classified them (VisualToolBench Table 4)."""
    cats: list[str] = []
    for m in metrics:
        cats.extend(c for c in m.error_categories if c not in cats)
    if not cats:
        return None
    t = Table("Error categories % (failed tasks)", ["Model", "Setting"], [Column("Classified"),
              *[Column(c, 0, True) for c in cats]],
              note="Share of the classified failed tasks per category (an optional judge analysis: a scorer "
                   "that classifies failures, `toolsight score RUN --scorer NAME --judge MODEL`).")
    for m in metrics:
        tot = sum(m.error_categories.values())
        cells = [Cell(float(tot), str(tot))]
        for c in cats:
            share = m.error_categories.get(c, 0) / tot if tot else None
            cells.append(Cell(share, pct(share, 2)))
        t.rows.append((_keys(m), cells))
    return t


def share_table(metrics: Sequence[RunMetrics], top: int = 12) -> Table:
    """Share of calls per tool; the `top` tools overall."""
    shares = [m.tool_use.tool_share for m in metrics]
    tot = _summed(shares)
    names = sorted(tot, key=lambda k: (-tot[k], k))[:top]
    return _shares(Table("Tool-call share %", ["Model", "Setting"], []), metrics, shares, names)


def operation_table(metrics: Sequence[RunMetrics], vocabulary: Vocabulary, top: int = 12) -> Table | None:
    """Share of each label of `vocabulary` among the runs' image operations, titled by the vocabulary.

    The `top` labels overall, shown in the vocabulary's order; None when no run has a labelled
    operation (no tool call, or a run whose metrics were computed without this vocabulary).
    """
    shares = [m.tool_use.operation_share.get(vocabulary.name, {}) for m in metrics]
    if not any(shares):
        return None
    tot = _summed(shares)
    rank = {label: i for i, label in enumerate(vocabulary.order)}

    def position(label: str) -> tuple[int, str]:
        return rank.get(label, len(rank)), label

    names = sorted(sorted(tot, key=lambda k: (-tot[k], *position(k)))[:top], key=position)
    t = Table(vocabulary.title, ["Model", "Setting"], [],
              note="Occurrences of each label / all labelled occurrences (a code call may perform several "
                   "operations, a call without an image operation none); '–' = none in that run.")
    return _shares(t, metrics, shares, names)


def _summed(shares: Sequence[dict[str, float]]) -> dict[str, float]:
    tot: dict[str, float] = {}
    for share in shares:
        for k, v in share.items():
            tot[k] = tot.get(k, 0.0) + v
    return tot


def _shares(t: Table, metrics: Sequence[RunMetrics], shares: Sequence[dict[str, float]], names: list[str]) -> Table:
    t.columns = [Column(n, 0, True) for n in names]
    for m, share in zip(metrics, shares, strict=True):
        t.rows.append((_keys(m), [Cell(share.get(n), pct(share.get(n))) for n in names]))
    return t


def agreement_table(metrics: Sequence[RunMetrics]) -> Table | None:
    if not any(m.agreement for m in metrics):
        return None
    t = Table("Judge–human agreement %", ["Model", "Setting"],
              [Column("Pairs"), Column("Overall", 0, True), Column("Objective", 0, True),
               Column("Subjective", 0, True), Column("Cohen's κ")])
    for m in metrics:
        a = m.agreement
        if a is None:
            t.rows.append((_keys(m), [Cell(None, "–") for _ in t.columns]))
            continue
        t.rows.append((_keys(m), [Cell(float(a.n), str(a.n)), _est_cell(a.overall), _est_cell(a.objective),
                                  _est_cell(a.subjective), Cell(a.kappa, num(a.kappa))]))
    return t


# ---- rendering ---------------------------------------------------------------------------------
_MD_SPECIAL = str.maketrans({
    "|": "\\|", "\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_",
    "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " ",
})


def md_escape(s: str) -> str:
    """Text for a markdown table cell: no markup, HTML or line break from a model- or tool-supplied string."""
    # `[text](url)` and `![alt](src)` need "](": breaking it keeps brackets readable in "[95% CI]"
    return s.translate(_MD_SPECIAL).replace("](", "]\\(")


def _md_escape(s: str) -> str:
    return md_escape(s)


def to_markdown(t: Table) -> str:
    head = [*t.key_columns, *[c.name for c in t.columns]]
    lines = [f"### {t.title}", "", "| " + " | ".join(_md_escape(h) for h in head) + " |",
             "|" + "|".join(["---"] * len(t.key_columns) + ["---:"] * len(t.columns)) + "|"]
    for keys, cells in t.rows:
        out = [_md_escape(k) for k in keys]  # no viewer links: the md report is read in terminals too
        for c in cells:
            s = _md_escape(c.text)
            if c.mark == "best":
                s = f"**{s}**"
            elif c.mark == "second":
                s = f"<u>{s}</u>"
            out.append(s)
        lines.append("| " + " | ".join(out) + " |")
    if t.note:
        lines += ["", f"*{t.note}*"]
    return "\n".join(lines) + "\n"


def to_html(t: Table) -> str:
    import html  # here: its entity tables (~0.3 MB) are for HTML reports, not the markdown one `toolsight run` prints

    e = html.escape
    # the wrapper scrolls sideways: a wide table (many tools) never overflows the page
    parts = [f"<h3>{e(t.title)}</h3>", "<div class='table-wrap'><table class='ts'>", "<thead><tr>"]
    parts += [f"<th>{e(h)}</th>" for h in t.key_columns]
    parts += [f"<th class='num'>{e(c.name)}</th>" for c in t.columns]
    parts.append("</tr></thead><tbody>")
    for r, (keys, cells) in enumerate(t.rows):
        texts = [e(k) for k in keys]
        if (r, -1) in t.links:
            texts[-1] = f"<a class='viewer' href='{e(t.links[(r, -1)])}'>{texts[-1]}</a>"
        parts.append("<tr>" + "".join(f"<td>{k}</td>" for k in texts))
        for ci, c in enumerate(cells):
            cls = f"num {c.mark}".strip()
            text = e(c.text)
            if (r, ci) in t.links:
                text = f"<a class='viewer' href='{e(t.links[(r, ci)])}'>{text}</a>"
            parts.append(f"<td class='{cls}'>{text}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table></div>")
    if t.note:
        parts.append(f"<p class='note'>{e(t.note)}</p>")
    return "\n".join(parts)


def to_rows(t: Table) -> list[dict[str, object]]:
    """Long format for CSV / JSON: one row per (run, column)."""
    out: list[dict[str, object]] = []
    for keys, cells in t.rows:
        for col, c in zip(t.columns, cells, strict=True):
            # a "%" column holds percentages here too, as its name (and the md/html text) says
            scale = 100.0 if col.percent else 1.0
            out.append({
                "table": t.title, **dict(zip(t.key_columns, keys, strict=True)), "column": col.name,
                "value": _scaled(c.value, scale), "lo": _scaled(c.lo, scale), "hi": _scaled(c.hi, scale),
                "delta": _scaled(c.delta, scale), "mark": c.mark,
            })
    return out


def _scaled(x: float | None, scale: float) -> float | None:
    return None if x is None else round(x * scale, 10)
