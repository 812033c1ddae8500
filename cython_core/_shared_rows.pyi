import numpy as np

from kbench.cython_core._types import Kernel

def shared_row(
    kernel: Kernel,
    S: np.ndarray,
    m: int,
    x: np.ndarray,
    stamp: np.ndarray,
    values: np.ndarray,
    norms: np.ndarray,
    out: np.ndarray,
) -> int: ...
