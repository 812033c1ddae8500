"""Is kbench's hand-written vectorised exp worth its header? The RBF kernel row, timed two ways.

kbench computes an RBF row as one BLAS dgemv (the inner products) followed by
``out[i] = exp(-gamma * max(sq[i] + xsq - 2 out[i], 0))``; the exp of that loop is the
branch-free polynomial of ``cython_core/_kernel_simd.h``, compiled for AVX-512, AVX2 and
the baseline and chosen at run time. The alternative is the same loop with libm's ``exp``,
compiled with ``-O3`` and no ``-ffast-math`` (so the compiler may vectorise the loop
around the call but not the call itself).

This script compiles both into one scratch extension in a temporary folder (the kbench
variant cimports ``_kernel_row`` from ``kbench.cython_core._kernels``, the plain one calls
the same dgemv), checks that they agree, and prints µs per row and their ratio for
M = 500 .. 5000 stored vectors of d = 123 (a9a) and d = 20, one thread, with the exp pass
alone (same inner products, no dgemv) beside each. The header stays if it beats plain exp by more than 1.2× on the row.

Run: ``OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/bench_simd_exp.py [--quick]``.
Needs a C compiler and Cython (the build's own requirements); nothing is written outside
the temporary folder.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent

SOURCE = r'''
# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
from libc.math cimport exp
from scipy.linalg.cython_blas cimport dgemv

from kbench.cython_core._kernels cimport K_RBF, _kernel_row, kb_rbf_d


cdef void _plain_transform(double* out, const double* sq, double xsq, double gamma,
                           Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t i
    cdef double dist
    for i in range(m):
        dist = sq[i] + xsq - 2.0 * out[i]
        if dist < 0.0:
            dist = 0.0
        out[i] = exp(-gamma * dist)


cdef void _plain_row(const double* S, Py_ssize_t m, Py_ssize_t d, const double* sq,
                     const double* x, double xsq, double gamma, double* out) noexcept nogil:
    cdef int n = <int>m, dd = <int>d, one = 1
    cdef double alpha = 1.0, beta = 0.0
    cdef char trans = b'T'
    dgemv(&trans, &dd, &n, &alpha, <double*>S, &dd, <double*>x, &one, &beta, out, &one)
    _plain_transform(out, sq, xsq, gamma, m)


def rows(int variant, const double[:, ::1] S, const double[::1] sq, const double[::1] x,
         double xsq, double gamma, double[::1] out, int reps):
    """``reps`` RBF rows: variant 0 kbench's, 1 plain libm exp."""
    cdef Py_ssize_t m = S.shape[0], d = S.shape[1]
    cdef int r
    with nogil:
        for r in range(reps):
            if variant == 0:
                _kernel_row(K_RBF, gamma, 1.0, 0.0, 1.0, &S[0, 0], m, d, &sq[0], &x[0], xsq,
                            &out[0])
            else:
                _plain_row(&S[0, 0], m, d, &sq[0], &x[0], xsq, gamma, &out[0])


def transforms(int variant, const double[::1] dots, const double[::1] sq, double xsq,
               double gamma, double[::1] out, int reps):
    """``reps`` exp passes alone over the inner products ``dots``."""
    cdef Py_ssize_t m = dots.shape[0], i
    cdef int r
    with nogil:
        for r in range(reps):
            for i in range(m):
                out[i] = dots[i]
            if variant == 0:
                kb_rbf_d(&out[0], &sq[0], xsq, gamma, m)
            else:
                _plain_transform(&out[0], &sq[0], xsq, gamma, m)
