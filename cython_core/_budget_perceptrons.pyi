"""Type stub of kbench.cython_core._budget_perceptrons (RBP, Forgetron, Projectron/++ loops).

Every loop follows the toolkit's block-loop convention (``_types.BlockLoop``).
"""

from typing import Any

from typing_extensions import disjoint_base

from kbench.cython_core._types import BlockLoop

def rng_draws(state: int, n: int) -> list[float]: ...

rbp_block: BlockLoop

@disjoint_base
class ForgetronState:
    krow2: Any
    head: int
    cs: float
    Q: float
    M: float
    have_row2: bool
    def __init__(
        self, krow2: Any = None, head: int = 0, cs: float = 1.0, Q: float = 0.0, M: float = 0.0
    ) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

forgetron_block: BlockLoop

@disjoint_base
class ProjectronState:
    Kinv: Any
    d: Any
    projected: int
    margin_updates: int
    def __init__(
        self, Kinv: Any = None, d: Any = None, projected: int = 0, margin_updates: int = 0
    ) -> None: ...
    def __reduce__(self) -> Any: ...
    def ensure(self, cap: int) -> None: ...

projectron_block: BlockLoop
