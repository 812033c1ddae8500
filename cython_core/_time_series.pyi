"""Type stub of kbench.cython_core._time_series."""

import numpy as np
import numpy.typing as npt

def mackey_glass(
    x0: float,
    delay_steps: int,
    n: int,
    every: int,
    washout: int,
    step: float,
    beta: float = 0.2,
    gamma: float = 0.1,
    power: float = 10.0,
) -> npt.NDArray[np.float64]: ...
def lorenz(
    x0: float,
    y0: float,
    z0: float,
    n: int,
    every: int,
    washout: int,
    step: float,
    sigma: float = 10.0,
    rho: float = 28.0,
    beta: float = ...,
) -> npt.NDArray[np.float64]: ...
