"""The report's figures of pairs and rankings: the pair matrix of a data set, the
win/tie/loss matrix over every stream and the critical-difference diagram.

Rows and columns follow the configurations' order in the summary table (their number
there labels the columns), in the colours of :data:`kbench.report.plots.PALETTE`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench.report.plots import LABEL_LINESPACING, figure_class, svg_of, wrap_label


def _diverging_cmap() -> Any:
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(
        "kbench_div", ["#b8322e", "#e98f7a", "#f7f7f5", "#86c79a", "#23834a"]
    ).with_extremes(bad="#eceef1")


def _empty_cells(
    labels: Sequence[str], seen: set[str]
) -> tuple[list[str], dict[str, int], np.ndarray, list[list[str]]] | None:
    """The configurations of ``labels`` that are in ``seen`` (None with fewer than two to
    set against each other), their row numbers, and an empty score and text per cell."""
    present = [lab for lab in labels if lab in seen]
    k = len(present)
    if k < 2:
        return None
    score = np.full((k, k), np.nan)
    return present, {lab: i for i, lab in enumerate(present)}, score, [[""] * k for _ in range(k)]


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
    cells = _empty_cells(labels, set(seeds["a"]) | set(seeds["b"]))
    if cells is None:
        return None
    present, pos, score, text = cells
    k = len(present)
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
    fs = 9 if k <= 4 else 8 if k <= 6 else 6.5
    return _matrix_figure(score, text, present, labels, fs, bold=True, linespacing=1.35)


def _matrix_figure(
    score: np.ndarray,
    text: Sequence[Sequence[str]],
    present: Sequence[str],
    labels: Sequence[str],
    fontsize: float,
    bold: bool = False,
    linespacing: float | None = None,
    title: str = "",
) -> str:
    """A k × k configuration matrix: cells coloured by ``score`` in [−1, 1] (green where the
    row does better), ``text`` written in them (bold on saturated cells if ``bold``), the
    diagonal dashed out."""
    Figure = figure_class()
    fig = Figure(figsize=_matrix_size(present))
    ax = fig.subplots()
    ax.imshow(np.ma.masked_invalid(score), cmap=_diverging_cmap(), vmin=-1, vmax=1, aspect="auto")
    k = len(present)
    for i in range(k):
        for j in range(k):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#9aa3ad", fontsize=fontsize)
            elif text[i][j]:
                strong = abs(score[i, j]) > 0.6  # white text on the saturated cells
                ax.text(
                    j,
                    i,
                    text[i][j],
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    linespacing=linespacing,
                    color="white" if strong else "#1f2429",
                    fontweight="bold" if strong and bold else "normal",
                )
    _matrix_axes(ax, present, labels)
    ax.xaxis.tick_top()
    if title:
        ax.set_title(wrap_label(title, 60), loc="left", pad=22)
    ax.grid(False)
    ax.tick_params(length=0)
    for sp in ax.spines.values():
        sp.set_visible(False)
    ax.set_xticks(np.arange(-0.5, k, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, k, 1), minor=True)
    ax.grid(which="minor", color="white", lw=2.5)
    ax.tick_params(which="minor", length=0)
    return svg_of(fig)


def _matrix_axes(ax: Any, present: Sequence[str], labels: Sequence[str]) -> None:
    """Tick labels of a configuration matrix: rows carry the configuration's number (its
    row in the summary table) and its wrapped label, columns the number alone, so no two
    labels can collide however long they are."""
    number = {lab: i + 1 for i, lab in enumerate(labels)}
    k = len(present)
    ax.set_xticks(range(k), [str(number.get(lab, "?")) for lab in present], fontsize=9)
    ax.set_yticks(
        range(k),
        [f"{number.get(lab, '?')}  {wrap_label(lab, 30)}" for lab in present],
        fontsize=8,
        linespacing=LABEL_LINESPACING,
    )


def _matrix_size(present: Sequence[str]) -> tuple[float, float]:
    """Figure size (inches) of a k × k configuration matrix: columns wide enough for the
    cell text, rows tall enough for the longest wrapped row label."""
    k = len(present)
    lines = max(wrap_label(lab, 30).count("\n") + 1 for lab in present)
    cell_w = 1.0 if k <= 6 else 0.82
    cell_h = max(0.62 * cell_w, 0.15 * lines + 0.12)
    label_w = 0.075 * max(len(line) for lab in present for line in wrap_label(lab, 30).split("\n"))
    return label_w + 0.6 + cell_w * k, 0.8 + cell_h * k


def wtl_figure(wtl: pd.DataFrame, labels: Sequence[str], title: str = "") -> str | None:
    """Win/tie/loss over every stream as a heatmap (row against column)."""
    cells = _empty_cells(labels, set(wtl["a"]))
    if cells is None:
        return None
    present, pos, score, text = cells
    k = len(present)
    for r in wtl.itertuples():
        if r.a in pos and r.b in pos:
            tot = r.wins + r.ties + r.losses
            score[pos[r.a], pos[r.b]] = (r.wins - r.losses) / tot if tot else 0.0
            text[pos[r.a]][pos[r.b]] = f"{r.wins} / {r.ties} / {r.losses}"
    fs = 10 if k <= 4 else 8.5 if k <= 6 else 7
    return _matrix_figure(score, text, present, labels, fs, title=title)


def cd_figure(
    mean_ranks: pd.Series,
    cd: float,
    groups: list[list[str]],
    colours: dict[str, str],
    n_datasets: int,
) -> str | None:
    """Critical-difference diagram (Demšar 2006) as inline SVG (see :func:`cd_plot`)."""
    fig = cd_plot(mean_ranks, cd, groups, colours)
    return None if fig is None else svg_of(fig)


def cd_plot(
    mean_ranks: pd.Series, cd: float, groups: list[list[str]], colours: dict[str, str]
) -> Any:
    """Critical-difference diagram (Demšar 2006): mean ranks on an axis, the CD bar, and
    thick bars joining configurations the Nemenyi test does not separate. A matplotlib
    Figure, or None with fewer than two configurations or no finite CD."""
    k = len(mean_ranks)
    if k < 2 or not np.isfinite(cd):
        return None
    Figure = figure_class()
    ranks = mean_ranks.sort_values()
    names = list(ranks.index)
    half = math.ceil(k / 2)
    # Units are inches (the axes fill the figure), so the text spacing below is physical:
    # each label gets the height of its wrapped lines, whatever k and the label lengths.
    texts = [wrap_label(str(name), 34) for name in names]
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
    for minor in np.arange(1.5, k, 1.0):
        ax.vlines(minor, top, top + 0.04, color="#2d333a", lw=0.7)
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
    return fig
