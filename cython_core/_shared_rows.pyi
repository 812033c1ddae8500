import numpy as np

_Kernel = tuple[int, float, float, float, float]  # (kind, gamma, scale, offset, degree)

def shared_row(
    kernel: _Kernel,
    S: np.ndarray,
    m: int,
    x: np.ndarray,
    stamp: np.ndarray,
    values: np.ndarray,
    norms: np.ndarray,
    out: np.ndarray,
) -> int: ...
