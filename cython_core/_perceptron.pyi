"""Type stub of kbench.cython_core._perceptron (kernel perceptron block loop)."""

from kbench.cython_core._types import BlockLoop

perceptron_block: BlockLoop
