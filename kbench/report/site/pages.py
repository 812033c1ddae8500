"""The site's pages, tables and figures, from the studies' summaries.

Every page is rendered from the jinja2 templates in ``kbench/report/templates/site`` with
autoescaping; the figures are files beside the pages (``figures/``), each as SVG and PDF;
every data set's leaderboard is also a CSV, a Markdown and a LaTeX file (``tables/``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import inspect
import typing
from typing import Any

import pandas as pd

from kbench.analysis.tables import latex_results, to_csv, to_markdown
from kbench.core.registry import Registry
from kbench.core.specs import short_names, spec_name
from kbench.report.site import figures
from kbench.report.site.files import SiteFiles
from kbench.report.site.summary import Summary
from kbench.results.degenerate import LEGEND, MARK

Row = dict[str, Any]

#: The explorer's columns: (key, heading, kind); kind "num" sorts numerically.
COLUMNS = (
    ("study", "Study", "text"),
    ("label", "Learner", "text"),
    ("family", "Family", "text"),
    ("budget", "Budget", "num"),
    ("tuned", "Tuning", "text"),
    ("seeds", "Seeds", "num"),
    ("online_error", "Online error", "num"),
    ("test_error", "Held-out error", "num"),
    ("n_support", "Support vectors", "num"),
    ("us_per_example", "µs / example", "num"),
    ("verdict", "Over seeds", "text"),
)


def slug(text: str) -> str:
    """A file-name-safe name of a spec: its name and a digest of the whole spec."""
    base = "".join(c if c.isalnum() else "-" for c in spec_name(text).lower()).strip("-")
    return f"{base or 'x'}-{hashlib.sha1(text.encode()).hexdigest()[:6]}"


def _error(value: Any, sd: Any, task: str) -> str:
    """An error and its sd over seeds: percent points, or a mean squared error."""
    if value is None:
        return "–"
    if task == "regression":
        return f"{value:.4g}" + (f" ± {sd:.2g}" if sd is not None else "")
    return f"{100 * value:.2f}" + (f" ± {100 * sd:.2f}" if sd is not None else "")


def _num(value: Any, fmt: str) -> str:
    return "–" if value is None else format(value, fmt)


def _cells(r: Row, study_href: str, learner_href: str) -> Row:
    """One explorer row: display text, sort values and filter values."""
    task = r["task"]
    return {
        **r,
        "study_href": study_href,
        "learner_href": learner_href,
        "budget_text": "–" if r["budget"] is None else str(r["budget"]),
        "budget_kind": "budgeted" if r["budget"] else "no budget",
        "tuned_text": "tuned" if r["tuned"] else "no",
        "online_text": _error(r["online_error"], r["online_error_sd"], task),
        "test_text": _error(r["test_error"], r["test_error_sd"], task),
        "support_text": _num(r["n_support"], ".0f"),
        "speed_text": _num(r["us_per_example"], ".3g"),
        "marked": bool(r["flags"]),
    }


def _when(record: dict[str, Any], summary: Summary) -> str:
    if record.get("started"):
        return str(record["started"])[:16].replace("T", " ")
    t = summary.get("started")
    return _dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M") if t else "–"


def _study_row(s: Summary) -> Row:
    """The index's line of a study: provenance (its latest record, else its runs')."""
    records = s["provenance"]
    last = records[-1] if records else {}
    m = s["machine"]
    streams = sorted({r["stream"] for r in s["rows"]})
    return {
        "id": s["id"],
        "name": s["name"],
        "path": s["path"],
        "when": _when(last, s),
        "command": last.get("command", "") or "(not recorded)",
        "study_file": last.get("study_file", ""),
        "study_text": last.get("study_text", ""),
        "kbench": last.get("kbench") or ", ".join(s["written_by"]) or "?",
        "commit": last.get("commit", "") or "–",
        "python": last.get("python") or m.get("python", "?"),
        "numpy": last.get("numpy") or m.get("numpy", "?"),
        "blas": last.get("blas", "") or "–",
        "cpu": last.get("cpu") or m.get("processor", "?"),
        "cores": last.get("cores") or m.get("cores", "?"),
        "tasks": f"{s['tasks_ok']} / {s['tasks']}",
        "compared": f"{len(s['labels'])} learners × {len(streams)} data sets",
        "records": records,
        "notes": s["notes"],
    }


def _table_files(stream: str, rows: list[Row], name: str) -> dict[str, str]:
    """The leaderboard of one data set as CSV, Markdown and LaTeX."""
    frame = pd.DataFrame(
        [
            {
                "study": r["study"],
                "learner": r["label"],
                "spec": r["spec"],
                "seeds": r["seeds"],
                "online_error": r["online_error"],
                "online_error_sd": r["online_error_sd"],
                "test_error": r["test_error"],
                "n_support": r["n_support"],
                "us_per_example": r["us_per_example"],
                "verdict_over_seeds": r["verdict"],
                "degenerate": r["flags"],
            }
            for r in rows
        ]
    )
    keys = [f"{r['label']} ({r['study']})" for r in rows]
    mean = pd.DataFrame({name: [r["online_error"] for r in rows]}, index=keys, dtype=float)
    sd = pd.DataFrame({name: [r["online_error_sd"] for r in rows]}, index=keys, dtype=float)
    degenerate = pd.DataFrame({name: [bool(r["flags"]) for r in rows]}, index=keys)
    regression = bool(rows) and rows[0]["task"] == "regression"
    return {
        "csv": to_csv(frame),
        "md": to_markdown(frame, title=f"Leaderboard: {stream}"),
        "tex": latex_results(
            mean,
            sd,
            degenerate=degenerate,
            percent=not regression,
            caption=f"Online error on {stream}, mean ± sd over seeds.",
            metric="mean squared error" if regression else "error",
        ),
    }


def _figure(write: SiteFiles, kind: str, draw: str, **kwargs: Any) -> str:
    """The stem of a figure's files (``kind`` and a digest of its data); the figure is
    queued for drawing (``draw``, a function of :mod:`.figures`, with ``kwargs``) unless
    its files exist."""
    stem = figures.digest(kind, kwargs)
    folder = write.site / "figures"
    if not ((folder / f"{stem}.svg").is_file() and (folder / f"{stem}.pdf").is_file()):
        write.figures.append((stem, draw, kwargs))
    for ext in ("svg", "pdf"):
        write.keep(f"figures/{stem}.{ext}")
    return stem


def _dataset_figures(write: SiteFiles, stream: str, rows: list[Row], curves: dict) -> list[Row]:
    """The error-against-speed (Pareto front marked), error-against-size and curve figures."""
    task = rows[0]["task"]
    err = "mean squared error" if task == "regression" else "online error"
    scale = 1.0 if task == "regression" else 100.0
    ylabel = err if task == "regression" else f"{err} (%)"
    ok = [r for r in rows if r["online_error"] is not None]
    out = []
    speed = [
        (r["key"], r["family"], r["us_per_example"], scale * r["online_error"])
        for r in ok
        if r["us_per_example"] is not None and r["us_per_example"] > 0
    ]
    if speed:
        stem = _figure(
            write,
            "speed",
            "scatter_figure",
            points=speed,
            title=f"{stream}: {err} against time",
            xlabel="µs per example (log)",
            ylabel=ylabel,
            mark_front=True,
            caption="Mean over seeds, coloured by learner family; numbered: the Pareto front "
            f"(no result is both faster and more accurate). Data set {stream}.",
        )
        out.append({"stem": stem, "title": f"{err.capitalize()} against time per example"})
    size = [
        (r["key"], r["family"], r["n_support"], scale * r["online_error"])
        for r in ok
        if r["n_support"]
    ]
    if size:
        stem = _figure(
            write,
            "size",
            "scatter_figure",
            points=size,
            title=f"{stream}: {err} against model size",
            xlabel="support vectors (log)",
            ylabel=ylabel,
            caption=f"Mean over seeds of the final model size and the {err}, coloured by "
            f"learner family. Data set {stream}.",
        )
        out.append({"stem": stem, "title": f"{err.capitalize()} against model size"})
    best = [r["key"] for r in ok if r["key"] in curves][: figures.MAX_NAMED]
    if best:
        which = f"the {len(best)} best of {len(ok)} results" if len(ok) > len(best) else ""
        stem = _figure(
            write,
            "curves",
            "curves_figure",
            curves={k: [curves[k][0], [scale * y for y in curves[k][1]]] for k in best},
            title=f"{stream}: learning curves",
            ylabel=ylabel,
            caption=f"{err.capitalize()} so far against examples seen, mean over seeds"
            f"{': ' + which if which else ''}. Data set {stream}.",
        )
        out.append({"stem": stem, "title": "Learning curves"})
    return out


def _parameters(cls: Any) -> list[Row]:
    """A learner's declared parameters: name, type, default, range, doc."""
    out = []
    for p in cls.parameters().values():
        choices = typing.get_args(p.annotation) if typing.get_origin(p.annotation) else ()
        if typing.get_origin(p.annotation) is typing.Literal:
            ann = " | ".join(map(repr, choices))
        else:
            ann = getattr(p.annotation, "__name__", None) or str(p.annotation)
            ann = ann.replace("typing.", "")
        lo = "" if p.low is None else ("(" if p.low_open else "[") + f"{p.low:g}"
        hi = "" if p.high is None else f"{p.high:g}" + (")" if p.high_open else "]")
        rng = f"{lo or '(−∞'}, {hi or '∞)'}" if (lo or hi) else ""
        out.append(
            {"name": p.name, "type": ann, "default": repr(p.default), "range": rng, "doc": p.doc}
        )
    return out


