"""kbench's optional extras: the packages each installs, and the one-line error that names
the extra when a feature needs one that is missing.

The extras are declared in ``pyproject.toml`` (``pip install 'kbench[report]'``);
``tests/test_package.py`` checks that the two lists agree.
"""

from __future__ import annotations

import importlib.util

from kbench.core.errors import KbenchError

#: extra -> the modules it provides (the import names of the packages it installs).
EXTRAS: dict[str, tuple[str, ...]] = {
    "report": ("matplotlib", "jinja2"),
    "dask": ("dask", "distributed"),
    "river": ("river",),
    "data": ("mlxtend",),
}


def missing(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (found without importing them)."""
    absent = []
    for module in EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or half-removed installation
            found = False
        if not found:
            absent.append(module)
    return absent


def require(extra: str, feature: str, otherwise: str = "") -> None:
    """Raise :class:`KbenchError` if ``feature`` cannot run because ``extra`` is missing.

    Parameters
    ----------
    extra : str
        A key of :data:`EXTRAS`.
    feature : str
        What needs it, as the message starts (``"kbench report"``).
    otherwise : str, optional
        How to do without it, appended to the message (``"or run with --no-report"``).
    """
    absent = missing(extra)
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        raise KbenchError(
            f"{feature} needs {' and '.join(absent)}, which {verb} not installed: "
            f"pip install 'kbench[{extra}]'" + (f" ({otherwise})" if otherwise else "")
        )
