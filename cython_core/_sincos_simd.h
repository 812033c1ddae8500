/* Vectorised loops of random Fourier features (FOGD): cos and sin of a block of phases,
 * and the phases of an example.
 *
 * FOGD maps x to [cos(Ωᵀx), sin(Ωᵀx)]/√D: D phases, then D cosines and D sines per
 * example. One libm sincos call per phase, or a scalar polynomial, dominated the time per
 * example. These loops have no calls and no branches, so GCC and Clang vectorise them
 * without -ffast-math; like _kernel_simd.h (whose dispatch they reuse) each is compiled
 * for AVX-512, for AVX2 with FMA and for the baseline, and the widest one the CPU
 * supports is chosen on first use. Within one process every phase goes through the same
 * instruction sequence, whatever its position in the block.
 *
 * Accuracy of kb_sincos_d, for |u| <= KB_SINCOS_LIMIT: the phase is reduced to
 * r = u − q·π/2 with |r| <= π/4 (π/2 in two parts, Cody–Waite: q·π/2_hi is exact for
 * |q| < 2^20, and the reduction error is below 10^-20); cos r and sin r are Taylor
 * polynomials of degree 16 and 15, whose truncation error is below 2·10^-18 and 5·10^-17
 * on |r| <= π/4; the quadrant then swaps them and sets the signs exactly. The result is
 * within 4·10^-16 (absolute) of the true cos and sin (tested against libm over random
 * phases, multiples of π/2 and large arguments). Phases beyond the limit (|u| > 10^5,
 * far outside what a kernel's spectral density gives for scaled data) go to libm.
 */
#ifndef KBENCH_SINCOS_SIMD_H
#define KBENCH_SINCOS_SIMD_H

#include "_kernel_simd.h"

#define KB_SINCOS_LIMIT 1e5

static inline void kb_sincos_one(double u, double scale, double* c_out, double* s_out) {
    const double shifter = 6755399441055744.0; /* 1.5·2^52: adding it rounds to an integer */
    const double two_over_pi = 6.36619772367581382433e-01;
    const double pio2_hi = 1.57079632673412561417e+00; /* first 33 bits of π/2 */
    const double pio2_lo = 6.07710050650619224932e-11; /* π/2 − pio2_hi */
    double t, q, r, r2, pc, ps, c, s;
    int64_t ti, si;
    uint64_t cb, sb, pcb, psb, swap, qs;
    t = u * two_over_pi + shifter;
    q = t - shifter;
    r = (u - q * pio2_hi) - q * pio2_lo;
    r2 = r * r;
    /* cos r = Σ (−1)^k r^2k/(2k)!, k <= 8; sin r = r Σ (−1)^k r^2k/(2k+1)!, k <= 7. */
    pc = 4.779477332387385e-14;
    pc = pc * r2 - 1.1470745597729725e-11;
    pc = pc * r2 + 2.08767569878681e-09;
    pc = pc * r2 - 2.755731922398589e-07;
    pc = pc * r2 + 2.48015873015873e-05;
    pc = pc * r2 - 1.388888888888889e-03;
    pc = pc * r2 + 4.1666666666666664e-02;
    pc = pc * r2 - 0.5;
    pc = pc * r2 + 1.0;
    ps = -7.647163731819816e-13;
    ps = ps * r2 + 1.6059043836821613e-10;
    ps = ps * r2 - 2.505210838544172e-08;
    ps = ps * r2 + 2.7557319223985893e-06;
    ps = ps * r2 - 1.984126984126984e-04;
    ps = ps * r2 + 8.333333333333333e-03;
    ps = ps * r2 - 1.6666666666666666e-01;
    ps = r + r * (r2 * ps);
    /* Quadrant q mod 4 (the low bits of t hold q in two's complement): odd q swaps cos
     * and sin; sin is negated for q mod 4 in {2, 3}, cos for q mod 4 in {1, 2}. The swap
     * is a bit mask and the signs are sign-bit flips, so all of it vectorises (with SSE2
     * too, which has no 64-bit compare for a select). */
    memcpy(&ti, &t, sizeof ti);
    memcpy(&si, &shifter, sizeof si);
    qs = (uint64_t)(ti - si);
    swap = (uint64_t)0 - (qs & 1u); /* all ones when q is odd */
    memcpy(&pcb, &pc, sizeof pcb);
    memcpy(&psb, &ps, sizeof psb);
    cb = (pcb & ~swap) | (psb & swap);
    sb = (psb & ~swap) | (pcb & swap);
    sb ^= (qs & 2u) << 62;
    cb ^= ((qs + 1u) & 2u) << 62;
    memcpy(&c, &cb, sizeof c);
    memcpy(&s, &sb, sizeof s);
    *c_out = scale * c;
    *s_out = scale * s;
}

/* u[k] += Σ_j vals[j]·Omega[idx[j]·D + k] for the nnz non-zeros (idx, vals) of x.
 * For each k the sum runs over j in order, starting from u[k], on every path. The AVX
 * paths keep 32 (AVX-512) or 16 (AVX2) columns of u in four vector registers across all
 * the non-zeros, so u is read and written once per block and the rows of Ω stream
 * through: GCC's own vectorisation of this loop kept the partial sums in memory and ran
 * 2.5 times slower (measured on a9a's 14 non-zeros, D = 400). */
