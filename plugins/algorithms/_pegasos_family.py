"""What kernel Pegasos and budgeted SGD share: one compiled loop (``cython_core/_bsgd.pyx``)
over one kernel expansion whose coefficients carry a lazy scale.

The module name starts with an underscore, so the registry does not load it as a plugin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kbench.cython_core._bsgd import BsgdState, Maintenance, bsgd_block
from kbench.learners import Expansion, ExpansionLearner, Rows, SparseSupportBuffer


class PegasosFamily(ExpansionLearner):
    """Kernel Pegasos (no budget) and BSGD (a budget kept by removal, projection or merging),
    binary and multiclass (not registered itself): the learner calls :meth:`_setup_family`
    with its maintenance."""

    tasks = frozenset({"binary", "multiclass"})
    reads_self_kernel = True
    lam: float

    def _setup_family(self, mode: Maintenance, budget: int = 0, project: bool = False) -> None:
        """The state and the store: at most ``budget`` + 1 rows with a budget (the new
        vector is stored, then maintenance brings the count back to B), else growable."""
        n = budget + 1 if mode == Maintenance.M_PROJECTION else 1
        self._state = BsgdState(np.zeros((n, n)))
        self.model = Expansion(
            self.name,
            self.model.kernel,
            self.model.n_outputs,
            self_kernel=True,
            limit=None if mode == Maintenance.M_NONE else budget + 1,
        )
        if mode == Maintenance.M_MERGE:
            self.model.make_room = _merge_room
        self.learn_with(
            bsgd_block,
            state=self._state,
            lam=self.lam,
            mode=mode,
            budget=budget,
            project_ball=project,
        )

    def learn_predict_many(self, X: Any, y: Any) -> np.ndarray:
        pred = super().learn_predict_many(X, y)
        self.model.scale = self._state.cs  # the factor on every coefficient, kept apart
        return pred

    def stats(self) -> dict[str, Any]:
        st, out = self._state, self.model.stats()
        if out["model_bytes"]:
            out["model_bytes"] += st.kdiag.nbytes + st.stamp.nbytes + st.Kinv.nbytes
        return out | {"scale": st.cs, "maintenance_steps": st.maintenance_steps}


def _merge_room(store: SparseSupportBuffer, rows: Rows) -> None:
    """Reserve, with each block, room for a merged row: at most the non-zeros of two rows,
    stored or to come. The loop stops before an example when the pool lacks that room,
    and is called again from there on a new block."""
    m = store.size
    widest = int(np.diff(rows.parts[0]).max(initial=0))
    stored = int((store.ends[:m] - store.starts[:m]).max(initial=0))
    store.spare = 2 * max(widest, stored)
