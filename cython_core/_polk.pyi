"""Type stub of kbench.cython_core._polk (POLK's block loop over the learner toolkit's store).

The loop takes ``cfg``, the ``OnlineConfig`` of :func:`kbench.learners.make_cfg`, ``state``,
a :class:`~kbench.cython_core._polk_model.PolkState`, ``scores``, scratch of 3·C entries,
and ``xi_given``, the gradient of a loss without a compiled form (one row a call).
"""

from kbench.cython_core._types import BlockLoop

polk_block: BlockLoop