def _learner(name: str, registry: Registry) -> Row:
    """What the registry says of a learner: family, plugin, paper, docstring, parameters."""
    try:
        entry = registry.entry("algorithm", name)
    except Exception:  # a learner whose plugin is not installed where the site is built
        return {
            "name": name,
            "plugin": "not installed here",
            "doc": "",
            "first": "",
            "paper": "",
            "params": [],
        }
    doc = inspect.cleandoc(entry.cls.__doc__ or "")
    return {
        "name": name,
        "plugin": f"{entry.plugin} {entry.version}",
        "first": doc.split("\n\n", 1)[0].replace("\n", " "),
        "paper": getattr(entry.cls, "paper", ""),
        "doc": doc,
        "params": _parameters(entry.cls),
        "tasks": ", ".join(sorted(entry.cls.tasks)),
    }


def write_site(
    summaries: list[Summary], context: dict[str, Any], registry: Registry, write: SiteFiles
) -> None:
    """Render every page of the site from the summaries and write it with ``write``."""
    from kbench.report.html import environment

    env = environment()
    studies = [_study_row(s) for s in summaries]
    several = len(summaries) > 1
    rows: list[Row] = []
    curves: dict[str, dict[str, list[list[float]]]] = {}
    for s in summaries:
        for r in s["rows"]:
            key = f"{r['label']} ({s['name']})" if several else r["label"]
            rows.append(
                {
                    **_cells(r, f"../studies/{s['id']}.html", f"../learners/{r['algorithm']}.html"),
                    "study": s["name"],
                    "key": key,
                }
            )
        for stream, per in s["curves"].items():
            for label, c in per.items():
                curves.setdefault(stream, {})[f"{label} ({s['name']})" if several else label] = c
    streams = sorted({r["stream"] for r in rows})
    names = short_names(streams)
    datasets = []
    for stream in streams:
        board = sorted(
            (r for r in rows if r["stream"] == stream),
            key=lambda r: (r["online_error"] is None, r["online_error"] or 0.0, r["key"]),
        )
        page = slug(stream)
        tables = _table_files(stream, board, names[stream])
        for ext, text in tables.items():
            write(f"tables/{page}.{ext}", text)
        figs = _dataset_figures(write, stream, board, curves.get(stream, {}))
        best = next((r for r in board if r["online_error"] is not None), None)
        d = {
            "stream": stream,
            "name": names[stream],
            "page": page,
            "task": board[0]["task"],
            "rows": board,
            "figures": figs,
            "best": best["key"] if best else "–",
            "studies": len({r["study"] for r in board}),
            "learners": len(board),
            "facets": _facets(board),
        }
        datasets.append(d)
        write(
            f"datasets/{page}.html",
            env.get_template("site/dataset.html.j2").render(
                context, root="../", d=d, columns=COLUMNS, legend=LEGEND, mark=MARK
            ),
        )
    learners = []
    by_stream = {d["stream"]: d for d in datasets}
    for name in sorted({r["algorithm"] for r in rows}):
        mine = [r for r in rows if r["algorithm"] == name]
        info = _learner(name, registry)
        for r in mine:
            r["dataset_href"] = f"../datasets/{by_stream[r['stream']]['page']}.html"
            r["dataset_name"] = by_stream[r["stream"]]["name"]
        info.update(family=mine[0]["family"], rows=mine, results=len(mine))
        learners.append(info)
        write(
            f"learners/{name}.html",
            env.get_template("site/learner.html.j2").render(
                context, root="../", learner=info, legend=LEGEND, mark=MARK
            ),
        )
    for s, st in zip(summaries, studies, strict=True):
        st["figure"] = None
        if s["ranking"]:
            st["figure"] = _figure(
                write,
                "cd",
                "cd_figure",
                ranking=s["ranking"],
                caption=f"Mean ranks over {s['ranking']['n_datasets']} data sets; bars join "
                f"learners the Nemenyi test does not separate. Study {s['name']}.",
            )
        st["datasets"] = [by_stream[x] for x in sorted({r["stream"] for r in s["rows"]})]
        write(
            f"studies/{s['id']}.html",
            env.get_template("site/study.html.j2").render(context, root="../", s=st),
        )
    write("assets/site.css", env.get_template("site/site.css.j2").render())
    write("assets/site.js", env.get_template("site/site.js.j2").render())
    write(
        "index.html",
        env.get_template("site/index.html.j2").render(
            context, root="", studies=studies, datasets=datasets, learners=learners
        ),
    )


def _facets(rows: list[Row]) -> dict[str, list[str]]:
    """The values each filter of a data set's explorer offers."""
    return {
        "family": sorted({r["family"] for r in rows}),
        "task": sorted({r["task"] for r in rows}),
        "budget": sorted({r["budget_kind"] for r in rows}),
        "tuning": sorted({r["tuned_text"] for r in rows}),
    }
