"""Report plots as PNG (matplotlib, Agg backend): accuracy vs proactivity, tool shares, chain lengths."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolsight.metrics.compute import RunMetrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend, imported when a plot is drawn: ~25 MB and ~0.5 s that
    a report without plots (the markdown report `toolsight run` prints) does not pay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot

PLOTS = ("accuracy_vs_proactivity.png", "tool_share.png", "chain_lengths.png")


def _label(m: RunMetrics) -> str:
    return f"{m.model} · {m.setting}"


def accuracy_vs_proactivity(metrics: Sequence[RunMetrics], path: Path) -> Path:
    """One point per run: x = tool-call rate (TCR), y = score, with 95% CI error bars."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5), dpi=100)
    for m in metrics:
        x, y = m.tool_use.proactivity.value, m.overall.score.value
        if x is None or y is None:
            continue
        lo, hi = m.overall.score.lo, m.overall.score.hi
        yerr = [[100 * (y - lo)], [100 * (hi - y)]] if lo is not None and hi is not None else None
        ax.errorbar(100 * x, 100 * y, yerr=yerr, fmt="o", capsize=3)
        ax.annotate(_label(m), (100 * x, 100 * y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel("Tool-call rate (TCR, %)")
    ax.set_ylabel("Score (%)")
    ax.set_xlim(-5, 105)
    ax.set_ylim(-5, 105)
    ax.grid(alpha=0.3)
    ax.set_title("Accuracy vs proactivity")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def tool_share_figure(metrics: Sequence[RunMetrics], top: int = 12) -> Figure:
    """The tool-share bars as a figure: for each tool, one bar per run that made tool calls,
    centred on the tool's label. Runs without tool calls get no (empty) slot — an empty slot
    pushed the visible bars off their label — and are named in the legend title instead."""
    tot: Counter[str] = Counter()
    for m in metrics:
        tot.update(m.tool_use.tool_counts)
    names = [n for n, _ in tot.most_common(top)] or ["(no tool calls)"]
    drawn = [m for m in metrics if m.tool_use.calls]
    idle = [m for m in metrics if not m.tool_use.calls]
    k = max(1, len(drawn))
    plt = _pyplot()
    fig: Figure
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(names) * k ** 0.5 + 1.5), dpi=100)
    h = 0.8 / k
    for i, m in enumerate(drawn):
        vals = [100 * m.tool_use.tool_share.get(n, 0.0) for n in names]
        ys = [j + (i - (k - 1) / 2) * h for j in range(len(names))]
        ax.barh(ys, vals, height=h, label=_label(m), color=f"C{metrics.index(m)}")
    ax.set_yticks(list(range(len(names))))
    ax.set_yticklabels(names, fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.5)  # first (most used) tool on top
    ax.set_xlabel("Share of tool calls (%)")
    ax.set_title("Tool-call share")
    title = ("no tool calls: " + ", ".join(_label(m) for m in idle)) if idle else None
    if drawn:
        ax.legend(fontsize=7, title=title, title_fontsize=7)
    elif title:  # nothing drawn: a legend would have no entries (and matplotlib warns)
        ax.text(0.5, 0.5, title, ha="center", va="center", fontsize=8, transform=ax.transAxes)
    fig.tight_layout()
    return fig


def tool_share_bars(metrics: Sequence[RunMetrics], path: Path, top: int = 12) -> Path:
    """Grouped horizontal bars: share of calls per tool, one bar colour per run."""
    fig = tool_share_figure(metrics, top)
    fig.savefig(path)
    _pyplot().close(fig)
    return path


def chain_length_distribution(metrics: Sequence[RunMetrics], path: Path) -> Path:
    """Share of tasks per effective chain length, per run, against the reference chain lengths."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    maxlen = 1
    for m in metrics:
        d = m.distributions
        maxlen = max([maxlen, *d.effective_lengths, *d.reference_lengths])
    xs = list(range(maxlen + 1))
    ref: Counter[int] = Counter()
    for m in metrics:
        ref.update(m.distributions.reference_lengths)
        break  # the reference is the same dataset's for every run; take the first that has it
    if ref:
        n = sum(ref.values())
        ax.bar(xs, [100 * ref.get(x, 0) / n for x in xs], color="lightgray", label="reference", width=0.8)
    for m in metrics:
        c = Counter(m.distributions.effective_lengths)
        n = sum(c.values())
        if n:
            ax.plot(xs, [100 * c.get(x, 0) / n for x in xs], marker="o", label=f"{_label(m)} (effective)")
    ax.set_xlabel("Chain length (tool calls)")
    ax.set_ylabel("Share of tasks (%)")
    ax.set_xticks(xs)
    ax.set_title("Effective chain length vs reference")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_plots(metrics: Sequence[RunMetrics], out_dir: Path) -> list[Path]:
    """All report plots into `out_dir`; returns their paths (order of PLOTS). Every plot is about
    tool use: none for no runs (the report passes the runs whose setting offered tools)."""
    made: list[Path] = []
    if not metrics:
        return made
    out_dir.mkdir(parents=True, exist_ok=True)
    draw = (accuracy_vs_proactivity, tool_share_bars, chain_length_distribution)
    for name, fn in zip(PLOTS, draw, strict=True):
        # drawn under a temp name and renamed: a killed report never leaves half a PNG
        tmp = out_dir / f".{name}.partial{Path(name).suffix}"
        fn(metrics, tmp)
        made.append(tmp.replace(out_dir / name))
    return made
