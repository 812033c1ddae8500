"""A self-contained HTML report of a results folder.

One file, no network needed to view it: the CSS is inline and every plot is drawn by
matplotlib's SVG canvas (no pyplot state, no backend switch) and embedded as inline SVG
whose text stays text. Each configuration keeps one colour in every figure and table.
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import math
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from kbench import __version__
from kbench.analysis.compare import Comparison
from kbench.analysis.groups import RankGroup, experiment_groups
from kbench.core.errors import ResultsError
from kbench.core.fileio import atomic_write_text
from kbench.results.degenerate import LEGEND
from kbench.results.store import Results

PALETTE = [
    "#3b6fb6",
    "#e07b39",
    "#3a9d5d",
    "#c8423b",
    "#8062b3",
    "#8c6d4f",
    "#d36fae",
    "#6f7782",
    "#b5a33a",
    "#35a7c2",
    "#1f4e8c",
    "#f2b134",
    "#2e7d4f",
    "#9b2d30",
    "#5b3f8c",
    "#c49a6c",
]
"""Colours of the configurations, in display order (colour-blind-safe where it matters:
the first four differ in hue and lightness)."""

STANDARD_TRACE_COLUMNS = {
    "task_id",
    "stream_id",
    "epoch",
    "seen",
    "mistakes",
    "online_error",
    "time_s",
    "labels_queried",
    "peak_memory",
    "test_error",
    "test_n",
    "test_constant",
    "n_support",
    "kernel_evals",
    "model_bytes",
    "eta",
}
"""Trace columns every report draws (or deliberately leaves out); any other numeric column
an algorithm reports through ``stats()`` gets a panel of its own."""

STATUS_COLOURS = {
    "ok": "#2e7d4f",
    "error": "#c8423b",
    "timeout": "#d98c1f",
    "diverged": "#8062b3",
    "memory": "#9b2d30",
}


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


def _mpl() -> Any:
    """matplotlib's Figure class, configured for report figures (imported on first use)."""
    import matplotlib

    matplotlib.rcParams.update(
        {
            "font.size": 9.5,
            "axes.titlesize": 10.5,
            "axes.titleweight": "bold",
            "axes.labelsize": 9.5,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.edgecolor": "#8a929c",
            "axes.grid": True,
            "grid.color": "#e6e9ee",
            "grid.linewidth": 0.8,
            "axes.axisbelow": True,
            "xtick.color": "#4a525c",
            "ytick.color": "#4a525c",
            "axes.labelcolor": "#2d333a",
            "legend.frameon": False,
            "figure.facecolor": "white",
            "savefig.facecolor": "white",
        }
    )
    from matplotlib.figure import Figure

    return Figure


def _svg(fig: Any, tight: bool = True) -> str:
    """A figure as inline SVG markup, its text kept as text.

    Text stays ``<text>`` (not paths), so the page can be searched and copied, and a
    browser can measure every label (the report's tests check that no two overlap).
    ``tight`` crops to the drawn content, at the cost of a second draw.
    """
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    FigureCanvasSVG(fig)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kbench"}):
        fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None, pad_inches=0.12)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _x_of(traces: pd.DataFrame, n: float) -> pd.Series:
    """Examples seen since the start, across epochs."""
    x = traces["seen"].astype(float)
    if "epoch" in traces.columns and pd.notna(n):
        x = x + (traces["epoch"].fillna(1).astype(float) - 1) * float(n)
    return x