#define KB_PHASES_TAIL(K0)                                                               \
    for (ptrdiff_t j = 0; j < nnz; j++) {                                                \
        const double* row = Omega + idx[j] * D;                                          \
        const double v = vals[j];                                                        \
        for (ptrdiff_t k = (K0); k < D; k++) u[k] += v * row[k];                         \
    }

static void kb_phases_d_base(const double* restrict Omega, ptrdiff_t D,
                             const ptrdiff_t* restrict idx, const double* restrict vals,
                             ptrdiff_t nnz, double* restrict u) {
    KB_PHASES_TAIL(0)
}

#if KB_X86
#define KB_PHASES_X86(NAME, ATTR, V, W, LOAD, STORE, SET1, FMA)                          \
    ATTR static void NAME(const double* restrict Omega, ptrdiff_t D,                     \
                          const ptrdiff_t* restrict idx, const double* restrict vals,    \
                          ptrdiff_t nnz, double* restrict u) {                           \
        ptrdiff_t k0 = 0;                                                                \
        for (; k0 + 4 * (W) <= D; k0 += 4 * (W)) {                                       \
            V a0 = LOAD(u + k0), a1 = LOAD(u + k0 + (W));                                \
            V a2 = LOAD(u + k0 + 2 * (W)), a3 = LOAD(u + k0 + 3 * (W));                  \
            for (ptrdiff_t j = 0; j < nnz; j++) {                                        \
                const double* row = Omega + idx[j] * D + k0;                             \
                const V v = SET1(vals[j]);                                               \
                a0 = FMA(v, LOAD(row), a0);                                              \
                a1 = FMA(v, LOAD(row + (W)), a1);                                        \
                a2 = FMA(v, LOAD(row + 2 * (W)), a2);                                    \
                a3 = FMA(v, LOAD(row + 3 * (W)), a3);                                    \
            }                                                                            \
            STORE(u + k0, a0);                                                           \
            STORE(u + k0 + (W), a1);                                                     \
            STORE(u + k0 + 2 * (W), a2);                                                 \
            STORE(u + k0 + 3 * (W), a3);                                                 \
        }                                                                                \
        KB_PHASES_TAIL(k0)                                                               \
    }

KB_PHASES_X86(kb_phases_d_avx2, KB_AVX2, __m256d, 4, _mm256_loadu_pd, _mm256_storeu_pd,
              _mm256_set1_pd, _mm256_fmadd_pd)
KB_PHASES_X86(kb_phases_d_avx512, KB_AVX512, __m512d, 8, _mm512_loadu_pd, _mm512_storeu_pd,
              _mm512_set1_pd, _mm512_fmadd_pd)
#endif

#define KB_SINCOS_DEFINE(ATTR, SUF)                                                      \
    ATTR static int kb_sincos_d_##SUF(const double* restrict u, ptrdiff_t D, double scale, \
                                      double* restrict c_out, double* restrict s_out) {  \
        /* OR of the bits of 1.0 for each phase beyond the limit (or NaN): a select of     \
         * doubles and an integer OR vectorise on every target, a bool-to-int does not.  \
         */                                                                              \
        uint64_t wide = 0, bits;                                                         \
        double flag;                                                                     \
        for (ptrdiff_t k = 0; k < D; k++) {                                              \
            kb_sincos_one(u[k], scale, c_out + k, s_out + k);                            \
            flag = fabs(u[k]) <= KB_SINCOS_LIMIT ? 0.0 : 1.0;                            \
            memcpy(&bits, &flag, sizeof bits);                                           \
            wide |= bits;                                                                \
        }                                                                                \
        return wide != 0;                                                                \
    }

KB_SINCOS_DEFINE(, base)
#if KB_X86
KB_SINCOS_DEFINE(KB_AVX2, avx2)
KB_SINCOS_DEFINE(KB_AVX512, avx512)
#endif

/* c_out[k] = scale·cos(u[k]), s_out[k] = scale·sin(u[k]) for k < D (see the top). */
static inline void kb_sincos_d(const double* u, ptrdiff_t D, double scale, double* c_out,
                               double* s_out) {
    ptrdiff_t k;
    double s, c;
    int wide;
    switch (kb_level()) {
#if KB_X86
    case 2: wide = kb_sincos_d_avx512(u, D, scale, c_out, s_out); break;
    case 1: wide = kb_sincos_d_avx2(u, D, scale, c_out, s_out); break;
#endif
    default: wide = kb_sincos_d_base(u, D, scale, c_out, s_out); break;
    }
    if (!wide)
        return;
    for (k = 0; k < D; k++) {
        if (!(fabs(u[k]) <= KB_SINCOS_LIMIT)) {
            s = sin(u[k]);
            c = cos(u[k]);
            s_out[k] = scale * s;
            c_out[k] = scale * c;
        }
    }
}

/* Adds to u the phases Ωᵀx of x from the rows of the row-major d×D matrix Ω for its
 * non-zeros (nnz·D reads instead of d·D for a sparse x), summed in the order of idx. */
static inline void kb_phases_d(const double* Omega, ptrdiff_t D, const ptrdiff_t* idx,
                               const double* vals, ptrdiff_t nnz, double* u) {
    switch (kb_level()) {
#if KB_X86
    case 2: kb_phases_d_avx512(Omega, D, idx, vals, nnz, u); break;
    case 1: kb_phases_d_avx2(Omega, D, idx, vals, nnz, u); break;
#endif
    default: kb_phases_d_base(Omega, D, idx, vals, nnz, u); break;
    }
}

#endif
