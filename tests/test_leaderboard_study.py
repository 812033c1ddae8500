"""kbench/studies/leaderboard.toml runs every built-in learner on every task it fits."""

from __future__ import annotations

from conftest import REPO
from kbench.api import get_registry
from kbench.core.specs import parse_spec, spec_name
from kbench.execution.study import load_study

#: Not learners of their own: the active-learning wrappers (a protocol around a learner),
#: the river adapter (a river model the user names) and the multiclass reductions (the
#: study applies one-vs-rest itself).
NOT_LEARNERS = {"active_all", "active_margin", "active_greedy", "active_selective", "river"}
REDUCTIONS = {"ovr", "ovo"}
#: Binary SVM solvers whose cost grows with the square of the examples they keep: on the
#: binary sets only, as one-vs-rest would run them once per class (the study's hour).
BINARY_SETS_ONLY = {"idsvm", "lasvm", "online_svm_r", "online_asvm_r", "ramp_cccp"}


def test_every_built_in_learner_is_on_the_leaderboard() -> None:
    reg = get_registry()
    study = {e.name: e for e in load_study(REPO / "kbench/studies/leaderboard.toml")}
    assert set(study) == {"binary", "multiclass", "regression"}
    assert study["multiclass"].multiclass == "ovr"
    builtin = {
        n
        for n in reg.names("algorithm")
        if reg.entry("algorithm", n).plugin.startswith("kbench.")
        and n not in NOT_LEARNERS | REDUCTIONS
    }
    for task, exp in study.items():
        listed = [spec_name(a) for a in exp.algorithms]
        assert len(listed) == len(set(listed)), f"{task}: a learner listed twice"
        fits = {n for n in builtin if task in reg.entry("algorithm", n).cls.tasks}
        if task == "multiclass":  # binary-only learners, one-vs-rest
            fits |= {n for n in builtin if "binary" in reg.entry("algorithm", n).cls.tasks}
            fits -= BINARY_SETS_ONLY
        assert set(listed) == fits, task
        assert len(exp.seeds) == 10 and exp.tune is not None


def test_libsvm_catalogue_sets_join_when_cached() -> None:
    """Each experiment lists the catalogue sets of its task as cached_datasets: they run
    where their files are on the machine, and are skipped (never downloaded) elsewhere."""
    from kbench.api import catalogue

    entries = catalogue()
    for exp in load_study(REPO / "kbench/studies/leaderboard.toml"):
        assert exp.cached_datasets, exp.name
        for spec in exp.cached_datasets:
            name, params = parse_spec(spec)
            assert name == "libsvm" and int(params["n"]) <= 1500, spec
            assert entries[params["name"]].task == exp.name, spec


def test_every_built_in_learner_names_its_paper() -> None:
    """The site's learner pages show each learner's paper: every built-in learner declares
    one but the wrappers around another learner."""
    reg = get_registry()
    missing = [
        n
        for n in reg.names("algorithm")
        if reg.entry("algorithm", n).plugin.startswith("kbench.")
        and not reg.entry("algorithm", n).cls.paper
    ]
    assert sorted(missing) == sorted(
        (NOT_LEARNERS | REDUCTIONS) - {"active_greedy", "active_margin", "active_selective"}
    )
