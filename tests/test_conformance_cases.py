"""The conformance suite as one pytest case per (component, check), and checks a component
declares not applicable."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import pytest

from conftest import CUBIC_PLUGIN
from kbench.api import Registry
from kbench.core.registry import get_registry
from kbench.testing import CHECKS, check_cases, check_component, checks_for

SKEWED = '''
class Skewed(Cubic):
    """A 'kernel' whose rows disagree with its Gram matrix."""
    name = "skewed"
    checks_not_applicable = {NOT_APPLICABLE}
    def row(self, S, x, *, out=None, sq=None, xsq=None):
        return super().row(S, x) + 1.0

@hookimpl
def kbench_register_kernels(register):
    register(Cubic)
    register(Skewed)
'''


def _plugin(not_applicable: dict[str, str]) -> types.ModuleType:
    """A plugin module registering Cubic and Skewed, Skewed declaring ``not_applicable``."""
    source = CUBIC_PLUGIN.split("@hookimpl")[0] + SKEWED.replace(
        "{NOT_APPLICABLE}", repr(not_applicable)
    )
    module = types.ModuleType("kb_skewed")
    exec(source, module.__dict__)
    return module


def _registry(not_applicable: dict[str, str]) -> Registry:
    return Registry(entry_points=False, extra_plugins=[("kb_skewed", _plugin(not_applicable))])


def test_one_case_per_component_and_check() -> None:
    """Every registered component has one case per check that applies to it, with an id
    that names the kind, the component and the check."""
    reg = get_registry()
    cases = check_cases(reg)
    ids = [c.id for c in cases]
    assert len(ids) == len(set(ids))
    expected = [
        f"{kind}-{name}-{c.name}"
        for kind in CHECKS
        for name in reg.names(kind)
        for c in checks_for(reg.entry(kind, name).cls)
    ]
    assert ids == expected
    assert "kernel-rbf-check_kernel_consistency" in ids
    assert "algorithm-pa-check_learn_predict_many" in ids
    # Several checks per component: the suite is not one case per component.
    assert len(cases) >= 5 * sum(len(reg.names(k)) for k in CHECKS)
    assert all(not c.marks for c in cases), "no built-in declares a check not applicable"


def test_checks_apply_where_there_is_something_to_check() -> None:
    """An offline learner has no online-protocol case; a class with no declared range has
    no range case."""
    reg = get_registry()
    libsvm = {c.name for c in checks_for(reg.entry("algorithm", "libsvm").cls)}
    pa = {c.name for c in checks_for(reg.entry("algorithm", "pa").cls)}
    assert "check_learn_predict_many" not in libsvm and "check_learn_predict_many" in pa
    assert {"check_predict_many", "check_deterministic"} <= libsvm
    linear = reg.entry("kernel", "linear").cls
    assert not any(p.bounded for p in linear.parameters().values())
    assert "check_declared_ranges" not in {c.name for c in checks_for(linear)}


def test_a_broken_rule_fails_its_own_check_only() -> None:
    """The skewed kernel fails check_kernel_consistency and passes every other check."""
    reg = _registry({})
    failed = []
    for c in checks_for(reg.entry("kernel", "skewed").cls):
        try:
            check_component("kernel", "skewed", reg, check=c.name)
        except AssertionError as exc:
            failed.append((c.name, str(exc)))
    assert failed == [("check_kernel_consistency", "kernel 'skewed': row != matrix column")]


def test_a_check_declared_not_applicable() -> None:
    """The case is a strict expected failure with the reason; check_component leaves the
    check out unless asked for it by name."""
    why = "rows offset on purpose"
    reg = _registry({"check_kernel_consistency": why})
    cases = {c.id: c for c in check_cases(reg, plugin="kb_skewed")}
    assert set(cases) == {
        f"kernel-{name}-{c.name}"
        for name in ("cubic", "skewed")
        for c in checks_for(reg.entry("kernel", name).cls)
    }
    (mark,) = cases["kernel-skewed-check_kernel_consistency"].marks
    assert mark.name == "xfail"
    assert mark.kwargs == {"strict": True, "raises": AssertionError, "reason": why}
    assert not cases["kernel-skewed-check_docstring"].marks
    check_component("kernel", "skewed", reg)  # every check but the one declared
    with pytest.raises(AssertionError, match="row != matrix column"):
        check_component("kernel", "skewed", reg, check="check_kernel_consistency")


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        (
            {"check_gram": "x"},
            r"kernel 'skewed': checks_not_applicable names 'check_gram', which is not a check "
            r"of a kernel \(its checks: .*check_kernel_consistency",
        ),
        (
            {"check_kernel_consistency": ""},
            r"checks_not_applicable\['check_kernel_consistency'\] needs the reason, in one line",
        ),
        (
            {"check_kernel_consistency": "two\nlines"},
            r"needs the reason, in one line",
        ),
    ],
)
def test_a_bad_declaration_is_refused_in_one_line(declared: dict[str, str], message: str) -> None:
    reg = _registry(declared)
    with pytest.raises(ValueError, match=message):
        check_cases(reg, plugin="kb_skewed")
    with pytest.raises(ValueError, match=message):
        check_component("kernel", "skewed", reg)


def test_an_unknown_check_name_lists_the_checks() -> None:
    with pytest.raises(
        ValueError, match=r"'check_gram' is not a check of kernel 'rbf' \(its checks: check_doc"
    ):
        check_component("kernel", "rbf", check="check_gram")


def test_pytest_runs_the_cases_and_holds_declarations_to_account(tmp_path) -> None:
    """Run by pytest: a declared check that fails is xfailed with its reason; a stale
    declaration (the component passes the check) fails the run."""
    plugin = CUBIC_PLUGIN.split("@hookimpl")[0] + SKEWED.replace(
        "{NOT_APPLICABLE}",
        repr({"check_kernel_consistency": "rows offset on purpose", "check_docstring": "stale"}),
    )
    (tmp_path / "kb_skewed.py").write_text(plugin)
    (tmp_path / "test_it.py").write_text(
        textwrap.dedent(
            """
            import kb_skewed
            from kbench.api import Registry
            from kbench.testing import check_component, parametrize_with_checks

            REG = Registry(entry_points=False, extra_plugins=[("kb_skewed", kb_skewed)])

            @parametrize_with_checks(plugin="kb_skewed", registry=REG)
            def test_conformance(kind, name, check):
                check_component(kind, name, REG, check=check)
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rxX", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    text = out.stdout + out.stderr
    n_cases = len(check_cases(_registry({}), plugin="kb_skewed"))
    assert out.returncode == 1, text
    assert f"1 failed, {n_cases - 2} passed, 1 xfailed" in text, text
    assert "XFAIL test_it.py::test_conformance[kernel-skewed-check_kernel_consistency]" in text
    assert "rows offset on purpose" in text
    assert "[XPASS(strict)] stale" in text, text
