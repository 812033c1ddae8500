"""Type stub of kbench.cython_core._kaf (kernel adaptive filter block loops)."""

from kbench.cython_core._types import BlockLoop

klms_block: BlockLoop
qklms_block: BlockLoop
knlms_block: BlockLoop
