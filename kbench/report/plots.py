"""The report's figures: matplotlib drawn on its SVG canvas (no pyplot state, no backend
switch) and returned as inline SVG markup whose text stays text.

Each configuration keeps one colour (from :data:`PALETTE`) in every figure and table.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench.analysis.curves import examples_seen, mean_by_checkpoint, seed_band

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


def figure_class() -> Any:
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


def svg_of(fig: Any, tight: bool = True) -> str:
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


def decibels(mse: pd.Series) -> pd.Series:
    """10 log10 of mean squared errors; NaN where the error is not positive."""
    values = pd.to_numeric(mse, errors="coerce").astype(float)
    return 10.0 * np.log10(values.where(values > 0))


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
        The figure as inline SVG markup (None when there is nothing to draw) and the
        panel titles.
    """
    online = runs[~runs["offline"]]
    tr = traces[traces["task_id"].isin(online["task_id"])].copy()
    if tr.empty:
        return None, []
    tr["x"] = examples_seen(tr, online.set_index("task_id")["n"])
    tr["label"] = tr["task_id"].map(online.set_index("task_id")["label"])
    order = [lab for lab in colours if lab in set(tr["label"])]
    regression = task == "regression"
    err_name = "mean squared error" if regression else "error rate"
    # Regression errors in decibels, 10 log10 MSE, as the adaptive-filtering literature
    # draws its learning curves: a tenfold drop is 10 dB, whatever the target's scale (the
    # line is the mean over seeds in dB, the band their range).
    in_db = regression and "online_error" in tr.columns
    if in_db:
        for col in ("online_error", "test_error"):
            if col in tr.columns:
                tr[col] = decibels(tr[col])
        err_name = "MSE in dB"
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

    Figure = figure_class()
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
                g = mean_by_checkpoint(sub, "x", ["time_s", ycol])
                g = g[(g["time_s"] > 0) & (g.index >= x_cut)]
                if len(g):
                    ax.plot(g["time_s"], g[ycol], color=colours[lab], lw=1.8)
                    bands.append(
                        pd.DataFrame(
                            {"x": g["time_s"], "mean": g[ycol], "lo": g[ycol], "hi": g[ycol]}
                        )
                    )
                continue
            b = seed_band(sub, "x", ycol)
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
                    val = float(decibels(pd.Series([val])).iloc[0]) if in_db else val
                    ax.axhline(val, color=colours.get(r["label"], "#555"), lw=1.3, ls="--")
        for ref in references:
            if ref.get("metric") == ycol and xcol != "time_s":
                value = float(ref["value"])
                if in_db and ycol in ("online_error", "test_error"):
                    value = 10.0 * math.log10(value) if value > 0 else math.nan
                # A paper's number is a level to compare against, not a curve: a dotted line.
                ax.axhline(value, color="black", lw=1.0, ls=":")
                ax.annotate(
                    str(ref.get("label", "paper")),
                    xy=(0.01, value),
                    xycoords=("axes fraction", "data"),
                    fontsize=7,
                    va="bottom",
                )
                bands.append(
                    pd.DataFrame(
                        {
                            "x": [np.nan],
                            "mean": [value],
                            "lo": [value],
                            "hi": [value],
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
            _zoom(ax, bands, 0.0, floor_zero=not in_db)  # decibels go below 0
            if not regression:
                _percent_axis(ax)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Line2D([0], [0], color=colours[lab], lw=2.4, label=lab) for lab in order]
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
        handle.set_label(wrap_label(handle.get_label(), 70))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()  # measures text as svg_of will lay it out
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
    return svg_of(fig, tight=False), [p[0] for p in panels]


def _log_ticks(ax: Any, bands: list[pd.DataFrame]) -> None:
    """Plain numbers on a log y axis, with 1-2-5 ticks when the curves span few decades."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

    vals = pd.concat([b["mean"] for b in bands]) if bands else pd.Series(dtype=float)
    vals = vals[vals > 0]
    if len(vals) and np.log10(vals.max() / vals.min()) < 2.5:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_locator(NullLocator())


#: Line spacing of a wrapped label, in font sizes. Explicit, because matplotlib's default
#: (1.2) sets the lines closer in some versions (3.10) than a browser's glyph boxes need.
LABEL_LINESPACING = 1.3


def wrap_label(label: str, width: int = 18) -> str:
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
    wrapped = {lab: wrap_label(lab, 34) for lab in labels}
    row_h = {s: [0.16 * (wrapped[lab].count("\n") + 1) + 0.09 for lab in drawn[s]] for s in streams}
    ncols = 1 if len(streams) == 1 else 2
    nrows = math.ceil(len(streams) / ncols)
    heights = [
        max(sum(row_h[s]) for s in streams[r * ncols : (r + 1) * ncols]) + 0.75
        for r in range(nrows)
    ]
    Figure = figure_class()
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
        ax.set_yticks(
            centres, [wrapped[lab] for lab in drawn[s]], fontsize=8.5, linespacing=LABEL_LINESPACING
        )
        ax.grid(axis="y", visible=False)
        ax.set_title(wrap_label(stream_names.get(s, s), 60), loc="left", fontsize=10)
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
    return svg_of(fig)
