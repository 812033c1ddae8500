"""Type stub of kbench.cython_core._alma (ALMA2 with kernels, block loop)."""

from kbench.cython_core._types import BlockLoop

alma_block: BlockLoop
