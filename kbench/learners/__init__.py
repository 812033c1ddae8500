"""The learner toolkit: the parts kbench's learners, and third-party ones, are built from.

A layer between :mod:`kbench.core` and the plugins: it imports only the core and the
compiled core. Plugins import its names from :mod:`kbench.api` or from here.

* :class:`SupportBuffer`, :class:`SparseSupportBuffer`: support-vector stores of dense and
  CSR rows, fixed or growable.
"""

from __future__ import annotations

from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import RowStore, SupportBuffer

__all__ = ["RowStore", "SparseSupportBuffer", "SupportBuffer"]
