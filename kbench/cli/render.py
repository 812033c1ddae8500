"""Terminal output of the CLI: rich tables of leaderboards and comparisons.

Everything here draws what :mod:`kbench.analysis` computed; nothing is computed here. The
console is as wide as the terminal, and unbounded when standard output is a file or a pipe,
so a table sent to a pager or a file is never cut at 80 columns.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kbench.analysis.leaderboard import (
    format_leaderboard,
    is_set,
    leaderboard,
    peak_mib,
    tuning_cost_text,
    width_hints,
)
from kbench.analysis.pair_statistics import statistic_cells, statistic_headers, statistic_legend
from kbench.analysis.tables import count, fmt_value
from kbench.cli.consoles import error_console, output_console
from kbench.cli.table_fit import (
    LABEL_MIN,
    cell_width,
    column_chunks,
    fitted_tables,
    fold,
    needed_widths,
    notes_fit,
)
from kbench.core.registry import Registry
from kbench.core.specs import short_names
from kbench.results.degenerate import LEGEND, MARK, marked_cells


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


class _Notes:
    """The reasons of a table's undecided verdicts, numbered once each: a reason shared by
    every pair of a data set (the usual case: too few seeds) is printed once under the
    table instead of in every row, so the verdict column stays narrow at 80 columns."""

    def __init__(self) -> None:
        self.reasons: dict[str, int] = {}

    def number(self, reason: str) -> int:
        return self.reasons.setdefault(reason, len(self.reasons) + 1)

    def print(self, console: Console) -> None:
        for reason, k in self.reasons.items():
            console.print(f"  ({k}) {escape(reason)}", highlight=False)


def _res(result: str, reason: Any, notes: _Notes) -> str:
    """The verdict cell: A, B or tie, or "cannot tell (k)" where note k below the table
    says why there is none (too few seeds)."""
    if result in ("n/a", "cannot tell"):
        k = notes.number(str(reason))
        return f"[yellow]{'not available' if result == 'n/a' else result}[/yellow] ({k})"
    return {"win": "[green]A[/green]", "loss": "[red]B[/red]", "tie": "[dim]tie[/dim]"}.get(
        result, result
    )


def _pair_table(title: str, values: list[str], verdict: str, short: bool = False) -> Table:
    """A table with a row per pair of configurations: the pair, right-aligned value
    columns, then the verdict column (left-aligned, folded when long). ``short``: the
    pairs are short ids (:func:`_abbreviations`), so the pair column takes no spare room."""
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    if short:
        t.add_column("pair", no_wrap=True)
    else:
        t.add_column("pair", overflow="fold", min_width=16, ratio=1)
    for col in values:
        t.add_column(col, justify="right", no_wrap=True, overflow="fold")
    t.add_column(verdict, overflow="fold", min_width=len(verdict.split("\n")[0]))
    return t


#: Width of a table of pairs without its pair column (numbers, verdict, padding).
PAIR_NUMBERS_WIDTH = 66


def _abbreviations(labels: list[Any], console: Console) -> dict[str, str]:
    """Short ids (C1, C2, ...) for the tables of pairs when the labels would not fit
    beside the numbers; the legend naming each is printed first. None when they fit."""
    if not labels:
        return {}
    widest = max(cell_len(str(x)) for x in labels)
    if widest + PAIR_NUMBERS_WIDTH <= console.width:
        return {}
    ids = {str(x): f"C{i}" for i, x in enumerate(labels, 1)}
    legend = Table(
        title=f"[bold]configurations[/bold] (C1 to C{len(ids)} in the tables below)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    legend.add_column("id", no_wrap=True)
    legend.add_column("configuration", overflow="fold")
    for x in labels:
        legend.add_row(ids[str(x)], escape(str(x)))
    console.print(legend)
    return ids


def print_comparison(cmp: Any, console: Console, streams: bool = False) -> None:
    """Print a comparison as rich tables: per data set, across data sets, win/tie/loss."""
    labels = cmp.labels
    flagged_in, flagged_seed = cmp.degenerate_cells()

    def mark(on: bool) -> str:
        return f" [yellow]{MARK}[/yellow]" if on else ""

    seeds = cmp.seeds
    pairs = cmp.pairs
    tasks = cmp.runs.drop_duplicates("stream").set_index("stream")["task"]
    ids = _abbreviations(labels, console)
    for stream, group in seeds.groupby("stream", sort=True):  # one table per data set
        sp = pairs[pairs["stream"] == stream]

        def lab(x: str, stream: str = str(stream)) -> str:
            return escape(ids.get(str(x), str(x))) + mark((stream, str(x)) in flagged_in)

        regression = tasks.get(stream) == "regression"
        err_fmt = (lambda v: _f(v, ".4g")) if regression else _pct
        diff_fmt = (lambda v: _f(v, "+.4g")) if regression else _pp
        n_seeds = int(group["n_pairs"].max())
        # one smallest reachable p for every pair (the usual case): said once, in the title
        one_min_p = group["min_p"].nunique() == 1 and int(group["n_pairs"].min()) >= 2
        t = _pair_table(
            f"[bold]{escape(str(stream))}[/bold]: every pair, {n_seeds} seed(s)"
            + (" (mean squared error)" if regression else "")
            + (f"; smallest p possible {_p(group['min_p'].iloc[0])}" if one_min_p else ""),
            [
                "error\nA",
                "error\nB",
                "A − B\n[95% CI over seeds]",
                "seeds\nA/=/B",
                "p\nHolm",
                *(() if one_min_p else ("min p",)),
                *statistic_headers(),
            ],
            "better",
            short=bool(ids),
        )
        notes = _Notes()
        for r in group.itertuples():
            ci = diff_fmt(r.mean_diff)
            if isinstance(r.ci_low, float) and not math.isnan(r.ci_low):
                # the interval's unit is the mean's, on the line above: no room for it twice
                ci_fmt = diff_fmt if regression else (lambda v: f"{100 * v:+.2f}")
                ci += f"\n\\[{ci_fmt(r.ci_low)}, {ci_fmt(r.ci_high)}]"
            t.add_row(
                _pair(lab(r.a), lab(r.b)),
                err_fmt(r.mean_a),
                err_fmt(r.mean_b),
                ci,
                f"{r.a_better}/{r.equal}/{r.b_better}",
                _p(r.p_holm),
                *(() if one_min_p else (_p(r.min_p) if r.n_pairs >= 2 else "–",)),
                *statistic_cells(r, regression),
                _res(r.result, r.reason, notes),
            )
        console.print(t)
        notes.print(console)
        if streams:
            d_fmt = (lambda v: _f(v, "+.3g")) if regression else (lambda v: _f(100 * v, "+.2f"))
            for (sid, seed), g in sp.groupby(["stream_id", "seed"], sort=False):
                st = _pair_table(
                    f"  stream {sid} (seed {seed}, n={int(g['n'].iloc[0])})",
                    [
                        "error\nA",
                        "error\nB",
                        "only A\nwrong" if not regression else "A\nworse",
                        "only B\nwrong" if not regression else "B\nworse",
                        "A − B" + ("" if regression else " (pp)"),
                    ],
                    "fewer\nerrors",
                )
                for r in g.itertuples():
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
            "can give with these seeds. "
            + (f"{escape(statistic_legend())} " if statistic_legend() else "")
            + "Per-stream rows (--streams) describe one stream order and test nothing "
            "(docs/statistics.md).[/dim]",
            highlight=False,
        )

    groups: list[Any] = []
    if len(labels) >= 2:
        groups = print_groups(cmp, console, tasks, flagged_in, flagged_seed, ids)
        if len(cmp.ranking.pairs) and len(cmp.ranking.values) >= 2:
            print_dataset_pairs(
                cmp, console, lambda x: escape(ids.get(str(x), str(x))), short=bool(ids)
            )

    if len(labels) >= 2 and len(cmp.wtl):
        idx = {(r.a, r.b): (r.wins, r.ties, r.losses) for r in cmp.wtl.itertuples()}
        for name, group_labels in cmp.wtl_blocks(groups):
            print_wtl(idx, name, group_labels, ids, console)

    failed = cmp.failed
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
    for note in cmp.notes_beside_groups():  # the groups above say what was ranked
        console.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False)


def print_wtl(
    idx: dict[tuple[str, str], tuple[int, int, int]],
    name: str,
    group_labels: list[str],
    ids: dict[str, str],
    console: Console,
) -> None:
    """The win/tie/loss matrix of a group of configurations; its columns split over as
    many tables as the terminal needs (piped, the width is unbounded: one table)."""
    rows = []
    for a in group_labels:
        cells = []
        for b in group_labels:
            if a == b:
                cells.append("[dim]·[/dim]")
            elif (a, b) in idx:
                w, ti, lo = idx[(a, b)]
                colour = "green" if w > lo else "red" if lo > w else "white"
                cells.append(f"[{colour}]{w}/{ti}/{lo}[/{colour}]")
            else:
                cells.append("[dim]–[/dim]")
        rows.append(cells)
    heads = [escape(ids[str(b)]) if ids else str(k) for k, b in enumerate(group_labels, 1)]
    firsts = [
        escape(ids[str(a)]) if ids else f"{k} {escape(a)}" for k, a in enumerate(group_labels, 1)
    ]
    first_w = min(max(cell_width(f) for f in firsts), max(LABEL_MIN, console.width // 3)) + 3
    chunks = column_chunks(needed_widths(heads, rows), first_w, console.width)
    for c, cols in enumerate(chunks):
        t = Table(
            title="[bold]win/tie/loss over streams[/bold]"
            + (f" of {escape(name)}" if name else "")
            + " (row against column: streams where the row made fewer / as many / more "
            "errors; a count, not a test)"
            + (f" ({c + 1}/{len(chunks)})" if len(chunks) > 1 else ""),
            title_justify="left",
            box=box.SIMPLE_HEAD,
        )
        t.add_column("", overflow="fold")
        for j in cols:
            t.add_column(heads[j], justify="center", no_wrap=True)
        for first, cells in zip(firsts, rows, strict=True):
            t.add_row(first, *(cells[j] for j in cols))
        console.print(t)


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
    ids: dict[str, str] | None = None,
) -> list[Any]:
    """Mean ranks, Friedman and the Nemenyi groups per experiment group, as the report
    ranks them (:func:`kbench.analysis.groups.experiment_groups`): data sets that ran the same
    configurations form a group, ranked over its data sets, or over its seeds when it has
    one data set. A sentence says what was grouped and why; each cell carries the
    degenerate mark of that data set (or seed)."""
    from kbench.analysis.groups import experiment_groups, friedman_sentence, two_tests_sentence

    groups, sentence = experiment_groups(cmp)
    if not groups:
        return groups
    console.print(f"[bold]across data sets[/bold]: {escape(sentence)}", highlight=False)
    for g in groups:
        by_sets = g.blocks == "data sets"
        short = short_names(list(g.streams))
        stream_of = {v: k for k, v in short.items()} | {s: s for s in g.streams}
        title = (
            f"[bold]{escape(g.name)}[/bold]: mean rank over its {len(g.values)} "
            f"{g.blocks if len(g.values) != 1 else g.blocks[:-1]} "
            "(1 = lowest error)"
        )
        heads = [str(b) if by_sets else f"seed {b}" for b in g.values.index]
        ranked = list(g.mean_ranks.index) or list(g.values.columns)
        fixed, blocks = [], []
        for i, label in enumerate(ranked, 1):
            mr = float(g.mean_ranks.get(label, math.nan))
            fixed.append([str(i), escape((ids or {}).get(str(label), str(label))), _f(mr, ".2f")])
            cells: list[str] = []
            blocks.append(cells)
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
                cells.append(text + (f" [yellow]{MARK}[/yellow]" if bad else ""))
        # As many tables as the terminal needs, each with the configurations: a block's
        # value is never cut (piped, the width is unbounded and there is one table).
        label_w = max((cell_width(f[1]) for f in fixed), default=0)
        label_w = max(label_w, len("configuration"))  # the head, when ids are short
        # + "#", "mean rank" and the padding and rules of the four columns
        fixed_w = min(label_w, max(LABEL_MIN, console.width // 3)) + 22
        # a data set's name wider than the room beside the configurations folds in its head
        heads = [escape(fold(h, console.width - fixed_w - 3)) for h in heads]
        needed = needed_widths(heads, blocks) if heads and blocks else []
        chunks = column_chunks(needed, fixed_w, console.width)
        for c, cols in enumerate(chunks):
            part = f" ({c + 1}/{len(chunks)})" if len(chunks) > 1 else ""
            t = Table(title=title + part, title_justify="left", box=box.SIMPLE_HEAD)
            t.add_column("#", justify="right")
            t.add_column("configuration", overflow="fold", min_width=len("configuration"))
            t.add_column("mean rank", justify="right", no_wrap=True)
            for j in cols:
                t.add_column(heads[j], justify="right", no_wrap=True)
            for f, cells in zip(fixed, blocks, strict=True):
                t.add_row(*f, *(cells[j] for j in cols))
            console.print(t)
        if g.rankable:
            console.print(escape(friedman_sentence(g)), highlight=False)
            if g.cd_groups:
                sets = "; ".join("{" + ", ".join(x) + "}" for x in g.cd_groups)
                console.print(
                    f"Groups not separated by the Nemenyi test: {escape(sets)}", highlight=False
                )
            console.print(f"[dim]{escape(two_tests_sentence(g))}[/dim]", highlight=False)
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


def print_dataset_pairs(cmp: Any, console: Console, lab: Any, short: bool = False) -> None:
    """Every ranked pair over the data sets: exact signed-rank test with Holm, and the
    Bayesian signed-rank probabilities when a region of practical equivalence was given."""
    pairs = cmp.ranking.pairs
    if pairs.empty:
        return
    bayes = "p_rope" in pairs.columns
    regression = (cmp.runs["task"] == "regression").all()
    cols = ["A − B", "data sets\nA/=/B", "p\nHolm"]
    cols += ["P(A\nbetter)", "P(equi-\nvalent)", "P(B\nbetter)"] if bayes else []
    t = _pair_table(
        "[bold]pairs across data sets[/bold] (mean errors per data set; exact Wilcoxon "
        f"signed-rank over data sets, Holm, α = {cmp.alpha:g}"
        + (f"; Bayesian signed-rank with ROPE ±{cmp.rope:g}" if bayes else "")
        + ")",
        cols,
        "better",
        short=short,
    )
    notes = _Notes()
    for r in pairs.itertuples():
        cells = [
            _pair(lab(r.a), lab(r.b)),
            _f(r.mean_diff, "+.4g") if regression else _pp(r.mean_diff),
            f"{r.a_better}/{r.equal}/{r.b_better}",
            _p(r.p_holm),
        ]
        if bayes:
            cells += [_f(r.p_a_better, ".3f"), _f(r.p_rope, ".3f"), _f(r.p_b_better, ".3f")]
        t.add_row(*cells, _res(r.result, r.reason, notes))
    console.print(t)
    notes.print(console)


def _notes(r: Any) -> str:
    notes = []
    if is_set(getattr(r, "selected", None)):
        notes.append(f"selected {escape(str(r.selected))}")
    if getattr(r, "degenerate", 0):
        notes.append(
            f"[yellow]{MARK} degenerate ({int(r.degenerate)} of {count(int(r.runs), 'run')}): "
            f"{escape(str(r.degenerate_reason))}[/yellow]"
        )
    if isinstance(getattr(r, "failed", None), str):
        notes.append(f"[red]{escape(r.failed)}[/red]")
    return "; ".join(notes)


def print_leaderboard(
    runs: pd.DataFrame, registry: Registry, console: Console | None = None, fmt: str = "table"
) -> None:
    """Print the leaderboards: rich tables, or the text of another format (``--format``)."""
    console = console or output_console()
    if fmt != "table":
        console.file.write(format_leaderboard(runs, registry, fmt))
        console.file.flush()
        return
    any_degenerate = False
    for stream, board in leaderboard(runs, registry).items():
        tuned = "tune_runs" in board and bool(board["tune_runs"].notna().any())
        order = "held-out" if board.attrs.get("order") == "test_error" else "online"
        heads = [
            "seeds",
            "online error",
            "held-out error",
            "SVs",
            "kernel evals",
            "time (s)",
            "µs/example",
            "peak MiB",
            *(("tuning cost",) if tuned else ()),
        ]
        labels, rows, notes = [], [], []
        for label, r in board.iterrows():
            sd = "" if np.isnan(r.online_error_sd) else f" ± {r.online_error_sd:.4f}"
            sd_test = "" if np.isnan(r.test_error_sd) else f" ± {r.test_error_sd:.4f}"
            any_degenerate |= bool(r.degenerate)
            on = marked_cells(str(r.degenerate_reason)) if r.degenerate else set()
            mark = f" [yellow]{MARK}[/yellow]"
            labels.append(escape(str(label)) + (mark if "label" in on else ""))
            rows.append(
                [
                    fmt_value(r.seeds, ".0f"),
                    fmt_value(r.online_error, ".4f") + sd + (mark if "online" in on else ""),
                    fmt_value(r.test_error, ".4f")
                    + (sd_test if not np.isnan(r.test_error) else "")
                    + (mark if "held-out" in on else ""),
                    fmt_value(r.n_support, ".0f"),
                    fmt_value(r.kernel_evals, ".3g"),
                    fmt_value(r.time_s, ".3f"),
                    fmt_value(r.us_per_example, ".2f"),
                    peak_mib(r.peak_memory),
                    *((tuning_cost_text(r),) if tuned else ()),
                ]
            )
            notes.append(_notes(r))
        caption = f"rows by mean {order} error over the seeds; ± one standard deviation"
        for table in fitted_tables(stream, caption, labels, heads, rows, notes, console.width):
            console.print(table)
        if not notes_fit(labels, heads, rows, notes, console.width):
            for label, note in zip(labels, notes, strict=True):
                if note:  # below the table: a note never squeezes the numbers
                    console.print(f"  {label}: {note}", highlight=False)
    if any_degenerate:
        console.print(f"[yellow]{escape(LEGEND)}[/yellow]", highlight=False)
    for hint in width_hints(runs, registry):
        error_console().print(f"kbench: hint: {hint}", highlight=False, markup=False)
