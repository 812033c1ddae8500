"""Peak memory in ``kbench show``: the value each format shows is the one recorded per task."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd

from conftest import stub_plugin
from helpers import kbench

#: A learner that holds 48 MiB more from its first example on: a peak no run can miss.
GROWER = stub_plugin('''

class Grower(Stub):
    """Allocates and touches 48 MiB on its first example."""
    name = "grower"
    def learn_one(self, x, y):
        if not hasattr(self, "block"):
            self.block = np.ones(6 * 2**20)


@hookimpl
def kbench_register_algorithms(register):
    register(Grower)
''')


def test_show_prints_the_recorded_peak_memory(tmp_path: Path, plugin_dist) -> None:
    """The largest ``peak_memory`` of a configuration's seeds, in bytes in CSV and JSON and
    in MiB in the table and the Markdown, equals what runs.parquet recorded."""
    plugin_dist("kb_grower", GROWER)
    out = tmp_path / "r"
    proc = kbench(
        "run", "-a", "grower", "-a", "perceptron", "-k", "rbf[gamma=0.05]",
        "-d", "digits[positive=5-9,n=300]", "--seeds", "0-1", "--workers", "1",
        "--no-report", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert (runs["memory_method"] == "rss").all()
    recorded = runs.groupby("algorithm")["peak_memory"].max()
    assert recorded["grower"] >= 48 * 2**20 > recorded["perceptron"]

    rows = {
        r["configuration"]: r
        for r in json.loads(kbench("show", str(out), "--format", "json").stdout)["rows"]
    }
    csv = pd.read_csv(io.StringIO(kbench("show", str(out), "--format", "csv").stdout))
    csv = csv.set_index("configuration")["peak_memory"]
    markdown = kbench("show", str(out), "--format", "markdown").stdout.splitlines()
    table = kbench("show", str(out)).stdout.splitlines()
    assert "peak MiB" in "\n".join(table) and "peak MiB" in "\n".join(markdown)
    labels = {label.split()[0]: label for label in rows}  # perceptron's names its kernel
    assert set(labels) == {"grower", "perceptron"}
    for algorithm, label in labels.items():
        assert rows[label]["peak_memory"] == recorded[algorithm]
        assert np.float64(csv[label]) == recorded[algorithm]
        mib = f"{recorded[algorithm] / 2**20:.1f}"
        for lines in (markdown, table):
            line = next(ln for ln in lines if f" {label} " in ln)
            assert f" {mib} " in line, (mib, line)
