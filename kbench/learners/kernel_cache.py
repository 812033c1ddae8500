"""The kernel-row cache shared by the learners that revisit their support vectors.

:class:`KernelCache` owns the arrays of the LRU cache implemented in
``cython_core/_kernel_cache.pxd``: rows of kernel values between support vectors, keyed
by support-vector slot, held within a byte budget. The compiled loops of the Huller and
LASVM work on these arrays directly; the methods here serve their Python paths (kernels
without a compiled form) and report hits and misses for ``stats()``.
"""

from __future__ import annotations

import numpy as np

from kbench.core.components import Kernel
from kbench.cython_core import _kernel_cache as kc

#: Bytes per MB of the ``cache_mb`` parameters.
MB = 1 << 20


class KernelCache:
    """LRU cache of kernel rows between support vectors, within a byte budget.

    Parameters
    ----------
    budget_bytes
        Bytes the cached rows may take. A budget smaller than one row caches nothing:
        every row is computed when needed (and counted as a miss), so a learner works the
        same, only slower.
    capacity
        Row length: the learner's support-vector capacity. :meth:`resize` follows the
        learner's buffer when it grows.
    """

    def __init__(self, budget_bytes: int, capacity: int) -> None:
        if budget_bytes < 0:
            raise ValueError(f"kernel cache budget must be at least 0 bytes, got {budget_bytes}")
        self.budget_bytes = int(budget_bytes)
        self.counters = np.zeros(len(kc.COUNTERS), dtype=np.int64)
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        # No more rows than keys: the removal mirror (kc_move) visits every pool slot.
        n = min(self.budget_bytes // (8 * capacity), capacity)
        self.rows = np.zeros((n, capacity))
        self.meta = np.zeros((4, n + 1), dtype=np.int64)
        self.key_slot = np.empty(capacity, dtype=np.int64)
        kc.kc_init(self.meta, self.key_slot)

    @property
    def capacity(self) -> int:
        """Row length (support-vector slots)."""
        return self.rows.shape[1]

    @property
    def n_slots(self) -> int:
        """How many rows the budget holds at the current row length."""
        return self.rows.shape[0]

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(rows, meta, key_slot, counters)``, the arguments of the compiled functions."""
        return self.rows, self.meta, self.key_slot, self.counters

    def resize(self, capacity: int) -> None:
        """Change the row length, keeping the most recently used rows that still fit."""
        old_rows, old_meta = self.rows, self.meta
        order = kc.kc_order(old_meta)
        self._allocate(capacity)
        for t, s in enumerate(order[: self.n_slots]):
            n = min(int(old_meta[0, s]), capacity)
            key = int(old_meta[1, s])
            if key >= capacity:
                continue
            self.rows[t, :n] = old_rows[s, :n]
            self.meta[0, t] = n
            self.meta[1, t] = key
            self.key_slot[key] = t

    def fetch(
        self, kernel: Kernel, key: int, m: int, SV: np.ndarray, sq: np.ndarray, scratch: np.ndarray
    ) -> np.ndarray:
        """``k(SV[key], SV[j])`` for j < m, cached; computed with ``kernel.row`` where missing."""
        compiled = kernel.compiled()
        if compiled is not None:
            return kc.kc_fetch(*self.arrays(), compiled, key, m, SV, sq, scratch)
        slot, have = kc.kc_lookup(*self.arrays(), key, m)
        row = self.rows[slot] if slot >= 0 else scratch
        if have < m:
            row[have:m] = kernel.row(SV[have:m], SV[key], sq=sq[have:m], xsq=float(sq[key]))
            kc.kc_filled(self.meta, self.counters, slot, have, m)
        return row[:m]

    def store(self, key: int, row: np.ndarray) -> None:
        """Cache a row computed elsewhere (an example that just became support vector ``key``)."""
        kc.kc_store(*self.arrays(), key, row)

    def move(self, i: int, last: int) -> None:
        """Support vector i was removed and the one of slot ``last`` moved into slot i."""
        kc.kc_move(*self.arrays(), i, last)

    def clear(self) -> None:
        """Forget every row; the counters are kept."""
        kc.kc_clear(*self.arrays())

    def stats(self) -> dict[str, float]:
        """Hits (rows found complete), partial hits (extended), misses, rows held, bytes."""
        hits, partial, misses, _ = (int(v) for v in self.counters)
        return {
            "cache_hits": hits,
            "cache_partial": partial,
            "cache_misses": misses,
            "cache_rows": int(np.count_nonzero(self.meta[1, :-1] >= 0)),
            "cache_bytes": self.rows.nbytes,
        }

    @property
    def kernel_evals(self) -> int:
        """Kernel values the cache computed."""
        return int(self.counters[3])
