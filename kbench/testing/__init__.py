"""Conformance checks for kbench components, for kbench's own tests and for plugin authors.

kbench runs these checks on every built-in component; a plugin's tests run the same
ones on the plugin's components. :func:`check_component` checks one component, given
by kind and registered name, or as a class or an instance (no installation needed)::

    from kbench.testing import check_component

    check_component("kernel", "cauchy")      # a registered component
    check_component(CauchyKernel)            # a class, with its test_params
    check_component(CauchyKernel(sigma=2.0)) # an instance, with its parameters

:func:`parametrize_with_checks` (or :func:`check_cases`, the list of cases it uses)
parametrises a pytest test over every (component, check) of one installed plugin, one
test id each, as scikit-learn's ``parametrize_with_checks`` does::

    from kbench.testing import check_component, parametrize_with_checks

    @parametrize_with_checks(plugin="example")
    def test_conformance(kind, name, check):
        check_component(kind, name, check=check)

:func:`parametrize_components` gives one case per component that runs all its checks.
A component declares a check that does not apply to it in ``checks_not_applicable``
(check name: reason). Each check raises AssertionError with a message that names the
component and the rule. ``docs/testing.md`` lists the checks.
"""

from __future__ import annotations

# The check modules register their checks on import.
from kbench.testing import algorithms, common, kinds  # noqa: F401
from kbench.testing.cases import (
    check_cases,
    check_component,
    component_cases,
    parametrize_components,
    parametrize_with_checks,
)
from kbench.testing.checks import ALL_KINDS, CHECKS, Check, checks_for
from kbench.testing.toys import make_test_algorithm, toy_stream

__all__ = [
    "ALL_KINDS",
    "CHECKS",
    "Check",
    "check_cases",
    "check_component",
    "checks_for",
    "component_cases",
    "make_test_algorithm",
    "parametrize_components",
    "parametrize_with_checks",
    "toy_stream",
]
