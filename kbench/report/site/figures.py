"""The site's figures: matplotlib Figures saved as SVG and PDF, legend and caption inside.

A figure's files are named by a digest of what it draws, so publishing again redraws only
figures whose data changed (drawing is most of a site's build time). Both files carry the
legend and the caption, so a downloaded figure stands on its own in a paper.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kbench.report.pair_plots import cd_plot
from kbench.report.plots import PALETTE, figure_class, wrap_label

#: Points: (label, group, x, y) of one configuration; a group (its learner family) gives
#: its colour.
Point = tuple[str, str, float, float]
#: Point markers, one per round of the palette, so that no two families look alike.
MARKERS = ("o", "s", "^", "D")
#: Most entries a legend lists: a figure of more results colours them by family and
#: names only those its caption says (the Pareto front, the best curves).
MAX_NAMED = 12


#: The figures' drawing, versioned: part of every figure's digest, so that a site published
#: before a change of the drawing redraws its figures (their data alone would not change).
FIGURE_STYLE = 3


def digest(kind: str, data: Any) -> str:
    """The file stem of a figure: its kind and a digest of its data (and the drawing's
    :data:`FIGURE_STYLE`)."""
    text = json.dumps([FIGURE_STYLE, data], sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha1(text.encode()).hexdigest()[:12]}"


def colours(labels: Sequence[str]) -> dict[str, str]:
    """One palette colour per label, in order."""
    return {lab: PALETTE[i % len(PALETTE)] for i, lab in enumerate(labels)}


def pareto_front(points: Sequence[Point]) -> list[Point]:
    """The points no other point beats on both x and y (lower is better on each), by x."""
    front: list[Point] = []
    for p in sorted(points, key=lambda p: (p[2], p[3])):
        if not front or p[3] < front[-1][3]:
            front.append(p)
    return front


def _finish(fig: Any, ax: Any, caption: str) -> None:
    """Legend beside the axes and the caption below both: a legend taller than the axes
    (many families and a long Pareto front) pushes the caption down, never under itself."""
    handles, labels = ax.get_legend_handles_labels()
    bottom = 1.0
    if handles:
        legend = fig.legend(
            handles,
            [wrap_label(x, 34) for x in labels],
            loc="upper left",
            bbox_to_anchor=(0.66, 0.93),
            fontsize=8,
            handlelength=1.2,
        )
        # The legend's own extent (laid out alone, not the whole figure drawn).
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        bottom = box.y0
    # The axes' labels end near 0.08; saving with a tight box keeps a caption set lower.
    top = min(0.07, bottom - 0.02)
    fig.text(0.02, top, caption, fontsize=8, color="#4a525c", wrap=True, va="top")


def scatter_figure(
    *,
    points: Sequence[Point],
    title: str,
    xlabel: str,
    ylabel: str,
    caption: str,
    log_x: bool = True,
    mark_front: bool = False,
) -> Any:
    """Each configuration's (x, y), coloured by its group; with ``mark_front`` the Pareto
    front joined, and its points numbered and named in the legend (the first
    :data:`MAX_NAMED`)."""
    Figure = figure_class()
    fig = Figure(figsize=(9.6, 4.6))
    ax = fig.add_axes((0.08, 0.2, 0.56, 0.7))
    groups = list(dict.fromkeys(p[1] for p in points))
    pal = colours(groups)
    for i, g in enumerate(groups):
        mine = [p for p in points if p[1] == g]
        xs, ys = [p[2] for p in mine], [p[3] for p in mine]
        # more families than colours: each round of the palette takes the next marker
        marker = MARKERS[i // len(PALETTE) % len(MARKERS)]
        ax.plot(xs, ys, marker, ms=6, alpha=0.8, color=pal[g], label=g, zorder=3, ls="none")
    if mark_front and len(points) > 1:
        front = pareto_front(points)
        xs, ys = [p[2] for p in front], [p[3] for p in front]
        ax.plot(xs, ys, drawstyle="steps-post", color="#2d333a", lw=1.0, ls="--", zorder=2)
        for k, p in enumerate(front[:MAX_NAMED], start=1):
            # the number beside its point, and in the legend with the result it names
            where = (p[2], p[3])
            ax.annotate(str(k), where, xytext=(5, 5), textcoords="offset points", fontsize=8)
            ax.plot([], [], marker=f"${k}$", ms=7, color="#1f2429", ls="none", label=f"{k}: {p[0]}")
    if log_x and all(p[2] > 0 for p in points):
        ax.set_xscale("log")
    ax.set_title(title, loc="left")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _finish(fig, ax, caption)
    return fig


def curves_figure(
    *, curves: dict[str, list[list[float]]], title: str, ylabel: str, caption: str
) -> Any:
    """Error against examples seen, one line per configuration (log x); the caller passes
    at most :data:`MAX_NAMED` curves."""
    Figure = figure_class()
    fig = Figure(figsize=(9.6, 4.6))
    ax = fig.add_axes((0.08, 0.2, 0.56, 0.7))
    pal = colours(list(curves))
    for lab, (xs, ys) in curves.items():
        ax.plot(xs, ys, color=pal[lab], lw=1.6, label=lab)
    if all(x > 0 for xs, _ in curves.values() for x in xs):
        ax.set_xscale("log")
    ax.set_title(title, loc="left")
    ax.set_xlabel("examples seen")
    ax.set_ylabel(ylabel)
    _finish(fig, ax, caption)
    return fig


def cd_figure(*, ranking: dict[str, Any], caption: str) -> Any:
    """The critical-difference diagram of a study's ranking, its caption below."""
    import pandas as pd

    ranks = pd.Series(ranking["mean_ranks"], dtype=float)
    fig = cd_plot(ranks, ranking["cd"], ranking["groups"], colours(list(ranks.index)))
    if fig is None:
        return None
    w, h = fig.get_size_inches()
    fig.set_size_inches(w, h + 0.5)
    for ax in fig.axes:  # make room for the caption
        ax.set_position((0.0, 0.5 / (h + 0.5), 1.0, h / (h + 0.5)))
    fig.text(0.02, 0.02, caption, fontsize=8, color="#4a525c", wrap=True, va="bottom")
    return fig


