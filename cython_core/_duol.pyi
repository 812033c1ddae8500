"""Type stub of kbench.cython_core._duol (DUOL block loop)."""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

@disjoint_base
class DuolState:
    K: Any
    labels: Any
    margins: Any
    def __init__(self, K: Any = None, labels: Any = None, margins: Any = None) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

duol_block: BlockLoop
