"""Every registered component passes kbench's conformance suite."""

from __future__ import annotations

import pytest

from kbench.testing import check_component, component_cases


@pytest.mark.parametrize(("kind", "name"), component_cases())
def test_component_conforms(kind: str, name: str) -> None:
    """Registered components follow the contracts of their kind."""
    check_component(kind, name)
