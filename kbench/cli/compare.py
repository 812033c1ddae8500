"""The ``kbench compare`` and ``kbench report`` commands (registered on the ``kbench`` group)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import click
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbench.analysis.tables import output_console
from kbench.cli.options import NonEmptyPath
from kbench.core.errors import ResultsError
from kbench.results.degenerate import LEGEND as DEGENERATE_LEGEND
from kbench.results.degenerate import MARK as DEGENERATE_MARK

METRIC_CHOICE = click.Choice(["online_error", "test_error", "final_epoch_error"])
err = Console(stderr=True)


def _short() -> Any:
    """A spec shortener for labels, or None when the registry cannot load (labels stay full).

    It is the registry's ``short``; for a spec the registry no longer resolves (a parameter
    renamed since the run, say) it still drops the parameters left at a declared default.
    """
    try:
        from kbench.core.components import format_value
        from kbench.core.registry import get_registry
        from kbench.core.specs import format_spec, parse_spec, quote_value

        registry = get_registry()
    except Exception:  # a broken plugin must not stop reading results
        return None

    def short(kind: str, spec: str) -> str:
        out = registry.short(kind, spec)
        if out != spec:
            return out
        try:
            name, params = parse_spec(spec)
            declared = registry.entry(kind, name).cls.parameters()
        except Exception:  # unknown component: show the spec as it was run
            return spec
        keep = [
            (k, v)
            for k, v in params.items()
            if k not in declared or quote_value(v) != format_value(declared[k].default)
        ]
        return format_spec(name, keep)

    return short


def _load(
    results: Path,
    metric: str,
    alpha: float,
    rope: float | None = None,
    tune_budget: int | None = None,
) -> tuple[Any, Any]:
    """The results tables of a folder and their comparison (of the runs tuned with
    ``tune_budget`` configurations only, when given)."""
    from kbench.analysis.comparison import compare
    from kbench.results.store import load_results
    from kbench.results.tuning import at_tuning_budget

    if not results.exists():
        raise ResultsError(
            f"results folder {results} does not exist; run kbench run --out {results} first"
        )
    tables = load_results(results)
    if tune_budget is not None:
        tables = at_tuning_budget(tables, tune_budget)
    return tables, compare(tables, metric=metric, alpha=alpha, short=_short(), rope=rope)


def _f(value: Any, spec: str = ".4f") -> str:
    if value is None or (isinstance(value, float) and (math.isnan(value))):
        return "–"
    if isinstance(value, float) and math.isinf(value):
        return "∞"
    return format(value, spec)


def _p(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if value < 1e-16:  # below double precision's resolution next to 1
        return "<1e-16"
    return f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _pct(value: Any) -> str:
    return _f(100 * value if isinstance(value, (int, float)) else value, ".2f") + (
        "%" if isinstance(value, (int, float)) and not math.isnan(value) else ""
    )


def _pp(value: Any) -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return "–"
    return f"{100 * value:+.2f} pp"


def _pair(a: str, b: str) -> str:
    return f"[bold]A[/bold] {a}\n[bold]B[/bold] {b}"


def _res(result: str, reason: str = "") -> str:
    """The verdict cell: A, B or tie, or why there is none (too few seeds)."""
    if result == "n/a":
        return f"[yellow]not available[/yellow]: {escape(reason)}"
    if result == "cannot tell":
        return f"[yellow]cannot tell[/yellow]: {escape(reason)}"
    return {"win": "[green]A[/green]", "loss": "[red]B[/red]", "tie": "[dim]tie[/dim]"}.get(
        result, result
    )


def _write_outputs(cmp: Any, csv_path: Path | None, json_path: Path | None) -> None:
    from kbench.core.fileio import atomic_write_text

    for path, content in (
        (csv_path, lambda: cmp.long_table().to_csv(index=False)),
        (json_path, lambda: json.dumps(cmp.to_dict(), indent=2, allow_nan=False)),
    ):
        if path is None:
            continue
        try:
            atomic_write_text(path, content())
        except OSError as exc:
            raise ResultsError(f"cannot write {path}: {exc.strerror or exc}") from None
        err.print(f"kbench: wrote {path}", highlight=False)


def print_comparison(cmp: Any, console: Console, streams: bool = False) -> None:
    """Print a comparison as rich tables: per data set, across data sets, win/tie/loss."""
    labels = cmp.labels
    # Degenerate marks per data set (and per seed): kbench.results.degenerate's reasons, carried by
    # the runs' ``flags``; a configuration degenerate on one data set is not marked on others.
    bad = cmp.runs[(cmp.runs["status"] == "ok") & (cmp.runs["flags"] != "")]
    flagged_in = {(str(r.stream), str(r.label)) for r in bad.itertuples()}
    flagged_seed = {(str(r.stream), _seed(r.seed), str(r.label)) for r in bad.itertuples()}

    def mark(on: bool) -> str:
        return f" [yellow]{DEGENERATE_MARK}[/yellow]" if on else ""

    seeds = cmp.seeds
    pairs = cmp.pairs
    tasks = cmp.runs.drop_duplicates("stream").set_index("stream")["task"]
    for stream, group in seeds.groupby("stream", sort=True):  # one table per data set
        sp = pairs[pairs["stream"] == stream]

        def lab(x: str, stream: str = str(stream)) -> str:
            return escape(x) + mark((stream, str(x)) in flagged_in)

        regression = tasks.get(stream) == "regression"
        err_fmt = (lambda v: _f(v, ".4g")) if regression else _pct
        diff_fmt = (lambda v: _f(v, "+.4g")) if regression else _pp
        n_seeds = int(group["n_pairs"].max())
        t = Table(
            title=f"[bold]{escape(str(stream))}[/bold]: every pair, {n_seeds} seed(s)"
            + (" (mean squared error)" if regression else ""),
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        t.add_column("pair", overflow="fold", min_width=16, ratio=1)
        for col in (
            "error\nA",
            "error\nB",
            "A − B\n[95% CI over seeds]",
            "seeds\nA/=/B",
            "p\nHolm",
            "min p",
            "better",
        ):
            t.add_column(
                col,
                justify="left" if col == "better" else "right",
                no_wrap=col != "better",
                overflow="fold",
            )
        for r in group.itertuples():
            ci = diff_fmt(r.mean_diff)
            if isinstance(r.ci_low, float) and not math.isnan(r.ci_low):
                ci += f"\n\\[{diff_fmt(r.ci_low)}, {diff_fmt(r.ci_high)}]"
            t.add_row(
                _pair(lab(r.a), lab(r.b)),
                err_fmt(r.mean_a),
                err_fmt(r.mean_b),
                ci,
                f"{r.a_better}/{r.equal}/{r.b_better}",
                _p(r.p_holm),
                _p(r.min_p) if r.n_pairs >= 2 else "–",
                _res(r.result, r.reason),
            )
        console.print(t)
        if streams:
            for (sid, seed), g in sp.groupby(["stream_id", "seed"], sort=False):
                st = Table(
                    title=f"  stream {sid} (seed {seed}, n={int(g['n'].iloc[0])})",
                    title_justify="left",
                    box=box.SIMPLE_HEAD,
                )
                st.add_column("pair", overflow="fold", min_width=16, ratio=1)
                for col in (
                    "error\nA",
                    "error\nB",
                    "only A\nwrong" if not regression else "A\nworse",
                    "only B\nwrong" if not regression else "B\nworse",
                    "A − B" + ("" if regression else " (pp)"),
                    "fewer\nerrors",
                ):
                    st.add_column(
                        col, justify="left" if col == "fewer\nerrors" else "right", no_wrap=True
                    )
                for r in g.itertuples():
                    d_fmt = (
                        (lambda v: _f(v, "+.3g")) if regression else (lambda v: _f(100 * v, "+.2f"))
                    )
                    st.add_row(
                        _pair(lab(r.a), lab(r.b)),
                        err_fmt(r.err_a),
                        err_fmt(r.err_b),
                        str(r.a_worse),
                        str(r.b_worse),
                        d_fmt(r.diff),
                        {"win": "A", "loss": "B"}.get(r.result, "same"),
                    )
                console.print(st)
    if len(seeds):
        console.print(
            "[dim]better: exact Wilcoxon signed-rank test on the seeds' final "
            f"{cmp.metric.replace('_', ' ')}s, Holm over the pairs of the data set, α = "
            f"{cmp.alpha:g}; A − B: mean over seeds with its t interval; seeds A/=/B: seeds where "
            "A had the lower, the same, the higher error; min p: the smallest p-value the test "
            "can give with these seeds. Per-stream rows (--streams) describe one stream order "
            "and test nothing (docs/statistics.md).[/dim]",
            highlight=False,
        )

    groups: list[Any] = []
    if len(labels) >= 2:
        groups = print_groups(cmp, console, tasks, flagged_in, flagged_seed)
        if len(cmp.ranking.pairs) and len(cmp.ranking.values) >= 2:
            print_dataset_pairs(cmp, console, escape)

    if len(labels) >= 2 and len(cmp.wtl):
        # One matrix per experiment group: configurations of different groups never ran on
        # the same stream, so a matrix across groups would be mostly empty.
        members = [
            (g.name, [x for x in labels if x in set(g.values.columns) | set(g.mean_ranks.index)])
            for g in groups
        ]
        if len(members) <= 1:
            members = [("", list(labels))]
        idx = {(r.a, r.b): (r.wins, r.ties, r.losses) for r in cmp.wtl.itertuples()}
        for name, group_labels in members:
            if len(group_labels) < 2:
                continue
            t = Table(
                title="[bold]win/tie/loss over streams[/bold]"
                + (f" of {escape(name)}" if name else "")
                + " (row against column: streams where the row made fewer / as many / more "
                "errors; a count, not a test)",
                title_justify="left",
                box=box.SIMPLE_HEAD,
            )
            t.add_column("")
            for k in range(1, len(group_labels) + 1):
                t.add_column(str(k), justify="center")
            for k, a in enumerate(group_labels, 1):
                cells = [f"{k} {escape(a)}"]
                for b in group_labels:
                    if a == b:
                        cells.append("[dim]·[/dim]")
                    elif (a, b) in idx:
                        w, ti, lo = idx[(a, b)]
                        colour = "green" if w > lo else "red" if lo > w else "white"
                        cells.append(f"[{colour}]{w}/{ti}/{lo}[/{colour}]")
                    else:
                        cells.append("[dim]–[/dim]")
                t.add_row(*cells)
            console.print(t)

    failed = cmp.runs[cmp.runs["status"] != "ok"]
    if len(failed):
        t = Table(
            title="[bold]tasks that did not finish[/bold]",
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        for col in ("configuration", "stream", "seed", "status", "reason"):
            t.add_column(col)
        for r in failed.itertuples():
            t.add_row(
                escape(str(r.label)),
                escape(str(r.stream)),
                str(r.seed),
                f"[red]{escape(str(r.status))}[/red]",
                escape(str(r.reason)),
            )
        console.print(t)
    for note in cmp.notes:
        if note.startswith(_RANKING_NOTES):
            continue  # the groups above say what was ranked and what was left out
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)


_RANKING_NOTES = ("left out of the ranking across data sets", "ranks across data sets need")
"""Comparison notes about the one ranking across every data set, which the terminal output
replaces by the experiment groups of :func:`kbench.analysis.groups.experiment_groups`."""


def _seed(seed: Any) -> str:
    """A seed as the experiment groups name their seed blocks."""
    try:
        f = float(seed)
    except (TypeError, ValueError):
        return str(seed)
    return f"{int(f)}" if f.is_integer() else str(seed)


def print_tuning(cmp: Any, console: Console) -> None:
    """Accuracy beside tuning cost, per data set, when the folder holds tuned runs."""
    from kbench.analysis.tuning import tuning_table

    table = tuning_table(cmp.runs, cmp.metric)
    if table.empty:
        return
    t = Table(
        title="[bold]accuracy and tuning cost[/bold] (the cost of the tuning runs each "
        "configuration was selected by: configurations tried, runs, examples, kernel "
        "evaluations, learner seconds)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for col in ("data set", "configuration", "error", "selected", "configs", "runs"):
        t.add_column(col, overflow="fold", justify="left" if col != "error" else "right")
    for col in ("examples", "kernel evals", "seconds"):
        t.add_column(col, justify="right")
    for r in table.itertuples():
        sd = "" if math.isnan(r.error_sd) else f" ± {_pct(r.error_sd)}"
        t.add_row(
            escape(str(r.stream)),
            escape(str(r.configuration)),
            _pct(r.error) + sd,
            escape(r.selected) or "–",
            _f(r.tune_configs, ".0f"),
            _f(r.tune_runs, ".0f"),
            _f(r.tune_examples, ",.0f"),
            _f(r.tune_kernel_evals, ".3g"),
            _f(r.tune_seconds, ".2f"),
        )
    console.print(t)


def print_groups(
    cmp: Any,
    console: Console,
    tasks: Any,
    flagged_in: set[tuple[str, str]],
    flagged_seed: set[tuple[str, str, str]],
) -> list[Any]:
    """Mean ranks, Friedman and the Nemenyi groups per experiment group, as the report
    ranks them (:func:`kbench.analysis.groups.experiment_groups`): data sets that ran the same
    configurations form a group, ranked over its data sets, or over its seeds when it has
    one data set. A sentence says what was grouped and why; each cell carries the
    degenerate mark of that data set (or seed)."""
    from kbench.analysis.groups import experiment_groups

    groups, sentence = experiment_groups(cmp)
    if not groups:
        return groups
    console.print(f"[bold]across data sets[/bold]: {escape(sentence)}", highlight=False)
    for g in groups:
        by_sets = g.blocks == "data sets"
        short = short_stream_names(list(g.streams))
        stream_of = {v: k for k, v in short.items()} | {s: s for s in g.streams}
        title = (
            f"[bold]{escape(g.name)}[/bold]: mean rank over its {len(g.values)} "
            f"{g.blocks if len(g.values) != 1 else g.blocks[:-1]} "
            "(1 = lowest error)"
        )
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        t.add_column("#", justify="right")
        t.add_column("configuration", overflow="fold")
        t.add_column("mean rank", justify="right")
        for b in g.values.index:
            t.add_column(escape(str(b) if by_sets else f"seed {b}"), justify="right")
        ranked = list(g.mean_ranks.index) or list(g.values.columns)
        for i, label in enumerate(ranked, 1):
            mr = float(g.mean_ranks.get(label, math.nan))
            cells = [str(i), escape(str(label)), _f(mr, ".2f")]
            for b in g.values.index:
                stream = stream_of.get(str(b), str(b)) if by_sets else g.streams[0]
                v = float(g.values.loc[b, label])
                rnk = float(g.ranks.loc[b, label]) if label in g.ranks.columns else math.nan
                text = _f(v, ".4g") if tasks.get(stream) == "regression" else _pct(v)
                if not math.isnan(rnk):
                    text += f" ({rnk:g})"
                if rnk == 1:
                    text = f"[bold green]{text}[/bold green]"
                bad = (
                    (stream, str(label)) in flagged_in
                    if by_sets
                    else (stream, str(b), str(label)) in flagged_seed
                )
                cells.append(text + (f" [yellow]{DEGENERATE_MARK}[/yellow]" if bad else ""))
            t.add_row(*cells)
        console.print(t)
        fr = g.friedman
        if g.rankable:
            console.print(
                f"Friedman over {fr['N']} {g.blocks} and {fr['k']} configurations: "
                f"χ² = {_f(fr['chi2'], '.3f')} (p = {_p(fr['p_chi2'])}), "
                f"Iman–Davenport F = {_f(fr['F'], '.3f')} (p = {_p(fr['p_F'])}); "
                f"Nemenyi critical difference {_f(fr['cd'], '.3f')} at α = {cmp.alpha:g}.",
                highlight=False,
            )
            sets = (
                "; ".join("{" + ", ".join(x) + "}" for x in g.cd_groups)
                or "none (every pair is separated)"
            )
            console.print(
                f"Groups not separated by the Nemenyi test: {escape(sets)}", highlight=False
            )
        else:
            console.print(
                f"Not ranked: {len(g.mean_ranks) or len(g.values.columns)} configuration(s) "
                f"over {len(g.values)} complete "
                f"{g.blocks if len(g.values) != 1 else g.blocks[:-1]}; a ranking needs at least "
                "two of each.",
                highlight=False,
            )
        if g.left_out:
            console.print(
                f"[dim]Left out of this ranking: {escape('; '.join(g.left_out))}[/dim]",
                highlight=False,
            )
    return groups


def print_dataset_pairs(cmp: Any, console: Console, lab: Any) -> None:
    """Every ranked pair over the data sets: exact signed-rank test with Holm, and the
    Bayesian signed-rank probabilities when a region of practical equivalence was given."""
    pairs = cmp.ranking.pairs
    if pairs.empty:
        return
    bayes = "p_rope" in pairs.columns
    regression = (cmp.runs["task"] == "regression").all()
    t = Table(
        title="[bold]pairs across data sets[/bold] (mean errors per data set; exact Wilcoxon "
        f"signed-rank over data sets, Holm, α = {cmp.alpha:g}"
        + (f"; Bayesian signed-rank with ROPE ±{cmp.rope:g}" if bayes else "")
        + ")",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    t.add_column("pair", overflow="fold", min_width=16, ratio=1)
    cols = ["A − B", "data sets\nA/=/B", "p\nHolm"]
    cols += ["P(A\nbetter)", "P(equi-\nvalent)", "P(B\nbetter)"] if bayes else []
    for col in cols:
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("better", overflow="fold")
    for r in pairs.itertuples():
        cells = [
            _pair(lab(r.a), lab(r.b)),
            _f(r.mean_diff, "+.4g") if regression else _pp(r.mean_diff),
            f"{r.a_better}/{r.equal}/{r.b_better}",
            _p(r.p_holm),
        ]
        if bayes:
            cells += [_f(r.p_a_better, ".3f"), _f(r.p_rope, ".3f"), _f(r.p_b_better, ".3f")]
        t.add_row(*cells, _res(r.result, r.reason))
    console.print(t)


def short_stream_names(streams: list[str]) -> dict[str, str]:
    """Data-set names for display when they tell the streams apart, full labels otherwise."""
    base = {s: str(s).split("[")[0] for s in streams}
    return base if len(set(base.values())) == len(base) else {s: str(s) for s in streams}


@click.command()
@click.argument("results", type=NonEmptyPath(path_type=Path))
@click.option(
    "--metric",
    type=METRIC_CHOICE,
    default="online_error",
    show_default=True,
    help="Final error compared across seeds and data sets "
    "(per-stream tests always use the online outcomes).",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option(
    "--rope",
    type=float,
    default=None,
    help="Also run the Bayesian signed-rank test across data sets with this region of "
    "practical equivalence on the error difference (0.01 = one point).",
)
@click.option(
    "--streams", "show_streams", is_flag=True, help="Also print every pair on every single stream."
)
@click.option(
    "--csv",
    "csv_path",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="Write every pairwise test (all levels) to this CSV file.",
)
@click.option(
    "--json",
    "json_path",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="Write every table to this JSON file.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "latex", "csv", "json"]),
    default="table",
    show_default=True,
    help="table: terminal tables; markdown: per data set, configurations and pairs; latex: "
    "one booktabs table (mean ± sd over seeds, best in bold, marks and legend); csv: every "
    "pairwise test; json: every table.",
)
@click.option(
    "--tune-budget",
    type=click.IntRange(min=1),
    default=None,
    help="Compare only the runs tuned with this many configurations (tune = {budget = N}), "
    "so every learner had the same tuning budget.",
)
def compare(
    results: Path,
    metric: str,
    alpha: float,
    rope: float | None,
    show_streams: bool,
    csv_path: Path | None,
    json_path: Path | None,
    fmt: str,
    tune_budget: int | None,
) -> None:
    """Compare every pair of algorithm configurations in a RESULTS folder.

    Per data set: an exact Wilcoxon signed-rank test over the seeds' final errors for every
    pair (the verdict), with the mean difference and its interval, Holm-corrected; across
    data sets: mean ranks, the Friedman test, Nemenyi groups, pairwise tests and, with
    --rope, the Bayesian signed-rank test; per stream (--streams): a description of each
    stream, and a win/tie/loss count.
    """
    from kbench.analysis.configs import NothingToCompareError

    started = time.perf_counter()
    _, cmp = _load(results, metric, alpha, rope, tune_budget)
    if len(cmp.configs) < 2:
        raise NothingToCompareError(
            f"{results} holds one algorithm configuration ({cmp.labels[0]}): nothing to pair; "
            "run at least two"
        )
    if cmp.pairs.empty:
        raise NothingToCompareError(
            f"no two configurations in {results} finished on the same stream: nothing to pair"
        )
    console = output_console()
    if fmt == "table":
        print_comparison(cmp, console, show_streams)
        print_tuning(cmp, console)
        if any(cmp.configs["flags"].fillna("") != ""):
            console.print(f"[yellow]{escape(DEGENERATE_LEGEND)}[/yellow]", highlight=False)
    else:
        from kbench.analysis.formats import format_comparison

        click.echo(format_comparison(cmp, fmt), nl=False)
    _write_outputs(cmp, csv_path, json_path)
    err.print(
        f"kbench: compared {len(cmp.configs)} configurations on "
        f"{cmp.pairs['stream_id'].nunique()} streams ({len(cmp.pairs)} paired streams, "
        f"{len(cmp.seeds)} pairs tested over seeds) "
        f"in {time.perf_counter() - started:.2f} s",
        highlight=False,
    )


@click.command()
@click.argument("results", type=NonEmptyPath(path_type=Path))
@click.option(
    "-o",
    "--out",
    type=NonEmptyPath(dir_okay=False, path_type=Path),
    default=None,
    help="HTML file to write [default: RESULTS/report.html].",
)
@click.option(
    "--metric",
    type=METRIC_CHOICE,
    default="online_error",
    show_default=True,
    help="Final error ranked across seeds and data sets.",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option(
    "--title", default=None, help="Title of the report [default: the results folder's name]."
)
def report(results: Path, out: Path | None, metric: str, alpha: float, title: str | None) -> None:
    """Write a self-contained HTML report of a RESULTS folder (plots embedded)."""
    from kbench.report.html import write_report

    started = time.perf_counter()
    tables, cmp = _load(results, metric, alpha)
    out = out if out is not None else results / "report.html"
    try:
        path = write_report(
            cmp, tables, out, title=title or results.resolve().name, source=str(results.resolve())
        )
    except OSError as exc:
        raise ResultsError(f"cannot write the report to {out}: {exc.strerror or exc}") from None
    click.echo(str(path))
    err.print(
        f"kbench: report of {len(cmp.runs)} tasks written in {time.perf_counter() - started:.2f} s",
        highlight=False,
    )