def _band(traces: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Mean, min and max of ``y`` over the runs, at each value of ``x``."""
    d = traces[[x, y]].dropna()
    if d.empty:
        return pd.DataFrame(columns=["x", "mean", "lo", "hi", "runs"])
    g = d.groupby(x)[y]
    out = pd.DataFrame({"mean": g.mean(), "lo": g.min(), "hi": g.max(), "runs": g.size()})
    out.index.name = "x"
    return out.reset_index()


def _percent_axis(ax: Any, which: str = "y") -> None:
    """Error rates as percentages, with as many decimals as the axis range needs."""
    from matplotlib.ticker import PercentFormatter

    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_formatter(PercentFormatter(xmax=1.0))


def _zoom(ax: Any, bands: list[pd.DataFrame], x_cut: float, floor_zero: bool = True) -> None:
    """Fit the y axis to the curves after the first few examples, where errors are 0 or 1."""
    lows, highs = [], []
    for b in bands:
        part = b[b["x"] >= x_cut] if (b["x"] >= x_cut).any() else b
        if len(part):
            lows.append(part["lo"].min())
            highs.append(part["hi"].max())
    if not lows:
        return
    lo, hi = float(min(lows)), float(max(highs))
    pad = 0.08 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-3)
    bottom = lo - pad
    if floor_zero:
        bottom = max(0.0, bottom)
    ax.set_ylim(bottom, hi + pad)


def curves_figure(
    stream: str,
    runs: pd.DataFrame,
    traces: pd.DataFrame,
    colours: dict[str, str],
    task: str,
    references: Sequence[Mapping[str, Any]] = (),
) -> tuple[str | None, list[str]]:
    """The curves of one data set, over seeds: one panel per quantity the traces hold.

    Parameters
    ----------
    stream
        Stream label (data set with its options).
    runs
        Finished runs of this data set (with ``label``, ``n``, ``offline``).
    traces
        Trace rows of these runs.
    colours
        Label → colour.
    task
        The stream's task (regression errors are not percentages).
    references
        Published values to mark: mappings with ``metric`` (a trace column such as
        ``online_error``, ``test_error`` or ``n_support``), ``value`` and ``label``; each is
        drawn as a dotted black line on the panels of that metric, with its label.

    Returns
    -------
    tuple
        The PNG data URI (None when there is nothing to draw) and the panel titles.
    """
    online = runs[~runs["offline"]]
    tr = traces[traces["task_id"].isin(online["task_id"])].copy()
    if tr.empty:
        return None, []
    n_of = online.set_index("task_id")["n"]
    tr["x"] = (
        _x_of(tr, np.nan)
        if "epoch" not in tr.columns
        else tr["seen"].astype(float)
        + (tr["epoch"].fillna(1).astype(float) - 1) * tr["task_id"].map(n_of).astype(float)
    )
    tr["label"] = tr["task_id"].map(online.set_index("task_id")["label"])
    order = [lab for lab in colours if lab in set(tr["label"])]
    regression = task == "regression"
    err_name = "mean squared error" if regression else "error rate"
    numeric = [  # other statistics an algorithm reports; a constant one tells nothing
        c
        for c in tr.columns
        if c not in STANDARD_TRACE_COLUMNS | {"x", "label"}
        and pd.api.types.is_numeric_dtype(tr[c])
        and tr[c].nunique(dropna=True) > 1
    ]

    def has(col: str) -> bool:
        return col in tr.columns and tr[col].notna().any()

    panels: list[tuple[str, str, str, str, bool]] = [  # title, x, y, y label, log y
        (f"Online {err_name} (prequential)", "x", "online_error", f"online {err_name}", False)
    ]
    if has("test_error"):
        panels.append((f"Held-out {err_name}", "x", "test_error", f"held-out {err_name}", False))
    if has("time_s"):
        panels.append(
            (
                f"Online {err_name} vs learner time",
                "time_s",
                "online_error",
                f"online {err_name}",
                False,
            )
        )
    if has("n_support"):
        panels.append(("Model size", "x", "n_support", "support vectors", False))
    if has("time_s"):
        panels.append(("Learner time", "x", "time_s", "cumulative learner time (s)", True))
    if has("eta"):
        panels.append(("Step size η", "x", "eta", "η", True))
    if (
        has("labels_queried")
        and (tr["labels_queried"] < tr["seen"]).any()
        and (tr["labels_queried"] > 0).any()
    ):
        panels.append(("Labels queried", "x", "labels_queried", "labels queried", False))
    for c in numeric:
        panels.append((c.replace("_", " ").capitalize(), "x", c, c.replace("_", " "), False))
    if not has("n_support") and has("model_bytes"):
        panels.append(("Model size", "x", "model_bytes", "model bytes", True))

    Figure = _mpl()
    from matplotlib.ticker import NullLocator

    ncols = 3 if len(panels) > 4 else 2 if len(panels) > 1 else 1
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(figsize=(4.1 * ncols, 3.0 * nrows + 0.45))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    max_n = float(online["n"].max()) if online["n"].notna().any() else float(tr["x"].max())
    x_cut = max(10.0, max_n**0.3)
    offline = runs[runs["offline"]]
    for ax, (title, xcol, ycol, ylabel, logy) in zip(axes.flat, panels, strict=False):
        bands = []
        for lab in order:
            sub = tr[tr["label"] == lab]
            if xcol == "time_s":
                # Runs have different clocks: average error and time at each checkpoint.
                g = sub.groupby("x")[["time_s", ycol]].mean().dropna()
                g = g[(g["time_s"] > 0) & (g.index >= x_cut)]
                if len(g):
                    ax.plot(g["time_s"], g[ycol], color=colours[lab], lw=1.8)
                    bands.append(
                        pd.DataFrame(
                            {"x": g["time_s"], "mean": g[ycol], "lo": g[ycol], "hi": g[ycol]}
                        )
                    )
                continue
            b = _band(sub, "x", ycol)
            if ycol in ("online_error", "test_error"):
                b = b[
                    b["x"] >= x_cut
                ]  # before a few examples every error is 0 or 1: noise, not signal
            if b.empty:
                continue
            if logy:
                b = b[b["mean"] > 0]
            ax.plot(b["x"], b["mean"], color=colours[lab], lw=1.8)
            if (b["runs"] > 1).any():
                ax.fill_between(b["x"], b["lo"], b["hi"], color=colours[lab], alpha=0.16, lw=0)
            bands.append(b)
        if ycol in ("online_error", "test_error") and len(offline):
            for _, r in offline.iterrows():
                val = (
                    r.get("test_error")
                    if ycol == "test_error" and pd.notna(r.get("test_error"))
                    else r.get("online_error")
                )
                if pd.notna(val):
                    ax.axhline(val, color=colours.get(r["label"], "#555"), lw=1.3, ls="--")
        for ref in references:
            if ref.get("metric") == ycol and xcol != "time_s":
                # A paper's number is a level to compare against, not a curve: a dotted line.
                ax.axhline(float(ref["value"]), color="black", lw=1.0, ls=":")
                ax.annotate(
                    str(ref.get("label", "paper")),
                    xy=(0.01, float(ref["value"])),
                    xycoords=("axes fraction", "data"),
                    fontsize=7,
                    va="bottom",
                )
                bands.append(
                    pd.DataFrame(
                        {
                            "x": [np.nan],
                            "mean": [ref["value"]],
                            "lo": [ref["value"]],
                            "hi": [ref["value"]],
                        }
                    )
                )
        ax.set_xscale("log")
        # The x labels start below the reach of a y label sitting on the axis' bottom
        # corner, so the two never overlap whatever ticks the data give.
        ax.tick_params(axis="x", pad=7)
        # Unlabelled minor ticks of log axes cost most of the drawing time and show nothing.
        ax.xaxis.set_minor_locator(NullLocator())
        if logy:
            ax.set_yscale("log")
            _log_ticks(ax, bands)
        ax.set_title(title, loc="left")
        ax.set_xlabel("learner time (s)" if xcol == "time_s" else "examples seen")
        ax.set_ylabel(ylabel)
        if ycol in ("online_error", "test_error"):
            _zoom(ax, bands, 0.0, floor_zero=True)
            if not regression:
                _percent_axis(ax)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Line2D([0], [0], color=colours[lab], lw=2.4, label=lab) for lab in order]
    handles += [
        Line2D(
            [0],
            [0],
            color=colours.get(lab, "#555"),
            lw=1.4,
            ls="--",
            label=f"{lab} (offline reference)",
        )
        for lab in offline["label"].unique()
    ]
    seeds = online.groupby("label")["seed"].nunique().max()
    if seeds and seeds > 1:
        handles.append(
            Patch(
                color="#9aa3ad", alpha=0.35, label=f"band: min–max over {seeds} seeds; line: mean"
            )
        )
    # The legend sits above the panels, inside the figure: as many columns as fit the
    # figure's width (measured, not guessed), long labels wrapped, and the panels moved
    # down by the legend's measured height.
    for handle in handles:
        handle.set_label(_wrap(handle.get_label(), 70))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # measures text as _svg will lay it out
    fig_w = fig.get_figwidth() * fig.dpi
    for ncol in range(min(len(handles), 3), 0, -1):
        legend = fig.legend(
            handles=handles,
            loc="upper left",
            ncol=ncol,
            bbox_to_anchor=(0.005, 0.995),
            fontsize=9,
            handlelength=2.2,
            columnspacing=1.4,
        )
        extent = legend.get_window_extent(renderer)
        if extent.width <= 0.985 * fig_w or ncol == 1:
            break
        legend.remove()
    legend_in = extent.height / fig.dpi + 0.1
    # A fixed layout: tight_layout would measure every tick label of every log axis again.
    height = fig.get_figheight()
    total = height + legend_in
    fig.set_figheight(total)
    fig.subplots_adjust(
        left=0.065 if ncols == 3 else 0.09,
        right=0.985,
        bottom=0.5 / total,
        top=1 - (legend_in + 0.3) / total,
        wspace=0.3,
        hspace=0.5,
    )
    return _svg(fig, tight=False), [p[0] for p in panels]


def _log_ticks(ax: Any, bands: list[pd.DataFrame]) -> None:
    """Plain numbers on a log y axis, with 1-2-5 ticks when the curves span few decades."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    vals = pd.concat([b["mean"] for b in bands]) if bands else pd.Series(dtype=float)
    vals = vals[vals > 0]
    if len(vals) and np.log10(vals.max() / vals.min()) < 2.5:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


def _diverging_cmap() -> Any:
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(
        "kbench_div", ["#b8322e", "#e98f7a", "#f7f7f5", "#86c79a", "#23834a"]
    ).with_extremes(bad="#eceef1")


def pair_matrix_figure(
    seeds: pd.DataFrame, labels: Sequence[str], regression: bool, alpha: float
) -> str | None:
    """Row-against-column matrix of one data set: mean error difference over the seeds and
    the Holm-adjusted p of the exact signed-rank test over the seeds.

    Colour: green where the row configuration makes significantly fewer errors, red where
    it makes more; the saturation grows with −log10 of the adjusted p-value.
    """
    if seeds.empty:
        return None
    present = [lab for lab in labels if lab in set(seeds["a"]) | set(seeds["b"])]
    k = len(present)
    if k < 2:
        return None
    pos = {lab: i for i, lab in enumerate(present)}
    score = np.full((k, k), np.nan)
    text = [["" for _ in range(k)] for _ in range(k)]
    for r in seeds.itertuples():
        i, j = pos[r.a], pos[r.b]
        p, diff = r.p_holm, r.mean_diff
        strength = min(-math.log10(max(p, 1e-300)), 6.0) / 6.0 if pd.notna(p) else 0.0
        signif = pd.notna(p) and p < alpha
        s = strength if signif else 0.25 * strength
        for ii, jj, sign in ((i, j, 1), (j, i, -1)):
            d = sign * diff
            score[ii, jj] = -np.sign(d) * s
            dtxt = f"{d:+.3g}" if regression else f"{100 * d:+.2f} pp"
            ptxt = (
                "no test"
                if r.result == "n/a" or pd.isna(p)
                else "p<1e-16"
                if p < 1e-16
                else f"p={p:.2g}"
            )
            text[ii][jj] = f"{dtxt}\n{ptxt}"
    Figure = _mpl()
    fig = Figure(figsize=_matrix_size(present))
    ax = fig.subplots()
    masked = np.ma.masked_invalid(score)
    cmap = _diverging_cmap()
    ax.imshow(masked, cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    fs = 9 if k <= 4 else 8 if k <= 6 else 6.5
    for i in range(k):
        for j in range(k):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#9aa3ad", fontsize=fs)
            else:
                strong = abs(score[i, j]) > 0.6
                ax.text(
                    j,
                    i,
                    text[i][j],
                    ha="center",
                    va="center",
                    fontsize=fs,
                    linespacing=1.35,
                    color="white" if strong else "#1f2429",
                    fontweight="bold" if strong else "normal",
                )
    _matrix_axes(ax, present, labels)
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    ax.grid(False)
    for sp in ax.spines.values():
        sp.set_visible(False)
    ax.set_xticks(np.arange(-0.5, k, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, k, 1), minor=True)
    ax.grid(which="minor", color="white", lw=2.5)
    ax.tick_params(which="minor", length=0)
    ax.xaxis.tick_top()
    return _svg(fig)


def _wrap(label: str, width: int = 18) -> str:
    """Break a long configuration label before its bracket and after commas."""
    if len(label) <= width:
        return label
    out, line = [], ""
    for part in label.replace(",", ",\u0000").replace("[", "\u0000[").split("\u0000"):
        if line and len(line) + len(part) > width:
            out.append(line)
            line = part
        else:
            line += part
    out.append(line)
    return "\n".join(out)


def _matrix_axes(ax: Any, present: Sequence[str], labels: Sequence[str]) -> None:
    """Tick labels of a configuration matrix: rows carry the configuration's number (its
    row in the summary table) and its wrapped label, columns the number alone, so no two
    labels can collide however long they are."""
    number = {lab: i + 1 for i, lab in enumerate(labels)}
    k = len(present)
    ax.set_xticks(range(k), [str(number.get(lab, "?")) for lab in present], fontsize=9)
    ax.set_yticks(
        range(k), [f"{number.get(lab, '?')}  {_wrap(lab, 30)}" for lab in present], fontsize=8
    )


def _matrix_size(present: Sequence[str]) -> tuple[float, float]:
    """Figure size (inches) of a k × k configuration matrix: columns wide enough for the
    cell text, rows tall enough for the longest wrapped row label."""
    k = len(present)
    lines = max(_wrap(lab, 30).count("\n") + 1 for lab in present)
    cell_w = 1.0 if k <= 6 else 0.82
    cell_h = max(0.62 * cell_w, 0.15 * lines + 0.12)
    label_w = 0.075 * max(len(line) for lab in present for line in _wrap(lab, 30).split("\n"))
    return label_w + 0.6 + cell_w * k, 0.8 + cell_h * k


def _wtl_figures(cmp: Comparison, groups: Sequence[RankGroup]) -> str | None:
    """The win/tie/loss matrix, one per experiment group when the study has several (pairs
    across groups never met on a stream)."""
    if len(groups) <= 1:
        return wtl_figure(cmp.wtl, cmp.labels)
    figs = []
    for g in groups:
        members = set(g.values.columns) | set(g.mean_ranks.index)
        sub = cmp.wtl[cmp.wtl["a"].isin(members) & cmp.wtl["b"].isin(members)]
        fig = wtl_figure(sub, cmp.labels, title=g.name) if len(sub) else None
        if fig:
            figs.append(fig)
    return "".join(figs) or None


def wtl_figure(wtl: pd.DataFrame, labels: Sequence[str], title: str = "") -> str | None:
    """Win/tie/loss over every stream as a heatmap (row against column)."""
    present = [lab for lab in labels if lab in set(wtl["a"])]
    k = len(present)
    if k < 2:
        return None
    pos = {lab: i for i, lab in enumerate(present)}
    score = np.full((k, k), np.nan)
    text = [["" for _ in range(k)] for _ in range(k)]
    for r in wtl.itertuples():
        if r.a in pos and r.b in pos:
            tot = r.wins + r.ties + r.losses
            score[pos[r.a], pos[r.b]] = (r.wins - r.losses) / tot if tot else 0.0
            text[pos[r.a]][pos[r.b]] = f"{r.wins} / {r.ties} / {r.losses}"
    Figure = _mpl()
    fig = Figure(figsize=_matrix_size(present))
    ax = fig.subplots()
    cmap = _diverging_cmap()
    ax.imshow(np.ma.masked_invalid(score), cmap=cmap, vmin=-1, vmax=1, aspect="auto")
    fs = 10 if k <= 4 else 8.5 if k <= 6 else 7
    for i in range(k):
        for j in range(k):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#9aa3ad", fontsize=fs)
            elif text[i][j]:
                ax.text(
                    j,
                    i,
                    text[i][j],
                    ha="center",
                    va="center",
                    fontsize=fs,
                    color="white" if abs(score[i, j]) > 0.6 else "#1f2429",
                )
    _matrix_axes(ax, present, labels)
    ax.xaxis.tick_top()
    if title:
        ax.set_title(_wrap(title, 60), loc="left", pad=22)
    ax.grid(False)
    ax.tick_params(length=0)
    for sp in ax.spines.values():
        sp.set_visible(False)
    ax.set_xticks(np.arange(-0.5, k, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, k, 1), minor=True)
    ax.grid(which="minor", color="white", lw=2.5)
    ax.tick_params(which="minor", length=0)
    return _svg(fig)


def cd_figure(
    mean_ranks: pd.Series,
    cd: float,
    groups: list[list[str]],
    colours: dict[str, str],
    n_datasets: int,
) -> str | None:
    """Critical-difference diagram (Demšar 2006): mean ranks on an axis, the CD bar, and
    thick bars joining configurations the Nemenyi test does not separate."""
    k = len(mean_ranks)
    if k < 2 or not np.isfinite(cd):
        return None
    Figure = _mpl()
    ranks = mean_ranks.sort_values()
    names = list(ranks.index)
    half = math.ceil(k / 2)
    # Units are inches (the axes fill the figure), so the text spacing below is physical:
    # each label gets the height of its wrapped lines, whatever k and the label lengths.
    texts = [_wrap(str(name), 34) for name in names]
    heights = [0.17 * (t.count("\n") + 1) + 0.1 for t in texts]
    group_gap = 0.16 * len(groups)
    ys: list[float] = [0.0] * k
    for side in (range(half), range(k - 1, half - 1, -1)):  # best from the top; worst too
        y = -(0.3 + group_gap)
        for i in side:
            y -= heights[i] / 2
            ys[i] = y
            y -= heights[i] / 2
    bottom = min(ys) - max(heights) / 2 - 0.1
    width = 9.6
    fig = Figure(figsize=(width, 0.75 - bottom))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    lo, hi = 1.0, float(max(k, 2))
    margin = 0.24 * (hi - lo + 1)  # room either side for the label ends of the leader lines
    ax.set_xlim(lo - margin, hi + margin)
    ax.set_ylim(bottom, 0.75)
    top = 0.0
    ax.hlines(top, lo, hi, color="#2d333a", lw=1.2)
    for t in range(1, k + 1):
        ax.vlines(t, top, top + 0.07, color="#2d333a", lw=1.0)
        ax.text(t, top + 0.11, str(t), ha="center", va="bottom", fontsize=9, color="#2d333a")
    for t in np.arange(1.5, k, 1.0):
        ax.vlines(t, top, top + 0.04, color="#2d333a", lw=0.7)
    # The CD bar, drawn from rank 1.
    ax.hlines(top + 0.45, lo, lo + cd, color="#c8423b", lw=2.0)
    for xx in (lo, lo + cd):
        ax.vlines(xx, top + 0.40, top + 0.50, color="#c8423b", lw=1.5)
    ax.text(
        lo + cd / 2,
        top + 0.52,
        f"CD = {cd:.2f}",
        ha="center",
        va="bottom",
        fontsize=9,
        color="#c8423b",
    )
    for i, name in enumerate(names):
        r = float(ranks[name])
        left = i < half
        y = ys[i]
        x_end = lo - 0.15 if left else hi + 0.15
        colour = colours.get(str(name), "#2d333a")
        ax.plot([r, r, x_end], [top, y, y], color=colour, lw=1.6, solid_joinstyle="miter")
        ax.plot([r], [top], "o", color=colour, ms=5.5, zorder=5)
        ax.text(
            x_end + (-0.06 if left else 0.06),
            y,
            f"{texts[i]}  ({r:.2f})" if left else f"({r:.2f})  {texts[i]}",
            ha="right" if left else "left",
            va="center",
            fontsize=9,
            linespacing=1.25,
            color="#1f2429",
        )
    for gi, g in enumerate(groups):
        rs = [float(ranks[x]) for x in g if x in ranks.index]
        if len(rs) < 2:
            continue
        y = -(0.14 + 0.16 * gi)
        ax.hlines(
            y, min(rs) - 0.05, max(rs) + 0.05, color="#2d333a", lw=4.0, capstyle="round", zorder=6
        )
    return _svg(fig)


def overview_figure(
    lb: pd.DataFrame,
    labels: Sequence[str],
    colours: dict[str, str],
    stream_names: dict[str, str],
    metric: str,
) -> str | None:
    """Dot plots, one panel per data set: each configuration's mean error and its spread.

    Each panel has its own x axis, so error rates and mean squared errors never share one.
    """
    ok = lb[lb["seeds"] > 0]
    if ok.empty:
        return None
    streams = list(dict.fromkeys(ok["stream"]))
    col = "test_error" if metric == "test_error" else "online_error"
    from matplotlib.ticker import MaxNLocator

    # Each panel lists the configurations that ran on its data set, with their own labels
    # (a study may run other configurations on each data set); a row is as tall as its
    # wrapped label.
    drawn = {
        s: [lab for lab in labels if lab in set(ok.loc[ok["stream"] == s, "label"])]
        for s in streams
    }
    wrapped = {lab: _wrap(lab, 34) for lab in labels}
    row_h = {s: [0.15 * (wrapped[lab].count("\n") + 1) + 0.09 for lab in drawn[s]] for s in streams}
    ncols = 1 if len(streams) == 1 else 2
    nrows = math.ceil(len(streams) / ncols)
    heights = [
        max(sum(row_h[s]) for s in streams[r * ncols : (r + 1) * ncols]) + 0.75
        for r in range(nrows)
    ]
    Figure = _mpl()
    fig = Figure(figsize=(5.0 * ncols + 0.4, sum(heights) + 0.3))
    grid = fig.add_gridspec(nrows, ncols, height_ratios=heights)
    for i, s in enumerate(streams):
        ax = fig.add_subplot(grid[i // ncols, i % ncols])
        sub = ok[ok["stream"] == s].set_index("label")
        # Row centres in inches from the top, so tall labels get tall rows.
        edges = np.concatenate([[0.0], np.cumsum(row_h[s])])
        centres = (edges[:-1] + edges[1:]) / 2
        for y, lab in zip(centres, drawn[s], strict=True):
            r = sub.loc[lab]
            use = col if pd.notna(r[col]) else "online_error"
            v, sd = r[use], r[f"{use}_sd"]
            if pd.notna(sd) and sd > 0:
                ax.hlines(y, v - sd, v + sd, color=colours[lab], lw=2.4, alpha=0.5)
            ax.plot(
                [v],
                [y],
                "o",
                color=colours[lab],
                ms=7.5,
                zorder=4,
                markeredgecolor="white",
                markeredgewidth=0.8,
            )
        ax.set_ylim(edges[-1], 0.0)
        ax.set_yticks(centres, [wrapped[lab] for lab in drawn[s]], fontsize=8.5)
        ax.grid(axis="y", visible=False)
        ax.set_title(_wrap(stream_names.get(s, s), 60), loc="left", fontsize=10)
        task = sub["task"].dropna()
        if len(task) and task.iloc[0] != "regression":
            _percent_axis(ax, "x")
        ax.tick_params(axis="y", length=0)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # percentages with decimals are wide
        ax.margins(x=0.12)
    which = "held-out" if col == "test_error" else "online"
    fig.supxlabel(
        f"{which} error: mean over seeds (dot) ± one standard deviation (bar)",
        fontsize=9.5,
        color="#4a525c",
    )
    fig.tight_layout()
    return _svg(fig)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------

CSS = """
:root { --ink:#1f2429; --muted:#5c6570; --line:#e3e7ec; --bg:#f4f6f9; --card:#fff; --accent:#3b6fb6;
        --good:#23834a; --bad:#b8322e; --warn:#b7791f; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
       font: 15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
       "DejaVu Sans", sans-serif; }
header { background: linear-gradient(120deg, #1d2b45 0%, #2c4a7a 100%); color:#fff;
        padding: 28px 0 22px; }
.wrap { max-width: 1280px; margin: 0 auto; padding: 0 28px; }
header h1 { margin:0 0 4px; font-size: 27px; font-weight: 650; letter-spacing: .2px; }
header .sub { color:#c9d6ea; font-size: 14px; }
.chips { display:flex; flex-wrap:wrap; gap:10px; margin-top:16px; }
.chip { background: rgba(255,255,255,.12); border:1px solid rgba(255,255,255,.18);
        border-radius: 10px;
        padding: 7px 14px; font-size: 13px; color:#e8eef8; }
.chip b { display:block; font-size: 20px; color:#fff; font-weight:650; }
nav { position: sticky; top:0; z-index: 5; background: rgba(255,255,255,.96);
        border-bottom:1px solid var(--line);
      backdrop-filter: blur(4px); }
nav .wrap { display:flex; flex-wrap:wrap; gap: 4px 18px; padding-top:9px; padding-bottom:9px;
        font-size: 13.5px; }
nav a { color: var(--accent); text-decoration:none; white-space:nowrap; }
nav a:hover { text-decoration: underline; }
main { padding: 22px 0 40px; }
section.card { background:var(--card); border:1px solid var(--line); border-radius: 14px;
        padding: 20px 24px 22px;
               margin: 0 0 22px; box-shadow: 0 1px 2px rgba(20,30,50,.04); }
h2 { font-size: 20px; margin: 0 0 4px; overflow-wrap: anywhere; }
th.ds { white-space: normal; min-width: 7em; overflow-wrap: anywhere; }
h3 { font-size: 15.5px; margin: 20px 0 8px; color:#2d333a; }
.lede { color: var(--muted); margin: 0 0 14px; font-size: 14px; }
.kv { color: var(--muted); font-size: 13.5px; margin-bottom: 12px; }
.kv span { margin-right: 16px; white-space: nowrap; }
.kv > span { display: inline-block; max-width: 100%; vertical-align: top; }
.kv .mono { white-space: normal; margin-right: 0; }
.kv code { font-size: 12.5px; }
figure { margin: 6px 0 10px; }
figure img, figure svg { max-width: 100%; height: auto; display:block; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; max-width: 980px; }
.grid2 { display:grid; grid-template-columns: minmax(0,1fr) minmax(0,1fr); gap: 22px;
        align-items:start; }
.pairgrid { display:grid; grid-template-columns: minmax(0,auto) minmax(260px,1fr); gap: 26px;
        align-items:center; }
@media (max-width: 1000px) { .grid2, .pairgrid { grid-template-columns: 1fr; } }
.howto { background:#f7f9fb; border:1px solid var(--line); border-radius:10px; padding: 12px 16px;
        font-size: 13.5px;
         color:#3b434c; }
.howto ul { margin: 6px 0 0; padding-left: 18px; } .howto li { margin: 4px 0; }
table { border-collapse: collapse; width: 100%; font-size: 13.5px;
        font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left;
        vertical-align: top; }
th { font-weight: 600; color: #3b434c; background: #f7f9fb; border-bottom: 1px solid #d5dbe2;
        white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
tr:hover td { background: #fafbfd; }
.scroll { overflow-x: auto; }
.sw { display:inline-block; width: 11px; height: 11px; border-radius: 3px; margin-right: 7px;
        vertical-align: -1px; }
.cfg { overflow-wrap: normal; }
td.cfgcol { min-width: 14em; }
.best { font-weight: 700; color: var(--good); }
.rank1 { background: #e7f4ec; } .rank2 { background: #f1f8f3; }
.sd { color: var(--muted); font-size: 12px; }
.flagmark { color: #b7791f; font-weight: 700; }
.badge { display:inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12px;
        font-weight: 600; color:#fff; }
.flag { display:inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px;
        background:#fff4e0;
        color:#8a5a00; border:1px solid #f0d7a6; margin: 1px 2px; }
.win { color: var(--good); font-weight: 600; } .loss { color: var(--bad); font-weight: 600;
        } .tie { color: var(--muted); }
.undecided { color: #8a5a00; font-weight: 600; }
.notes { border-left: 4px solid var(--warn); background: #fffaf0; padding: 10px 16px;
        border-radius: 8px; margin: 0 0 22px; }
.notes li { margin: 3px 0; font-size: 14px; }
.empty { color: var(--muted); font-style: italic; }
details { margin-top: 10px; } summary { cursor: pointer; color: var(--accent); font-size: 14px; }
.nowrap { white-space: nowrap; }
table.meta th { width: 220px; }
.mono { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size: 12.5px; }
footer { color: var(--muted); font-size: 12.5px; text-align:center; padding: 10px 0 30px; }
"""

# A tiny check the browser tests read back: how many figures were drawn, and script errors.
SCRIPT = """
window.addEventListener('error', function () {
  var b = document.documentElement;
  b.setAttribute('data-js-errors', String(+(b.getAttribute('data-js-errors') || 0) + 1));
});
window.addEventListener('load', function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll('figure > svg'));
  document.body.setAttribute('data-figures', String(figs.length));
  var ok = figs.filter(function (f) { var b = f.getBoundingClientRect();
    return b.width > 0 && b.height > 0; });
  document.body.setAttribute('data-figures-drawn', String(ok.length));
});
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _num(v: Any, spec: str = ".3g") -> str:
    if (
        v is None
        or (isinstance(v, float) and not math.isfinite(v))
        or (not isinstance(v, str) and pd.isna(v))
    ):
        return "–"
    return format(v, spec)


def _err(v: Any, regression: bool) -> str:
    if v is None or pd.isna(v):
        return "–"
    return f"{v:.4g}" if regression else f"{100 * v:.2f}%"


def _pval(p: Any) -> str:
    if p is None or pd.isna(p):
        return "–"
    if p < 1e-16:
        return "&lt;1e-16"
    return f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _p_is(p: Any) -> str:
    """``p = 0.012``, or ``p < 1e-16`` below double precision."""
    text = _pval(p)
    return f"p {text}" if text.startswith("&lt;") else f"p = {text}"


def _swatch(label: str, colours: dict[str, str], flags: str = "", reasons: bool = False) -> str:
    # One mark per configuration; its reasons in the tooltip, or spelled out (leaderboards).
    flag = (
        f' <span class="flag" title="degenerate runs: {_e(flags)}">⚠ degenerate'
        + (f": {_e(flags)}" if reasons else "")
        + "</span>"
        if flags
        else ""
    )
    colour = colours.get(label, "#999")
    head, _, tail = _spec(label).partition("<wbr>")
    tail = "<wbr>" + tail if tail else ""
    return (
        # The colour swatch stays on the line of the label's first part.
        f'<span class="cfg"><span class="nowrap"><span class="sw" style="background:{colour}">'
        f"</span>{head}</span>{tail}</span>{flag}"
    )


def _short_name(text: str, width: int = 28) -> str:
    """``text`` cut to ``width`` characters with an ellipsis (the full text goes in a title)."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _spec(spec: Any) -> str:
    """An escaped spec string that may break after its commas."""
    return _e(spec).replace(",", ",<wbr>")


def _img(svg: str | None, alt: str, caption: str = "") -> str:
    """A figure (inline SVG markup from :func:`_svg`) with its caption."""
    if svg is None:
        return ""
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f'<figure role="img" aria-label="{_e(alt)}" data-alt="{_e(alt)}">{svg}{cap}</figure>'


def _slug(text: str, i: int) -> str:
    base = (
        "".join(c if c.isalnum() else "-" for c in text.split("[")[0].lower()).strip("-")
        or "stream"
    )
    return f"ds-{i}-{base}"


def _stream_names(streams: Sequence[str]) -> dict[str, str]:
    """Short display names of stream labels: the data set's name, with only the options
    that tell apart the streams of the same data set (the full label goes in a title)."""
    from kbench.core.specs import parse_spec

    base = {s: str(s).split("[")[0] for s in streams}
    if len(set(base.values())) == len(base):
        return base
    parsed = {}
    for s in streams:
        try:
            parsed[s] = parse_spec(str(s))[1]
        except Exception:  # a label kbench cannot parse: shown in full
            parsed[s] = None
    out = {}
    for s in streams:
        same = [t for t in streams if base[t] == base[s]]
        if len(same) == 1:
            out[s] = base[s]
            continue
        if any(parsed[t] is None for t in same):
            out[s] = str(s)
            continue
        keys = sorted({k for t in same for k in parsed[t]})
        differ = [k for k in keys if len({str(parsed[t].get(k)) for t in same}) > 1]
        opts = ",".join(f"{k}={parsed[s][k]}" for k in differ if k in parsed[s])
        out[s] = f"{base[s]}[{opts}]"
    return out if len(set(out.values())) == len(out) else {s: str(s) for s in streams}


def _failed_table(failed: pd.DataFrame, colours: dict[str, str], with_stream: bool) -> str:
    if failed.empty:
        return ""
    head = (
        "<tr><th>configuration</th>"
        + ("<th>data set</th>" if with_stream else "")
        + "<th class='num'>seed</th><th>status</th><th>reason</th></tr>"
    )
    rows = []
    for r in failed.sort_values(["label", "seed"]).itertuples():
        colour = STATUS_COLOURS.get(str(r.status), "#6f7782")
        rows.append(
            "<tr><td>"
            + _swatch(r.label, colours)
            + "</td>"
            + (f"<td>{_e(r.stream)}</td>" if with_stream else "")
            + f"<td class='num'>{_e(r.seed)}</td>"
            f"<td><span class='badge' style='background:{colour}'>{_e(r.status)}</span></td>"
            f"<td class='mono'>{_e(r.reason)}</td></tr>"
        )
    return f"<div class='scroll'><table>{head}{''.join(rows)}</table></div>"


def _leaderboard_html(board: pd.DataFrame, colours: dict[str, str], regression: bool) -> str:
    has_test = board["test_error"].notna().any()
    head = (
        ["#", "configuration", "seeds", "online error"]
        + (["held-out error"] if has_test else [])
        + ["SVs", "kernel evals", "time (s)", "µs / example", "not finished"]
    )
    rows = []
    best_online = board["online_error"].min()
    best_test = board["test_error"].min() if has_test else None
    for r in board.itertuples():

        def cell(v: Any, sd: Any, best: Any) -> str:
            cls = " best" if pd.notna(v) and best is not None and v == best else ""
            spread = _err(sd, regression) if regression else f"{100 * sd:.2f}"
            sdt = f" <span class='sd'>± {spread}</span>" if pd.notna(sd) else ""
            return f"<td class='num{cls}'>{_err(v, regression)}{sdt}</td>"

        failed = f"<span class='loss'>{_e(r.failed)}</span>" if r.failed else ""
        cells = [
            f"<td class='num'>{'' if pd.isna(r.rank) else int(r.rank)}</td>",
            f"<td>{_swatch(r.label, colours, r.flags, reasons=True)}</td>",
            f"<td class='num'>{r.seeds}</td>",
            cell(r.online_error, r.online_error_sd, best_online),
        ]
        if has_test:
            cells.append(cell(r.test_error, r.test_error_sd, best_test))
        cells += [
            f"<td class='num'>{_num(r.n_support, '.0f')}</td>",
            f"<td class='num'>{_num(r.kernel_evals, '.3g')}</td>",
            f"<td class='num'>{_num(r.time_s, '.3f')}</td>",
            f"<td class='num'>{_num(r.us_per_example, '.2f')}</td>",
            f"<td>{failed}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    ths = "".join(
        f"<th class='{'num' if h not in ('configuration', 'not finished') else ''}'>{h}</th>"
        for h in head
    )
    return f"<div class='scroll'><table><tr>{ths}</tr>{''.join(rows)}</table></div>"


def _td(content: Any, cls: str = "") -> str:
    """A table cell; ``cls`` 'num' right-aligns numbers."""
    return f"<td class='{cls}'>{content}</td>" if cls else f"<td>{content}</td>"


def _head(*names: str) -> str:
    """A header row; a name starting with '#' is a numeric (right-aligned) column."""
    cells = (
        f"<th class='num'>{n[1:]}</th>" if n.startswith("#") else f"<th>{n}</th>" for n in names
    )
    return "<tr>" + "".join(cells) + "</tr>"


def _table(head: str, rows: Sequence[str], cls: str = "") -> str:
    attr = f" class='{cls}'" if cls else ""
    return f"<div class='scroll'><table{attr}>{head}{''.join(rows)}</table></div>"


VERDICT = {
    "win": "<span class='win'>A</span>",
    "loss": "<span class='loss'>B</span>",
    "tie": "<span class='tie'>tie</span>",
    "cannot tell": "<span class='undecided'>cannot tell</span>",
    "n/a": "<span class='undecided'>not available</span>",
}
"""The verdict cell of a pair over seeds (see :data:`kbench.analysis.compare.SEED_VERDICTS`)."""


def _verdict(result: Any, reason: Any = "") -> str:
    """A pair's verdict over seeds, with why there is none where the seeds cannot give one."""
    cell = VERDICT.get(str(result), _e(result))
    if isinstance(reason, str) and reason:
        cell += f"<br><span class='sd'>{_e(reason)}</span>"
    return cell


def _pairs_html(seeds: pd.DataFrame, colours: dict[str, str], regression: bool) -> str:
    """Every pair of one data set: mean errors, the difference over seeds with its t interval,
    seeds won/equal/lost, the Holm-adjusted p of the exact signed-rank test over seeds and the
    verdict, with why there is none where the seeds cannot give one."""
    if seeds.empty:
        return "<p class='empty'>Nothing to pair on this data set.</p>"
    names = ["A", "B", "#error A", "#error B", "#A − B [CI over seeds]", "#seeds A / = / B"]
    names += ["#p over seeds (Holm)", "better"]
    # One reason shared by every pair without a verdict (the usual case: the same seeds and
    # Holm family for all) is said once above the table instead of in every row.
    reasons = seeds["reason"].fillna("") if "reason" in seeds.columns else pd.Series(dtype=str)
    shared = set(reasons[reasons != ""])
    once = len(shared) == 1 and (reasons != "").all()
    lead = (
        f"<p class='kv'><b class='undecided'>No verdict over seeds</b>: "
        f"{_e(next(iter(shared)))}.</p>"
        if once
        else ""
    )
    rows = []
    for r in seeds.itertuples():
        f = (lambda v: f"{v:+.4g}") if regression else (lambda v: f"{100 * v:+.2f}")
        unit = "" if regression else " pp"
        d = f(r.mean_diff) + unit
        if pd.notna(r.ci_low) and pd.notna(r.ci_high):
            d += f" <span class='sd'>[{f(r.ci_low)}, {f(r.ci_high)}]</span>"
        decided = r.result != "n/a"
        cells = [
            _td(_swatch(r.a, colours)),
            _td(_swatch(r.b, colours)),
            _td(_err(r.mean_a, regression), "num"),
            _td(_err(r.mean_b, regression), "num"),
            _td(d, "num"),
            _td(f"{r.a_better} / {r.equal} / {r.b_better}", "num"),
            _td(_pval(r.p_holm) if decided else "–", "num"),
            _td(_verdict(r.result, "" if once else getattr(r, "reason", ""))),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return lead + _table(_head(*names), rows)


def _stream_pairs_html(pairs: pd.DataFrame, colours: dict[str, str], regression: bool) -> str:
    """Every pair on every stream of one data set: a description conditional on that stream
    order (errors, discordant examples, difference), no test (docs/statistics.md)."""
    if pairs.empty:
        return ""
    worse = ["#A worse", "#B worse"] if regression else ["#only A wrong", "#only B wrong"]
    head = _head(
        "#seed",
        "stream id",
        "A",
        "B",
        "#error A",
        "#error B",
        *worse,
        "#A − B" + ("" if regression else " (pp)"),
        "fewer errors",
    )
    fewer = {
        "win": "<span class='win'>A</span>",
        "loss": "<span class='loss'>B</span>",
        "tie": "<span class='tie'>same</span>",
    }
    rows = []
    for r in pairs.itertuples():
        d = f"{r.diff:+.4g}" if regression else f"{100 * r.diff:+.2f}"
        cells = [
            _td(_e(r.seed), "num"),
            _td(_e(r.stream_id), "mono"),
            _td(_swatch(r.a, colours)),
            _td(_swatch(r.b, colours)),
            _td(_err(r.err_a, regression), "num"),
            _td(_err(r.err_b, regression), "num"),
            _td(r.a_worse, "num"),
            _td(r.b_worse, "num"),
            _td(d if pd.notna(r.diff) else "–", "num"),
            _td(fewer.get(r.result, _e(r.result))),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return _table(head, rows)


def _overall_table(
    cmp: Comparison,
    lb: pd.DataFrame,
    colours: dict[str, str],
    names: dict[str, str],
    groups: Sequence[RankGroup] = (),
) -> str:
    streams = list(dict.fromkeys(lb["stream"]))
    col = "test_error" if cmp.metric == "test_error" else "online_error"
    tasks = lb.drop_duplicates("stream").set_index("stream")["task"]
    head = (
        "<tr><th class='num'>#</th><th>configuration</th><th class='num'>mean rank"
        + (" (group)" if len(groups) > 1 else "")
        + "</th>"
        + "".join(
            f"<th class='num ds' title='{_e(s)}'>{_spec(names.get(s, s))}</th>" for s in streams
        )
        + "<th>not finished</th></tr>"
    )
    # label → its mean rank in each group it belongs to (a configuration run on data sets
    # of several groups has a rank in each)
    rank_of: dict[str, list[tuple[float, str]]] = {}
    for g in groups:
        for lab, mr in g.mean_ranks.items():
            rank_of.setdefault(str(lab), []).append((float(mr), g.name))
    rows = []
    for i, c in enumerate(cmp.configs.itertuples(), 1):
        if len(groups) > 1 and str(c.label) in rank_of:
            rank_cell = "<br>".join(
                f"{mr:.2f} <span class='sd' title='{_e(gname)}'>({_e(_short_name(gname))})</span>"
                for mr, gname in rank_of[str(c.label)]
            )
        else:
            mr = rank_of.get(str(c.label), [(c.mean_rank, "")])[0][0]
            rank_cell = _num(mr, ".2f")
        cells = [
            f"<td class='num'>{i}</td>",
            f"<td class='cfgcol'>{_swatch(c.label, colours, c.flags)}</td>",
            f"<td class='num'>{rank_cell}</td>",
        ]
        for s in streams:
            row = lb[(lb["stream"] == s) & (lb["label"] == c.label)]
            if row.empty or row.iloc[0]["seeds"] == 0:
                cells.append("<td class='num'>–</td>")
                continue
            r = row.iloc[0]
            v = r[col] if pd.notna(r[col]) else r["online_error"]
            sd = r[f"{col}_sd"] if pd.notna(r[col]) else r["online_error_sd"]
            reg = tasks.get(s) == "regression"
            cls = "rank1 best" if r["rank"] == 1 else "rank2" if r["rank"] == 2 else ""
            sdt = (
                ""
                if pd.isna(sd)
                else f" <span class='sd'>± {sd:.3g}</span>"
                if reg
                else f" <span class='sd'>± {100 * sd:.2f}</span>"
            )
            # The mark on the cell too: a degenerate run is never shown as best unmarked.
            flags = str(r.get("flags", "") or "")
            mark = (
                f" <span class='flagmark' title='degenerate: {_e(flags)}'>⚠</span>" if flags else ""
            )
            cells.append(f"<td class='num {cls}'>{_err(v, reg)}{sdt}{mark}</td>")
        fails = int(c.failed)
        cells.append(
            f"<td>{f'<span class=loss>{fails} of {int(c.runs)}</span>' if fails else ''}</td>"
        )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<div class='scroll'><table>{head}{''.join(rows)}</table></div>"


def _configs_html(cmp: Comparison, colours: dict[str, str]) -> str:
    runs = cmp.runs
    empty = pd.Series(dtype=object)
    plugin = runs.groupby("config")["plugin"].first() if "plugin" in runs.columns else empty
    version = (
        runs.groupby("config")["plugin_version"].first()
        if "plugin_version" in runs.columns
        else empty
    )
    plugin, version = plugin.dropna(), version.dropna()  # runs that failed early record no plugin
    rows = []
    for key, c in cmp.configs.iterrows():
        cells = [
            _td(_swatch(c["label"], colours)),
            _td(_spec(c["algorithm_spec"]), "mono"),
            _td(_spec(c["kernel"]) or "–", "mono"),
            _td(_spec(c["loss"]) or "–", "mono"),
            _td(c["epochs"], "num"),
            _td(f"{c['ok']} / {c['runs']}", "num"),
            _td(f"{_e(plugin.get(key, '–'))} {_e(version.get(key, ''))}", "mono nowrap"),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = _head("label", "algorithm", "kernel", "loss", "#epochs", "#finished", "plugin")
    return _table(head, rows)


def _metadata_html(cmp: Comparison, source: str) -> str:
    runs = cmp.runs
    written = runs.get("kbench_version", pd.Series(dtype=object)).dropna()
    versions = sorted({str(v) for v in written})
    machines: dict[str, dict[str, Any]] = {}
    for m in runs.get("machine", pd.Series(dtype=object)).dropna():
        if isinstance(m, dict):
            machines.setdefault(str(m.get("host", "?")) + str(m.get("platform", "")), m)

    def when(col: str, how: str) -> float:
        if col not in runs:
            return np.nan
        return getattr(pd.to_numeric(runs[col], errors="coerce"), how)()

    def ts(t: float) -> str:
        return _dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S") if pd.notna(t) else "–"

    items = [
        ("results folder", f"<span class='mono'>{_e(source)}</span>"),
        ("written by kbench", _e(", ".join(versions) or "?")),
        ("report by kbench", _e(__version__) + f" (Python {_e(platform.python_version())})"),
        ("tasks", f"{len(runs)} ({int((runs['status'] == 'ok').sum())} finished)"),
        ("first task started", ts(when("started_at", "min"))),
        ("last task finished", ts(when("finished_at", "max"))),
        ("compared on", f"{_e(cmp.metric.replace('_', ' '))}, α = {cmp.alpha:g}"),
    ]
    meta = _table("", [f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in items], "meta")
    keys = ("host", "platform", "processor", "cores", "python", "numpy")
    mrows = [
        "<tr>" + "".join(_td(_e(m.get(k, "")), "mono") for k in keys) + "</tr>"
        for m in machines.values()
    ]
    return meta + ("<h3>Machines</h3>" + _table(_head(*keys), mrows) if mrows else "")


def _howto(items: Sequence[str]) -> str:
    lis = "".join(f"<li>{x}</li>" for x in items)
    return f"<div class='howto'><b>How to read the matrix</b><ul>{lis}</ul></div>"


def _summary_section(
    cmp: Comparison,
    lb: pd.DataFrame,
    colours: dict[str, str],
    names: dict[str, str],
    groups: Sequence[RankGroup] = (),
) -> str:
    which = "held-out" if cmp.metric == "test_error" else "online (prequential)"
    figure = overview_figure(lb, cmp.labels, colours, names, cmp.metric)
    return (
        "<section class='card' id='summary'><h2>Summary</h2>"
        f"<p class='lede'>Mean {which} error per data set over the seeds. "
        + (
            "Rows by mean rank across data sets. "
            if len(groups) <= 1
            else "Rows by mean error; the mean rank is within the configuration's group "
            "(see Across data sets). "
        )
        + "# numbers the configurations in every matrix below. Green cells: best (darker) "
        "and second on the data set; ± is the standard deviation over seeds (percentage "
        "points for error rates); ⚠ marks degenerate runs.</p>"
        + _overall_table(cmp, lb, colours, names, groups)
        + _img(
            figure,
            "mean error per data set",
            "One panel per data set, each with its own axis; configurations in the order of the "
            "table.",
        )
        + "</section>"
    )


def _group_html(cmp: Comparison, group: RankGroup, colours: dict[str, str], titled: bool) -> str:
    """Mean ranks, the Friedman test and the CD diagram of one experiment group."""
    out = [f"<h3 title='{_e(', '.join(group.streams))}'>{_e(group.name)}</h3>" if titled else ""]
    fr = group.friedman
    flags = dict(zip(cmp.configs["label"], cmp.configs["flags"], strict=True))
    if group.rankable:
        f_text = "∞" if fr["F"] == math.inf else _num(fr["F"], ".3f")
        out.append(
            f"<p class='lede'>Friedman test over {fr['N']} {group.blocks} and {fr['k']} "
            f"configurations: χ²<sub>F</sub> = {_num(fr['chi2'], '.3f')} "
            f"({_p_is(fr['p_chi2'])}), Iman–Davenport F = {f_text} "
            f"({_p_is(fr['p_F'])}). Configurations joined by a thick bar are not separated "
            f"by the Nemenyi test at α = {cmp.alpha:g} (critical difference "
            f"{_num(fr['cd'], '.2f')} in mean rank; Demšar 2006). Rank 1 is the lowest error.</p>"
        )
        rows = [
            f"<tr><td class='num'>{i}</td><td>{_swatch(str(lab), colours, flags.get(lab, ''))}"
            f"</td><td class='num'>{mr:.2f}</td></tr>"
            for i, (lab, mr) in enumerate(group.mean_ranks.items(), 1)
        ]
        out.append(
            "<details><summary>Mean ranks</summary>"
            + _table(_head("##", "configuration", "#mean rank"), rows)
            + "</details>"
        )
        cd = cd_figure(group.mean_ranks, fr["cd"], group.cd_groups, colours, fr["N"])
        out.append(_img(cd, "critical difference diagram"))
    else:
        out.append(
            f"<p class='empty'>Not ranked: {len(group.mean_ranks) or len(group.values.columns)} "
            f"configuration(s) over {len(group.values)} complete {group.blocks}; a ranking needs "
            "at least two of each.</p>"
        )
    if group.left_out:
        out.append(
            "<p class='kv'>Left out of this ranking: " + _e("; ".join(group.left_out)) + "</p>"
        )
    return "".join(out)


def _across_section(cmp: Comparison, colours: dict[str, str]) -> str:
    groups, sentence = experiment_groups(cmp)
    out = [
        "<section class='card' id='across'><h2>Across data sets</h2>"
        f"<p class='lede'>{_e(sentence)}</p>"
    ]
    for group in groups:
        out.append(_group_html(cmp, group, colours, len(groups) > 1))
    uri = _wtl_figures(cmp, groups) if len(cmp.wtl) else None
    if uri:
        n_streams = cmp.pairs["stream_id"].nunique()
        out.append(
            "<h3>Win / tie / loss over every stream</h3><div class='pairgrid'><div>"
            + _img(uri, "win tie loss matrix")
            + "</div>"
            + _howto(
                [
                    f"Row against column, over all {n_streams} streams (data sets × seeds).",
                    "Each cell counts the streams where the row made fewer / as many / more "
                    "errors than the column.",
                    "A count that describes the streams, not a test: the verdicts are the "
                    "signed-rank tests over seeds in each data set's section.",
                    "Green: the row wins more streams than it loses; red: the reverse.",
                ]
            )
            + "</div>"
        )
    out.append("</section>")
    return "".join(out)


def _dataset_section(
    cmp: Comparison,
    stream: str,
    sid: str,
    lb: pd.DataFrame,
    traces: pd.DataFrame,
    colours: dict[str, str],
    references: Sequence[Mapping[str, Any]] = (),
) -> str:
    runs = cmp.runs
    srun = runs[runs["stream"].astype(str) == stream]
    ok = srun[srun["status"] == "ok"]
    task = str(srun["task"].dropna().iloc[0]) if srun["task"].notna().any() else "binary"
    regression = task == "regression"
    n = ok["n"].dropna()
    d = ok["d"].dropna() if "d" in ok.columns else pd.Series(dtype=float)
    test_n = np.nan
    if "test_n" in traces.columns:
        test_n = traces[traces["task_id"].isin(ok["task_id"])]["test_n"].max()
    ids = sorted(srun["stream_id"].dropna().astype(str).unique())
    facts = [
        f"task <b>{_e(task)}</b>",
        f"n = <b>{int(n.max())}</b>" if len(n) else "",
        f"d = <b>{int(d.max())}</b>" if len(d) else "",
        f"held-out n = <b>{int(test_n)}</b>" if pd.notna(test_n) else "",
        f"seeds <b>{srun['seed'].nunique()}</b>",
        f"stream ids <span class='mono'>{_e(', '.join(ids[:6]))}"
        f"{' …' if len(ids) > 6 else ''}</span>",
    ]
    part = [
        f"<section class='card' id='{sid}'><h2>{_e(stream)}</h2><div class='kv'>"
        + "".join(f"<span>{f}</span>" for f in facts if f)
        + "</div>"
    ]
    refs = [r for r in references if r.get("stream") is None or str(r["stream"]) in stream]
    uri, panels = curves_figure(stream, ok, traces, colours, task, refs) if len(ok) else (None, [])
    if uri:
        part.append(
            _img(
                uri,
                f"curves on {stream}: {'; '.join(panels)}",
                "Logarithmic x axis. The error panels start after the first few examples, "
                "too few to say anything, and fit their y axis to the curves.",
            )
        )
    board = lb[lb["stream"] == stream]
    part.append("<h3>Leaderboard</h3>" + _leaderboard_html(board, colours, regression))
    seeds = cmp.seeds[cmp.seeds["stream"] == stream]
    spairs = cmp.pairs[cmp.pairs["stream"] == stream]
    if len(seeds):
        what = "squared error" if regression else "error rate"
        matrix = pair_matrix_figure(seeds, cmp.labels, regression, cmp.alpha)
        n_seeds = int(seeds["n_pairs"].max())
        part.append(
            "<h3>Every pair</h3><div class='pairgrid'><div>"
            + _img(matrix, f"pairs on {stream}")
            + "</div>"
            + _howto(
                [
                    "Each cell is the <b>row</b> configuration against the <b>column</b> one.",
                    f"First line: difference of mean {what} over the seeds (row − column); "
                    "negative means the row makes fewer errors.",
                    "Second line: p-value of the exact Wilcoxon signed-rank test over the "
                    f"seeds' final errors ({n_seeds} seed{'s' if n_seeds != 1 else ''}, one "
                    "paired difference per seed), Holm-corrected over the pairs of this data "
                    "set. The seeds are the replicates, not the examples (docs/statistics.md).",
                    "Green: the row is better; red: worse. Full colour only where "
                    f"p &lt; {cmp.alpha:g}.",
                    "Better (table): A or B where the adjusted p is below "
                    f"{cmp.alpha:g}; <i>tie</i> where it is not; <i>cannot tell</i> where "
                    "these seeds cannot reach it whatever the errors (the smallest p with n "
                    "seeds is 2/2<sup>n</sup>, times the pairs for Holm), with the seeds "
                    "needed; <i>not available</i> with fewer than two seeds (no test).",
                ]
            )
            + "</div>"
        )
        part.append(_pairs_html(seeds, colours, regression))
        part.append(
            f"<details><summary>Per stream: a description, no test ({len(spairs)})</summary>"
            + _stream_pairs_html(spairs, colours, regression)
            + "</details>"
        )
    failed = srun[srun["status"] != "ok"]
    if len(failed):
        part.append(
            f"<h3>Tasks that did not finish ({len(failed)})</h3>"
            + _failed_table(failed, colours, False)
        )
    part.append("</section>")
    return "".join(part)


def _report_notes(cmp: Comparison, groups: Sequence[RankGroup]) -> list[str]:
    """The comparison's notes for the page: the per-configuration degenerate notes folded
    into one (each configuration carries its own mark and reasons in the tables), and the
    notes about configurations left out of one ranking across every data set dropped when
    the study is ranked per experiment group (the section says what was grouped)."""
    notes, degenerate = [], []
    for n in cmp.notes:
        if n.startswith("degenerate learner: "):
            degenerate.append(n)
        elif len(groups) > 1 and (
            n.startswith("left out of the ranking across data sets")
            or n.startswith("ranks across data sets need")
        ):
            continue
        else:
            notes.append(n)
    if degenerate:
        notes.append(
            f"{len(degenerate)} configuration(s) have degenerate runs, marked ⚠ with their "
            f"reasons in the tables. {LEGEND.removeprefix('⚠ ')}."
        )
    return notes


def render_report(
    cmp: Comparison,
    results: Results,
    title: str = "kbench report",
    source: str = "",
    references: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The report as one HTML string.

    Parameters
    ----------
    cmp
        The comparison of the results (:func:`kbench.analysis.compare.compare`).
    results
        The results tables (for the traces).
    title
        Shown at the top of the page.
    source
        Where the results came from (shown in the metadata).
    references
        Published values to mark on the curves: mappings with ``metric``, ``value``,
        ``label`` and optionally ``stream`` (a substring of the stream labels it applies to;
        absent or None for every stream).
    """
    labels = cmp.labels
    colours = {lab: PALETTE[i % len(PALETTE)] for i, lab in enumerate(labels)}
    runs = cmp.runs
    traces = results.traces if results.traces is not None else pd.DataFrame()
    if traces.empty or "task_id" not in traces.columns:
        traces = pd.DataFrame(columns=["task_id", "seen", "online_error"])
    lb = cmp.leaderboard()
    streams = sorted(runs["stream"].astype(str).unique())
    names = _stream_names(streams)
    seeds_per = runs.groupby("stream")["seed"].nunique()
    chips = [
        (len(labels), "configurations"),
        (len(streams), "data sets"),
        (int(seeds_per.max()) if len(seeds_per) else 0, "seeds per data set"),
        (f"{int((runs['status'] == 'ok').sum())} / {len(runs)}", "tasks finished"),
        (len(cmp.seeds), "pairs tested over seeds"),
    ]
    chip_html = "".join(f"<div class='chip'><b>{v}</b>{_e(k)}</div>" for v, k in chips)

    nav = ["<a href='#summary'>Summary</a>", "<a href='#across'>Across data sets</a>"]
    groups, _ = experiment_groups(cmp)
    sections = [_summary_section(cmp, lb, colours, names, groups), _across_section(cmp, colours)]
    for i, stream in enumerate(streams):
        sid = _slug(stream, i)
        nav.append(f"<a href='#{sid}' title='{_e(stream)}'>{_e(names[stream])}</a>")
        sections.append(_dataset_section(cmp, stream, sid, lb, traces, colours, references))
    nav.append("<a href='#configurations'>Configurations</a>")
    sections.append(
        "<section class='card' id='configurations'><h2>Configurations</h2>"
        "<p class='lede'>Full specifications behind the short labels used above.</p>"
        + _configs_html(cmp, colours)
        + "</section>"
    )
    failed = runs[runs["status"] != "ok"]
    if len(failed):
        nav.append("<a href='#failed'>Not finished</a>")
        sections.append(
            f"<section class='card' id='failed'><h2>Tasks that did not finish "
            f"({len(failed)})</h2><p class='lede'>Recorded with their status and "
            "reason; left out of every test.</p>"
            + _failed_table(failed, colours, True)
            + "</section>"
        )
    nav.append("<a href='#run'>Run</a>")
    sections.append(
        "<section class='card' id='run'><h2>Run</h2>" + _metadata_html(cmp, source) + "</section>"
    )

    notes = "".join(f"<li>{_e(n)}</li>" for n in _report_notes(cmp, groups))
    notes_html = (
        f"<div class='notes' id='notes'><b>Notes</b><ul>{notes}</ul></div>" if notes else ""
    )
    generated = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(title)} · kbench report</title><style>{CSS}</style>"
        f"<script>{SCRIPT}</script></head><body>"
        f"<header><div class='wrap'><h1>{_e(title)}</h1>"
        "<div class='sub'>kbench report · every pair of algorithm configurations on identical "
        f"streams · generated {generated}</div>"
        f"<div class='chips'>{chip_html}</div></div></header>"
        f"<nav><div class='wrap'>{''.join(nav)}</div></nav>"
        f"<main><div class='wrap'>{notes_html}{''.join(sections)}</div></main>"
        f"<footer>kbench {_e(__version__)}</footer></body></html>"
    )


def write_report(
    cmp: Comparison,
    results: Results,
    out: str | Path,
    title: str = "kbench report",
    source: str = "",
    references: Sequence[Mapping[str, Any]] | None = None,
) -> Path:
    """Write the report to ``out`` (parent folders created; written atomically, so a failed
    write leaves the previous report as it was).

    ``references`` are published values to mark on the curves (see :func:`render_report`).
    ResultsError says why the file cannot be written (a full disk, say).
    """
    out = Path(out)
    text = render_report(cmp, results, title=title, source=source, references=references or ())
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        return atomic_write_text(out, text)
    except OSError as exc:
        raise ResultsError(
            f"cannot write the report to {out}: {exc.strerror or exc}; any previous report and "
            "the results it shows are kept; run the command again once the disk has room"
        ) from None