def save(fig: Any, folder: Path, stem: str) -> bool:
    """Write ``stem.svg`` and ``stem.pdf`` in ``folder`` unless both exist; True when
    written. Text stays text in the SVG; the PDF carries no creation date, so the same
    figure gives the same bytes."""
    import matplotlib
    from matplotlib.backends.backend_pdf import FigureCanvasPdf
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    svg, pdf = folder / f"{stem}.svg", folder / f"{stem}.pdf"
    if svg.is_file() and pdf.is_file():
        return False
    folder.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "kbench"}):
        FigureCanvasSVG(fig)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.12)
        svg.write_text(buf.getvalue(), encoding="utf-8")
        FigureCanvasPdf(fig)
        raw = io.BytesIO()
        fig.savefig(
            raw,
            format="pdf",
            bbox_inches="tight",
            pad_inches=0.12,
            metadata={"CreationDate": None, "Creator": "kbench"},
        )
        pdf.write_bytes(raw.getvalue())
    return True


#: A queued figure: the stem of its files, the function of this module that draws it and
#: that function's keyword arguments.
Job = tuple[str, str, dict[str, Any]]
DRAW: dict[str, Callable[..., Any]] = {
    "scatter_figure": scatter_figure,
    "curves_figure": curves_figure,
    "cd_figure": cd_figure,
}


def draw(job: Job, folder: Path) -> None:
    """Draw one queued figure and save it as SVG and PDF in ``folder``."""
    stem, name, kwargs = job
    fig = DRAW[name](**kwargs)
    if fig is not None:
        save(fig, folder, stem)
