"""A self-contained HTML report of a results folder.

One file, no network needed to view it: the CSS and script are inline and every plot is
drawn by matplotlib's SVG canvas and embedded as inline SVG whose text stays text
(:mod:`kbench.report.plots`). What each section shows is computed in
:mod:`kbench.report.sections`; the markup is in the jinja2 templates of
``kbench/report/templates``, rendered with autoescaping, so every label, spec and reason
from the results is escaped (only the figures' SVG is marked safe, in ``macros.html.j2``).

jinja2 and matplotlib are imported when a report is rendered, not when kbench starts.
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from kbench._version import __version__
from kbench.analysis.comparison import Comparison
from kbench.analysis.groups import experiment_groups
from kbench.core.errors import ResultsError
from kbench.core.extras import require
from kbench.core.fileio import atomic_write_text
from kbench.core.specs import short_names
from kbench.report import sections
from kbench.report.plots import PALETTE
from kbench.report.tuning import tuning_rows
from kbench.results.store import Results

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup


def _spec(value: Any) -> Markup:
    """A spec string, escaped, that may break after its commas (``<wbr>``)."""
    from markupsafe import Markup, escape

    return Markup(str(escape(sections.text(value))).replace(",", ",<wbr>"))


@functools.cache
def environment() -> jinja2.Environment:
    """The jinja2 environment of the report's templates (shipped as package data)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("kbench.report", "templates"),
        # Every template is HTML (or CSS and script included into it): escape everything
        # that is not marked safe, whatever the file name.
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["spec"] = _spec
    return env


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
        The comparison of the results (:func:`kbench.analysis.comparison.compare`).
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
    names = short_names(streams)
    seeds_per = runs.groupby("stream")["seed"].nunique()
    groups, _ = experiment_groups(cmp)
    datasets = []
    for i, stream in enumerate(streams):
        d = sections.dataset(cmp, stream, lb, traces, colours, references)
        d["id"] = sections.slug(stream, i)
        datasets.append(d)
    failed = sections.failed_rows(runs[runs["status"] != "ok"])
    tuning = tuning_rows(cmp)  # tuned studies: accuracy beside tuning cost
    nav = [
        {"id": "summary", "name": "Summary", "title": ""},
        {"id": "across", "name": "Across data sets", "title": ""},
        *({"id": d["id"], "name": names[d["stream"]], "title": d["stream"]} for d in datasets),
        *([{"id": "tuning", "name": "Tuning cost", "title": ""}] if tuning else []),
        {"id": "configurations", "name": "Configurations", "title": ""},
        *([{"id": "failed", "name": "Not finished", "title": ""}] if failed else []),
        {"id": "run", "name": "Run", "title": ""},
    ]
    context = {
        "title": title,
        "version": __version__,
        "generated": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "alpha": f"{cmp.alpha:g}",
        "colours": colours,
        "chips": [
            (len(labels), "configurations"),
            (len(streams), "data sets"),
            (int(seeds_per.max()) if len(seeds_per) else 0, "seeds per data set"),
            (f"{int((runs['status'] == 'ok').sum())} / {len(runs)}", "tasks finished"),
            (len(cmp.seeds), "pairs tested over seeds"),
        ],
        "nav": nav,
        "notes": sections.notes(cmp, groups),
        "summary": sections.summary(cmp, lb, colours, names, groups),
        "across": sections.across(cmp, colours),
        "datasets": datasets,
        "configurations": sections.configurations(cmp),
        "tuning": tuning,
        "failed": failed,
        "run": sections.run_metadata(cmp, source),
    }
    return environment().get_template("report.html.j2").render(context)


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
    require("report", "the HTML report")
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
