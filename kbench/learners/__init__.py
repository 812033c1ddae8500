"""The learner toolkit: the parts kbench's learners, and third-party ones, are built from.

Layer between :mod:`kbench.core` and the plugins: it imports only the core and the
compiled core. Plugins import its names from :mod:`kbench.api` or from here.

* :class:`Rows`: the examples handed to a learner (dense or CSR, one row or a block),
  checked once;
* :class:`SupportBuffer`, :class:`SparseSupportBuffer`: support-vector stores of dense and
  CSR rows, fixed or growable;
* :class:`Expansion`: a growable kernel expansion driven by one compiled block loop, and
  :class:`ExpansionLearner`, the base of a learner over one (the perceptron, PA);
* :class:`KernelSpec`, :class:`BlockRows`: the typed boundary to the compiled loops;
* :class:`RevisitingLearner`: the base of a learner that keeps examples in slots and
  revisits them (LASVM, the Huller), with its :class:`KernelCache` of kernel rows between
  them and the identities of examples over passes (:class:`ExampleIds`, :class:`PassIds`);
* :func:`seed_state`: the state of the compiled generator a learner's loop draws from;
* :func:`setup_loss`, :func:`make_cfg`, :func:`python_gradient`: a loss run by a compiled
  online loop (its codes in an ``OnlineConfig``) or, without a compiled form, from Python.
"""

from __future__ import annotations

from kbench.cython_core._kernels import KernelKind, KernelSpec
from kbench.cython_core._sparse import BlockRows
from kbench.learners.example_ids import ExampleIds, PassIds
from kbench.learners.expansion import Expansion, expansion_stats, refuse_switch
from kbench.learners.generator import seed_state
from kbench.learners.kernel_cache import KernelCache
from kbench.learners.learner import ExpansionLearner
from kbench.learners.online_loss import LossSetup, make_cfg, python_gradient, setup_loss
from kbench.learners.revisit import RevisitingLearner
from kbench.learners.rows import BLOCK_ROWS, Rows, as_csr, csr_parts, labels
from kbench.learners.sparse_buffer import SparseSupportBuffer
from kbench.learners.support_buffer import RowStore, SupportBuffer

__all__ = [
    "BLOCK_ROWS",
    "BlockRows",
    "ExampleIds",
    "Expansion",
    "ExpansionLearner",
    "KernelCache",
    "KernelKind",
    "KernelSpec",
    "LossSetup",
    "PassIds",
    "RevisitingLearner",
    "RowStore",
    "Rows",
    "SparseSupportBuffer",
    "SupportBuffer",
    "as_csr",
    "csr_parts",
    "expansion_stats",
    "labels",
    "make_cfg",
    "python_gradient",
    "refuse_switch",
    "seed_state",
    "setup_loss",
]
