"""Type stub of kbench.cython_core._averaged_perceptron (the averaged perceptron's block
loop and its state). The store has 2C columns: α (the current perceptron) then β (updates
weighted by the round before them); the averaged scores after T rounds are α·k − β·k/T.
"""

from typing_extensions import disjoint_base

from kbench.cython_core._types import F64, I64, BlockLoop

@disjoint_base
class AveragedPerceptronState:
    rounds: int
    mistakes: int
    id_slot: I64
    def __init__(self, rounds: int = 0, mistakes: int = 0, id_slot: I64 | None = None) -> None: ...
    def know(self, n: int) -> None: ...
    def outputs(self, raw: F64, out: F64) -> None: ...
    def __reduce__(
        self,
    ) -> tuple[type[AveragedPerceptronState], tuple[int, int, I64]]: ...

averaged_block: BlockLoop
