"""kbench's version: the one place it is written.

``pyproject.toml`` reads it from here when a distribution is built (setuptools'
``attr:``, without importing kbench), and ``kbench.__version__`` re-exports it.
"""

from __future__ import annotations

__version__ = "0.1.0"
