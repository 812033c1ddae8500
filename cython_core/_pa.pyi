"""Type stub of kbench.cython_core._pa (kernel passive–aggressive block loop)."""

import enum

from kbench.cython_core._types import BlockLoop

class Variant(enum.IntEnum):
    """PA, PA-I and PA-II."""

    PA = 0
    PA_I = 1
    PA_II = 2

pa_block: BlockLoop
