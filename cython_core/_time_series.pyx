"""The integrators of the chaotic time-series generators (``mackey_glass``, ``lorenz``).

Both are classical fourth-order Runge–Kutta with a fixed step: tens of thousands of steps
per stream, each a few multiplications, too many for a Python loop. The data-set plugins
(``plugins/datasets/time_series.py``) draw the initial state from a stream's seed and
embed the samples these functions return.
"""

import numpy as np

cimport numpy as cnp

cnp.import_array()


cdef inline double _mg(double x, double delayed, double beta, double gamma,
                       double power) noexcept nogil:
    """dx/dt of the Mackey–Glass equation."""
    return beta * delayed / (1.0 + delayed ** power) - gamma * x


def mackey_glass(double x0, Py_ssize_t delay_steps, Py_ssize_t n, Py_ssize_t every,
                 Py_ssize_t washout, double step, double beta=0.2, double gamma=0.1,
                 double power=10.0):
    """``n`` samples of dx/dt = β x(t−τ) / (1 + x(t−τ)^power) − γ x(t).

    The history is constant, x(t) = x0 for t ≤ 0; τ = ``delay_steps`` · ``step``. Each
    Runge–Kutta step reads the delayed value at its start and end from the grid and at
    its midpoint as their mean (linear interpolation). After ``washout`` steps, one
    sample every ``every`` steps.
    """
    if delay_steps < 1 or n < 0 or every < 1 or washout < 0 or not step > 0:
        raise ValueError("mackey_glass: delay_steps, every >= 1, n, washout >= 0, step > 0")
    cdef Py_ssize_t k = delay_steps, size = delay_steps + 1
    cdef cnp.ndarray[double, ndim=1] ring_a = np.full(size, x0)
    cdef double[::1] ring = ring_a  # x at the last k + 1 grid points, the newest at head
    cdef cnp.ndarray[double, ndim=1] out_a = np.empty(n)
    cdef double[::1] out = out_a
    cdef Py_ssize_t head = k, i, taken = 0, total = washout + n * every
    cdef double x = x0, d0, d1, dm, k1, k2, k3, k4, h = step
    with nogil:
        for i in range(1, total + 1):
            d0 = ring[(head + 1) % size]  # x(t − τ): the oldest entry
            d1 = ring[(head + 2) % size]  # x(t + h − τ)
            dm = 0.5 * (d0 + d1)
            k1 = _mg(x, d0, beta, gamma, power)
            k2 = _mg(x + 0.5 * h * k1, dm, beta, gamma, power)
            k3 = _mg(x + 0.5 * h * k2, dm, beta, gamma, power)
            k4 = _mg(x + h * k3, d1, beta, gamma, power)
            x = x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            head = (head + 1) % size
            ring[head] = x
            if i > washout and (i - washout) % every == 0:
                out[taken] = x
                taken += 1
    return out_a


cdef inline void _lorenz(double x, double y, double z, double sigma, double rho,
                         double beta, double* d) noexcept nogil:
    d[0] = sigma * (y - x)
    d[1] = x * (rho - z) - y
    d[2] = x * y - beta * z


def lorenz(double x0, double y0, double z0, Py_ssize_t n, Py_ssize_t every,
           Py_ssize_t washout, double step, double sigma=10.0, double rho=28.0,
           double beta=8.0 / 3.0):
    """``n`` samples (n × 3: x, y, z) of the Lorenz system from (x0, y0, z0): after
    ``washout`` Runge–Kutta steps of length ``step``, one every ``every`` steps."""
    if n < 0 or every < 1 or washout < 0 or not step > 0:
        raise ValueError("lorenz: every >= 1, n, washout >= 0, step > 0")
    cdef cnp.ndarray[double, ndim=2] out_a = np.empty((n, 3))
    cdef double[:, ::1] out = out_a
    cdef double s[3]
    cdef double t[3]
    cdef double k1[3]
    cdef double k2[3]
    cdef double k3[3]
    cdef double k4[3]
    cdef Py_ssize_t i, j, taken = 0, total = washout + n * every
    cdef double h = step
    s[0], s[1], s[2] = x0, y0, z0
    with nogil:
        for i in range(1, total + 1):
            _lorenz(s[0], s[1], s[2], sigma, rho, beta, k1)
            for j in range(3):
                t[j] = s[j] + 0.5 * h * k1[j]
            _lorenz(t[0], t[1], t[2], sigma, rho, beta, k2)
            for j in range(3):
                t[j] = s[j] + 0.5 * h * k2[j]
            _lorenz(t[0], t[1], t[2], sigma, rho, beta, k3)
            for j in range(3):
                t[j] = s[j] + h * k3[j]
            _lorenz(t[0], t[1], t[2], sigma, rho, beta, k4)
            for j in range(3):
                s[j] = s[j] + h / 6.0 * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
            if i > washout and (i - washout) % every == 0:
                for j in range(3):
                    out[taken, j] = s[j]
                taken += 1
    return out_a
