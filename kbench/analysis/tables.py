"""Tables as text in the formats ``kbench show`` and ``kbench compare`` write: Markdown,
booktabs LaTeX, CSV and JSON, and the small helpers their cells share. The rich terminal
tables are drawn by :mod:`kbench.cli.render`.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench.results.degenerate import LEGEND, MARK

FORMATS = ("table", "markdown", "latex", "csv", "json")
"""Values of ``--format``."""


def plain(v: Any) -> Any:
    """A value as JSON can hold it: NumPy scalars as Python numbers, NaN and infinities as
    None, Series and dicts as dicts, lists and tuples as lists."""
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, pd.Series):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if v is pd.NA or v is pd.NaT:
        return None
    return v


def fmt_value(value: Any, spec: str) -> str:
    """A number formatted with ``spec``; a dash where it is missing (None or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return format(value, spec)


def count(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1: ``count(1, "run")`` is "1 run"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def p_text(p: Any) -> str:
    """A p-value in a sentence: ``p = 0.002``, ``p = 3.1e-05``, or ``p < 1e-16`` below
    what double precision resolves next to 1; ``p = –`` when there is none."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "p = –"
    if p < 1e-16:
        return "p < 1e-16"
    return f"p = {p:.2g}" if p < 0.001 else f"p = {p:.3f}"


def seed_label(seed: Any) -> str:
    """A seed as a block name: ``3`` for 3 or 3.0, the value as written otherwise."""
    try:
        f = float(seed)
    except (TypeError, ValueError):
        return str(seed)
    return f"{int(f)}" if f.is_integer() else str(seed)


def to_csv(frame: pd.DataFrame) -> str:
    """A table as CSV text (one header row, no index)."""
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue()


def to_json(frame: pd.DataFrame, **extra: Any) -> str:
    """A table as JSON: ``{"rows": [...], **extra}``; NaN becomes null."""
    rows = [{str(k): plain(v) for k, v in r.items()} for r in frame.to_dict("records")]
    return json.dumps({**extra, "rows": rows}, indent=2, allow_nan=False, default=str)


def _md_cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return str(v).replace("|", "\\|").replace("\n", " ")


def to_markdown(frame: pd.DataFrame, title: str = "", right: Sequence[str] = ()) -> str:
    """A table as GitHub-flavoured Markdown, under a ``### title`` heading when given."""
    cols = [str(c) for c in frame.columns]
    lines = [f"### {title}", ""] if title else []
    lines.append("| " + " | ".join(_md_cell(c) for c in cols) + " |")
    lines.append("|" + "|".join("---:" if c in right else "---" for c in cols) + "|")
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_md_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "×": r"$\times$",
    "–": "--",
    "−": "-",
    "≥": r"$\geq$",
    "±": r"$\pm$",
}


def latex_escape(text: Any) -> str:
    """Text with LaTeX's special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


DEGENERATE_TEX = r"$^{\dagger}$"
SIGNIFICANT_TEX = r"$^{*}$"


def latex_results(
    mean: pd.DataFrame,
    sd: pd.DataFrame,
    *,
    degenerate: pd.DataFrame | None = None,
    worse: pd.DataFrame | None = None,
    percent: bool = True,
    caption: str = "",
    metric: str = "error",
    alpha: float = 0.05,
    test: str = "",
) -> str:
    """A booktabs table: configurations (rows) × data sets (columns), mean ± sd over seeds.

    Parameters
    ----------
    mean, sd
        Configurations × data sets: mean and standard deviation over seeds (lower is better).
    degenerate
        Same shape, True where the configuration's runs are degenerate there (marked †).
    worse
        Same shape, True where the configuration is significantly worse than the best one
        of that data set (marked *).
    percent
        Show errors as percentages.
    caption
        Caption text (LaTeX-escaped here).
    metric
        What the numbers are, for the legend.
    alpha, test
        Significance level and the test behind ``worse``, for the legend.
    """
    scale = 100.0 if percent else 1.0
    fmt = "{:.2f}" if percent else "{:.4g}"
    cols = list(mean.columns)
    best = {c: mean[c].min(skipna=True) for c in cols}
    marked = False
    lines = [
        "% kbench: requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        "\\begin{tabular}{l" + "r" * len(cols) + "}",
        "\\toprule",
        "Configuration & " + " & ".join(latex_escape(c) for c in cols) + " \\\\",
        "\\midrule",
    ]
    for label in mean.index:
        cells = [latex_escape(label)]
        for c in cols:
            m = mean.at[label, c]
            if m is None or not np.isfinite(m):
                cells.append("--")
                continue
            s = sd.at[label, c] if label in sd.index and c in sd.columns else np.nan
            text = fmt.format(scale * m)
            if s is not None and np.isfinite(s):
                text += " $\\pm$ " + fmt.format(scale * s)
            if m == best[c]:
                text = "\\textbf{" + text + "}"
            if worse is not None and bool(worse.get(c, pd.Series(dtype=bool)).get(label, False)):
                text += SIGNIFICANT_TEX
            if degenerate is not None and bool(
                degenerate.get(c, pd.Series(dtype=bool)).get(label, False)
            ):
                text += DEGENERATE_TEX
                marked = True
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    unit = " (\\%)" if percent else ""
    legend = (
        f"Mean {latex_escape(metric)}{unit} $\\pm$ standard deviation over seeds; lowest in bold."
    )
    if worse is not None:
        legend += (
            f" {SIGNIFICANT_TEX}: significantly worse than the best configuration of the "
            f"data set ({latex_escape(test) or 'test over seeds'}, Holm, $\\alpha = {alpha:g}$)."
        )
    if marked:  # the mark explained where it is used
        legend += f" {DEGENERATE_TEX}: {latex_escape(LEGEND.removeprefix(MARK + ' '))}."
    lines += [
        "\\bottomrule",
        "\\end{tabular}",
        "\\caption{" + (latex_escape(caption) + " " if caption else "") + legend + "}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"
