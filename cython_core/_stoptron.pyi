"""Type stub of kbench.cython_core._stoptron (Stoptron and remove-oldest block loop)."""

from kbench.cython_core._types import BlockLoop

budget_perceptron_block: BlockLoop