'''


def build(folder: Path):
    """Compile the scratch extension in ``folder`` and import it."""
    from Cython.Build import cythonize
    from setuptools import Extension
    from setuptools import setup as st_setup

    (folder / "simd_exp_bench.pyx").write_text(SOURCE)
    # Cython resolves ``kbench.cython_core`` cimports through a folder laid out like the
    # installed package (the sources sit in cython_core/), as setup.py does.
    link = folder / "include" / "kbench" / "cython_core"
    link.parent.mkdir(parents=True)
    link.symlink_to(ROOT / "cython_core", target_is_directory=True)
    ext = Extension(
        "simd_exp_bench",
        [str(folder / "simd_exp_bench.pyx")],
        include_dirs=[np.get_include(), str(ROOT / "cython_core")],
        extra_compile_args=["-O3"],  # and no -ffast-math: libm exp stays a call
    )
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        st_setup(
            name="simd_exp_bench",
            ext_modules=cythonize([ext], include_path=[str(folder / "include")], quiet=True),
            script_args=["-q", "build_ext", "--inplace", "--build-temp", str(folder / "tmp")],
        )
    finally:
        os.chdir(cwd)
    path = next(folder.glob("simd_exp_bench*.so"))
    spec = importlib.util.spec_from_file_location("simd_exp_bench", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_us(fn, args: tuple, reps: int, repeat: int) -> float:
    """The fastest of ``repeat`` timings of ``fn(*args, reps)`` (``reps`` rows), µs per row."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args, reps)
        best = min(best, time.perf_counter() - t0)
    return best / reps * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    repeat = 3 if args.quick else 7
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        mod = build(Path(tmp))
        print(
            f"machine: {platform.processor() or platform.machine()}, Python {sys.version.split()[0]}"
        )
        print(f"KBENCH_SIMD={os.environ.get('KBENCH_SIMD', '(unset: widest the CPU has)')}\n")
        print("RBF kernel row (dgemv + exp pass) and its exp pass alone, one thread, µs:")
        print(
            f"  {'d':>4} {'M':>6} | {'row, kbench':>11} {'libm':>8} {'ratio':>6} |"
            f" {'exp pass, kbench':>16} {'libm':>8} {'ratio':>6}"
        )
        ratios = []
        with threadpool_limits(1):
            for d in (123, 20):
                for M in (500, 1000, 2000, 5000):
                    S = rng.standard_normal((M, d)) * 0.2
                    sq = np.einsum("ij,ij->i", S, S)
                    x = rng.standard_normal(d) * 0.2
                    xsq, gamma = float(x @ x), 1.0 / d
                    out0, out1 = np.empty(M), np.empty(M)
                    mod.rows(0, S, sq, x, xsq, gamma, out0, 1)
                    mod.rows(1, S, sq, x, xsq, gamma, out1, 1)
                    # Both exps are within a few ulp of the correctly rounded value.
                    np.testing.assert_allclose(out0, out1, rtol=1e-14, atol=0)
                    reps = max(20, 400_000 // (M * (1 + d // 20)))
                    r0 = best_us(mod.rows, (0, S, sq, x, xsq, gamma, out0), reps, repeat)
                    r1 = best_us(mod.rows, (1, S, sq, x, xsq, gamma, out1), reps, repeat)
                    # The same exp pass on the same inner products, without the dgemv.
                    dots = S @ x
                    reps = max(50, 1_000_000 // M)
                    p0 = best_us(mod.transforms, (0, dots, sq, xsq, gamma, out0), reps, repeat)
                    p1 = best_us(mod.transforms, (1, dots, sq, xsq, gamma, out1), reps, repeat)
                    ratios.append(r1 / r0)
                    print(
                        f"  {d:>4} {M:>6} | {r0:>11.2f} {r1:>8.2f} {r1 / r0:>5.2f}× |"
                        f" {p0:>16.2f} {p1:>8.2f} {p1 / p0:>5.2f}×"
                    )
    print(
        f"\nkernel row: libm exp / kbench exp from {min(ratios):.2f}× to {max(ratios):.2f}× "
        f"(median {float(np.median(ratios)):.2f}×); the header is kept above 1.2×."
    )


if __name__ == "__main__":
    main()
