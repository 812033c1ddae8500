/* Vectorised loops of kbench's kernel rows, float64 and float32.
 *
 * Why a hand-written exp: scripts/bench_simd_exp.py times the RBF kernel row (one dgemv and
 * the exp pass) with this exp against the same loop calling libm exp, compiled -O3 without
 * -ffast-math. Measured on an x86-64 with AVX-512 (one thread, shared machine): the row is
 * 1.20-1.26x faster with this header at d = 123 and 1.93-2.06x at d = 20, for M = 500 to
 * 5000 stored vectors (median 1.60x); the exp pass alone is 6-8x faster. The header is kept
 * because that exceeds the 1.2x that would justify keeping hand-written code; rerun the
 * script after changing it or the compiler.
 *
 * A kernel row is one pass over the M x d stored vectors (BLAS gemv for the inner
 * products) followed by an elementwise transform over M values. With a scalar libm exp
 * or pow the transform, not the pass over memory, dominated for d below a few hundred;
 * NumPy's own exp is vectorised. These loops are written so that GCC and Clang vectorise
 * them without -ffast-math: exp uses a branch-free range reduction and polynomial (no
 * libm call), sums that must stay in order use explicit independent lanes, and integer
 * polynomial degrees use multiplications instead of pow.
 *
 * Each loop is compiled three times (AVX-512, AVX2 with FMA, and the baseline the
 * extension is built for) and the widest one the CPU supports is chosen on first use, so
 * one wheel runs everywhere. Within one process every element of every row goes through
 * the same instruction sequence, whatever its position, so results are reproducible.
 *
 * Accuracy: exp is within 2 ulp of the correctly rounded value over the whole double
 * (float) range, subnormal results included, and exp(0) = 1 exactly.
 */
#ifndef KBENCH_KERNEL_SIMD_H
#define KBENCH_KERNEL_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define KB_X86 1
#define KB_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#define KB_AVX2 __attribute__((target("avx2,fma")))
#else
#define KB_X86 0
#endif

/* Rows up to this dimension get their inner products from a direct loop specialised for
 * each d (a BLAS gemv call costs more than the arithmetic there); measured on AVX-512 the
 * loops beat OpenBLAS up to d = 8 at every M, and lose at d = 12 once M is large. */
#define KB_DOTS_MAX_D 8
/* L1 distances (no BLAS equivalent) use loops specialised for each d up to this one, and
 * the four-rows-at-a-time vector loop above it. */
#define KB_SMALL_D 16

/* -- exp ------------------------------------------------------------------------------ */

/* exp(x) for T = double (integer type I = int64_t) or float (int32_t): x = n ln2 + r with
 * |r| <= ln2/2, exp(x) = 2^n exp(r). x is first clamped to [LO, HI] (below LO the result is
 * 0, above HI infinite). n is rounded with the 1.5 * 2^MANT shifter, whose low mantissa
 * bits then hold n as an integer; ln2 is split into LN2_HI (few enough bits that n * LN2_HI
 * is exact) and LN2_LO. POLY(p, r) sets p to the Taylor polynomial of exp(r). 2^n is formed
 * as two factors 2^n1 * 2^n2 (n1 = n / 2 rounded, n2 = n - n1), each a normal number, so
 * that results in the subnormal range and exp(HI) come out right. One body for both types:
 * the two differ only by these constants. */
#define KB_EXP_BODY(T, I, LO, HI, SHIFTER, LOG2E, LN2_HI, LN2_LO, BIAS, MANT, POLY)       \
    const T shifter = SHIFTER;                                                           \
    T t, n, r, p, s1, s2, h;                                                             \
    I ti, si, hi, n1, n2, b1, b2;                                                        \
    x = x < (LO) ? (LO) : x;                                                             \
    x = x > (HI) ? (HI) : x;                                                             \
    t = x * (LOG2E) + shifter;                                                           \
    n = t - shifter;                                                                     \
    r = x - n * (LN2_HI);                                                                \
    r = r - n * (LN2_LO);                                                                \
    POLY(p, r);                                                                          \
    memcpy(&ti, &t, sizeof ti);                                                          \
    memcpy(&si, &shifter, sizeof si);                                                    \
    ti -= si; /* n */                                                                    \
    h = n * (T)0.5 + shifter;                                                            \
    memcpy(&hi, &h, sizeof hi);                                                          \
    n1 = hi - si;                                                                        \
    n2 = ti - n1;                                                                        \
    b1 = (n1 + (BIAS)) << (MANT);                                                        \
    b2 = (n2 + (BIAS)) << (MANT);                                                        \
    memcpy(&s1, &b1, sizeof s1);                                                         \
    memcpy(&s2, &b2, sizeof s2);                                                         \
    return p * s1 * s2;

/* Taylor polynomial of exp: degree 13 for double (the remainder is below 2^-58 relative
 * for |r| <= ln2/2), degree 8 for float. The two share their last eight steps; L writes a
 * literal of the type (KB_LIT_F appends the f suffix, so each coefficient is the float
 * quotient of two float literals, not a rounded double). */
#define KB_LIT_D(x) x
#define KB_LIT_F(x) x##f
#define KB_EXP_POLY_TAIL(p, r, L)                                                        \
    p = p * r + L(1.0) / L(5040.0);                                                      \
    p = p * r + L(1.0) / L(720.0);                                                       \
    p = p * r + L(1.0) / L(120.0);                                                       \
    p = p * r + L(1.0) / L(24.0);                                                        \
    p = p * r + L(1.0) / L(6.0);                                                         \
    p = p * r + L(0.5);                                                                  \
    p = p * r + L(1.0);                                                                  \
    p = p * r + L(1.0)

#define KB_EXP_POLY_D(p, r)                                                              \
    p = 1.0 / 6227020800.0;                                                              \
    p = p * r + 1.0 / 479001600.0;                                                       \
    p = p * r + 1.0 / 39916800.0;                                                        \
    p = p * r + 1.0 / 3628800.0;                                                         \
    p = p * r + 1.0 / 362880.0;                                                          \
    p = p * r + 1.0 / 40320.0;                                                           \
    KB_EXP_POLY_TAIL(p, r, KB_LIT_D)

#define KB_EXP_POLY_F(p, r)                                                              \
    p = 1.0f / 40320.0f;                                                                 \
    KB_EXP_POLY_TAIL(p, r, KB_LIT_F)

static inline double kb_exp_d(double x) {
    /* ln2_hi has 32 bits, so n * ln2_hi is exact. */
    KB_EXP_BODY(double, int64_t, -746.0, 710.0, 6755399441055744.0, 1.4426950408889634074,
                6.93147180369123816490e-01, 1.90821492927058770002e-10, 1023, 52, KB_EXP_POLY_D)
}

static inline float kb_exp_f(float x) {
    /* ln2_hi has 16 bits. */
    KB_EXP_BODY(float, int32_t, -104.0f, 89.0f, 12582912.0f, 1.44269502f, 0.693145752f,
                1.42860677e-06f, 127, 23, KB_EXP_POLY_F)
}

/* -- loop bodies, compiled once per target below -------------------------------------- */

/* out[i] = exp(-gamma * max(sq[i] + xsq - 2 out[i], 0)): RBF from inner products. */
#define KB_RBF_BODY(T, EXP)                                                              \
    for (ptrdiff_t i = 0; i < m; i++) {                                                  \
        T dist = sq[i] + xsq - (T)2 * out[i];                                            \
        dist = dist < (T)0 ? (T)0 : dist;                                                \
        out[i] = EXP(-gamma * dist);                                                     \
    }

/* out[i] = (scale out[i] + offset)^degree for a small integer degree. */
#define KB_POLY_BODY(T)                                                                  \
    switch (degree) {                                                                    \
    case 1:                                                                              \
        for (ptrdiff_t i = 0; i < m; i++) out[i] = scale * out[i] + offset;              \
        break;                                                                           \
    case 2:                                                                              \
        for (ptrdiff_t i = 0; i < m; i++) { T b = scale * out[i] + offset; out[i] = b * b; } \
        break;                                                                           \
    case 3:                                                                              \
        for (ptrdiff_t i = 0; i < m; i++) { T b = scale * out[i] + offset; out[i] = b * b * b; } \
        break;                                                                           \
    default: /* 4: the largest this loop is called with */                               \
        for (ptrdiff_t i = 0; i < m; i++) { T b = scale * out[i] + offset; b = b * b; out[i] = b * b; } \
        break;                                                                           \
    }

/* Sums over the rows of a C-contiguous m x D block and x, for a constant D
 * (d <= KB_DOTS_MAX_D, or KB_SMALL_D for L1): TERM is the summand, written in s[j] and
 * x[j]. Inner products for the polynomial and RBF kernels, L1 distances for the Laplacian. */
#define KB_ROWS_CASE(T, D, TERM)                                                         \
    case D:                                                                              \
        for (ptrdiff_t i = 0; i < m; i++) {                                              \
            const T* s = S + i * D;                                                      \
            T acc = (T)0;                                                                \
            for (int j = 0; j < D; j++) acc += TERM;                                     \
            out[i] = acc;                                                                \
        }                                                                                \
        break;

#define KB_DOTS_CASE(T, D) KB_ROWS_CASE(T, D, s[j] * x[j])

#define KB_DOTS_BODY(T)                                                                  \
    switch (d) {                                                                         \
    case 0: for (ptrdiff_t i = 0; i < m; i++) out[i] = (T)0; break;                      \
    KB_DOTS_CASE(T, 1) KB_DOTS_CASE(T, 2) KB_DOTS_CASE(T, 3) KB_DOTS_CASE(T, 4)          \
    KB_DOTS_CASE(T, 5) KB_DOTS_CASE(T, 6) KB_DOTS_CASE(T, 7) KB_DOTS_CASE(T, 8)          \
    default: break;                                                                      \
    }

#define KB_L1_CASE(T, ABS, D) KB_ROWS_CASE(T, D, ABS(s[j] - x[j]))

/* L1 distance of two long vectors in L independent lanes (several vector registers, so
 * that the additions of one lane do not wait for each other), combined in a fixed order:
 * vectorisable without reassociating a sum, and the same result on every target. */
#define KB_L1_LONG(T, ABS, L, a, b, d, result)                                           \
    do {                                                                                 \
        T lane[L] = {0};                                                                 \
        ptrdiff_t j = 0;                                                                 \
        for (; j + L <= (d); j += L)                                                     \
            for (int l = 0; l < L; l++) lane[l] += ABS((a)[j + l] - (b)[j + l]);         \
        for (int l = 0; j + l < (d); l++) lane[l] += ABS((a)[j + l] - (b)[j + l]);       \
        for (int w = L / 2; w >= 1; w /= 2)                                              \
            for (int l = 0; l < w; l++) lane[l] += lane[l + w];                          \
        (result) = lane[0];                                                              \
    } while (0)

/* out[i] = exp(-gamma * L1 distance of row i and x). */
#define KB_LAPLACIAN_BODY(T, ABS, LONG_ROWS, EXP)                                        \
    if (d <= KB_SMALL_D) {                                                               \
        switch (d) {                                                                     \
        case 0: for (ptrdiff_t i = 0; i < m; i++) out[i] = (T)0; break;                  \
        KB_L1_CASE(T, ABS, 1) KB_L1_CASE(T, ABS, 2) KB_L1_CASE(T, ABS, 3)                \
        KB_L1_CASE(T, ABS, 4) KB_L1_CASE(T, ABS, 5) KB_L1_CASE(T, ABS, 6)                \
        KB_L1_CASE(T, ABS, 7) KB_L1_CASE(T, ABS, 8) KB_L1_CASE(T, ABS, 9)                \
        KB_L1_CASE(T, ABS, 10) KB_L1_CASE(T, ABS, 11) KB_L1_CASE(T, ABS, 12)             \
        KB_L1_CASE(T, ABS, 13) KB_L1_CASE(T, ABS, 14) KB_L1_CASE(T, ABS, 15)             \
        KB_L1_CASE(T, ABS, 16)                                                           \
        default: break;                                                                  \
        }                                                                                \
    } else {                                                                             \
        LONG_ROWS(S, m, d, x, out);                                                      \
    }                                                                                    \
    for (ptrdiff_t i = 0; i < m; i++) out[i] = EXP(-gamma * out[i]);

/* L1 distances of long rows (d > KB_SMALL_D), portable: lanes the compiler vectorises. */
#define KB_L1_ROWS_BASE(NAME, T, ABS, L)                                                 \
    static inline void NAME(const T* S, ptrdiff_t m, ptrdiff_t d, const T* x, T* out) {  \
        for (ptrdiff_t i = 0; i < m; i++) {                                              \
            T acc;                                                                       \
            KB_L1_LONG(T, ABS, L, S + i * d, x, d, acc);                                 \
            out[i] = acc;                                                                \
        }                                                                                \
    }

KB_L1_ROWS_BASE(kb_l1_rows_d_base, double, fabs, 32)
KB_L1_ROWS_BASE(kb_l1_rows_f_base, float, fabsf, 64)

#if KB_X86
/* L1 distances of long rows with intrinsics: four rows at a time share each load of x and
 * keep their sums in registers (the portable lanes spill to the stack once per row, which
 * costs as much as the arithmetic at d of a few hundred). A row's sum is formed the same
 * way whether it falls in a block of four or among the last rows: one vector accumulator
 * over the full vectors, a masked tail, then the reduction, so equal rows give equal bits.
 * Subtract, clear the sign bit, add: three vector operations per element. */
#define KB_L1_ROWS_OPS(NAME, ATTR, T, V, W, ZERO, LOAD, TAIL, SUB, AND, ADD, SIGNLESS, REDUCE) \
    ATTR static void NAME(const T* S, ptrdiff_t m, ptrdiff_t d, const T* x, T* out) {    \
        const V keep = SIGNLESS;                                                         \
        const ptrdiff_t full = d - d % W;                                                \
        const int rest = (int)(d % W);                                                   \
        ptrdiff_t i = 0;                                                                 \
        for (; i + 4 <= m; i += 4) {                                                     \
            const T* a0 = S + i * d;                                                     \
            const T* a1 = a0 + d;                                                        \
            const T* a2 = a1 + d;                                                        \
            const T* a3 = a2 + d;                                                        \
            V s0 = ZERO, s1 = ZERO, s2 = ZERO, s3 = ZERO;                                \
            for (ptrdiff_t j = 0; j < full; j += W) {                                    \
                V xv = LOAD(x + j);                                                      \
                s0 = ADD(s0, AND(SUB(LOAD(a0 + j), xv), keep));                          \
                s1 = ADD(s1, AND(SUB(LOAD(a1 + j), xv), keep));                          \
                s2 = ADD(s2, AND(SUB(LOAD(a2 + j), xv), keep));                          \
                s3 = ADD(s3, AND(SUB(LOAD(a3 + j), xv), keep));                          \
            }                                                                            \
            if (rest) {                                                                  \
                V xv = TAIL(x + full, rest);                                             \
                s0 = ADD(s0, AND(SUB(TAIL(a0 + full, rest), xv), keep));                 \
                s1 = ADD(s1, AND(SUB(TAIL(a1 + full, rest), xv), keep));                 \
                s2 = ADD(s2, AND(SUB(TAIL(a2 + full, rest), xv), keep));                 \
                s3 = ADD(s3, AND(SUB(TAIL(a3 + full, rest), xv), keep));                 \
            }                                                                            \
            out[i] = REDUCE(s0);                                                         \
            out[i + 1] = REDUCE(s1);                                                     \
            out[i + 2] = REDUCE(s2);                                                     \
            out[i + 3] = REDUCE(s3);                                                     \
        }                                                                                \
        for (; i < m; i++) {                                                             \
            const T* a0 = S + i * d;                                                     \
            V s0 = ZERO;                                                                 \
            for (ptrdiff_t j = 0; j < full; j += W)                                      \
                s0 = ADD(s0, AND(SUB(LOAD(a0 + j), LOAD(x + j)), keep));                 \
            if (rest)                                                                    \
                s0 = ADD(s0, AND(SUB(TAIL(a0 + full, rest), TAIL(x + full, rest)), keep)); \
            out[i] = REDUCE(s0);                                                         \
        }                                                                                \
    }

/* The intrinsics of a target's width (MM: _mm512 or _mm256) and type (SUF: pd or ps). */
#define KB_L1_ROWS_X86(NAME, ATTR, T, V, W, MM, SUF, TAIL, SIGNLESS, REDUCE)             \
    KB_L1_ROWS_OPS(NAME, ATTR, T, V, W, MM##_setzero_##SUF(), MM##_loadu_##SUF, TAIL,    \
                   MM##_sub_##SUF, MM##_and_##SUF, MM##_add_##SUF, SIGNLESS, REDUCE)

/* Masked loads read only the first n elements (the rest are zero): no read past the row. */
KB_AVX512 static inline __m512d kb_tail8_pd(const double* p, int n) {
    return _mm512_maskz_loadu_pd((__mmask8)((1u << n) - 1u), p);
}
KB_AVX512 static inline __m512 kb_tail16_ps(const float* p, int n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
KB_AVX2 static inline __m256d kb_tail4_pd(const double* p, int n) {
    const __m256i idx = _mm256_set_epi64x(3, 2, 1, 0);
    return _mm256_maskload_pd(p, _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), idx));
}
KB_AVX2 static inline __m256 kb_tail8_ps(const float* p, int n) {
    const __m256i idx = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    return _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), idx));
}
/* Horizontal sums in a fixed order (halves added pairwise). */
KB_AVX2 static inline double kb_hsum4_pd(__m256d v) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
KB_AVX2 static inline float kb_hsum8_ps(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
KB_AVX512 static inline double kb_hsum8_pd(__m512d v) {
    __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}
KB_AVX512 static inline float kb_hsum16_ps(__m512 v) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
}

KB_L1_ROWS_X86(kb_l1_rows_d_avx512, KB_AVX512, double, __m512d, 8, _mm512, pd, kb_tail8_pd,
               _mm512_castsi512_pd(_mm512_set1_epi64(0x7fffffffffffffffLL)), kb_hsum8_pd)
KB_L1_ROWS_X86(kb_l1_rows_f_avx512, KB_AVX512, float, __m512, 16, _mm512, ps, kb_tail16_ps,
               _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff)), kb_hsum16_ps)
KB_L1_ROWS_X86(kb_l1_rows_d_avx2, KB_AVX2, double, __m256d, 4, _mm256, pd, kb_tail4_pd,
               _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL)), kb_hsum4_pd)
KB_L1_ROWS_X86(kb_l1_rows_f_avx2, KB_AVX2, float, __m256, 8, _mm256, ps, kb_tail8_ps,
               _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)), kb_hsum8_ps)
#endif

/* -- one definition per target ------------------------------------------------------ */

#define KB_DEFINE(ATTR, SUF)                                                             \
    ATTR static void kb_vexp_d_##SUF(double* v, ptrdiff_t n) {                           \
        for (ptrdiff_t i = 0; i < n; i++) v[i] = kb_exp_d(v[i]); }                       \
    ATTR static void kb_vexp_f_##SUF(float* v, ptrdiff_t n) {                            \
        for (ptrdiff_t i = 0; i < n; i++) v[i] = kb_exp_f(v[i]); }                       \
    ATTR static void kb_rbf_d_##SUF(double* out, const double* sq, double xsq,           \
                                    double gamma, ptrdiff_t m) { KB_RBF_BODY(double, kb_exp_d) } \
    ATTR static void kb_rbf_f_##SUF(float* out, const float* sq, float xsq,              \
                                    float gamma, ptrdiff_t m) { KB_RBF_BODY(float, kb_exp_f) } \
    ATTR static void kb_poly_d_##SUF(double* out, double scale, double offset,           \
                                     int degree, ptrdiff_t m) { KB_POLY_BODY(double) }   \
    ATTR static void kb_poly_f_##SUF(float* out, float scale, float offset,              \
                                     int degree, ptrdiff_t m) { KB_POLY_BODY(float) }    \
    ATTR static void kb_dots_d_##SUF(const double* S, ptrdiff_t m, int d, const double* x, \
                                     double* out) { KB_DOTS_BODY(double) }               \
    ATTR static void kb_dots_f_##SUF(const float* S, ptrdiff_t m, int d, const float* x, \
                                     float* out) { KB_DOTS_BODY(float) }                 \
    ATTR static void kb_laplacian_d_##SUF(const double* S, ptrdiff_t m, ptrdiff_t d,     \
                                          const double* x, double gamma, double* out) {  \
        KB_LAPLACIAN_BODY(double, fabs, kb_l1_rows_d_##SUF, kb_exp_d) }                                            \
    ATTR static void kb_laplacian_f_##SUF(const float* S, ptrdiff_t m, ptrdiff_t d,      \
                                          const float* x, float gamma, float* out) {     \
        KB_LAPLACIAN_BODY(float, fabsf, kb_l1_rows_f_##SUF, kb_exp_f) }

KB_DEFINE(, base)
#if KB_X86
KB_DEFINE(KB_AVX2, avx2)
KB_DEFINE(KB_AVX512, avx512)
#endif

/* 0: baseline, 1: AVX2 + FMA, 2: AVX-512. Racing threads all store the same value.
 * KBENCH_SIMD=base|avx2|avx512 caps the level (never above what the CPU has), so that one
 * machine can run the test suite through the code paths other CPUs take. */
static int kb_level_cache = -1;

static inline int kb_level(void) {
    if (kb_level_cache < 0) {
        int level = 0;
#if KB_X86
        __builtin_cpu_init();
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
            level = 2;
        else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            level = 1;
#endif
        const char* cap = getenv("KBENCH_SIMD");
        if (cap != NULL) {
            int most = strcmp(cap, "base") == 0 ? 0 : strcmp(cap, "avx2") == 0 ? 1 : 2;
            if (most < level) level = most;
        }
        kb_level_cache = level;
    }
    return kb_level_cache;
}

#if KB_X86
#define KB_DISPATCH(NAME, ARGS)                                                          \
    switch (kb_level()) {                                                                \
    case 2: NAME##_avx512 ARGS; return;                                                  \
    case 1: NAME##_avx2 ARGS; return;                                                    \
    default: NAME##_base ARGS; return;                                                   \
    }
#else
#define KB_DISPATCH(NAME, ARGS) NAME##_base ARGS;
#endif

/* v[i] = exp(v[i]) in place: for learners with many exponentials per step (merging, step
 * sizes), the same exp as the kernel rows. */
static inline void kb_vexp_d(double* v, ptrdiff_t n) { KB_DISPATCH(kb_vexp_d, (v, n)) }
static inline void kb_vexp_f(float* v, ptrdiff_t n) { KB_DISPATCH(kb_vexp_f, (v, n)) }

static inline void kb_rbf_d(double* out, const double* sq, double xsq, double gamma, ptrdiff_t m) {
    KB_DISPATCH(kb_rbf_d, (out, sq, xsq, gamma, m))
}
static inline void kb_rbf_f(float* out, const float* sq, float xsq, float gamma, ptrdiff_t m) {
    KB_DISPATCH(kb_rbf_f, (out, sq, xsq, gamma, m))
}
static inline void kb_poly_d(double* out, double scale, double offset, int degree, ptrdiff_t m) {
    KB_DISPATCH(kb_poly_d, (out, scale, offset, degree, m))
}
static inline void kb_poly_f(float* out, float scale, float offset, int degree, ptrdiff_t m) {
    KB_DISPATCH(kb_poly_f, (out, scale, offset, degree, m))
}
static inline void kb_dots_d(const double* S, ptrdiff_t m, int d, const double* x, double* out) {
    KB_DISPATCH(kb_dots_d, (S, m, d, x, out))
}
static inline void kb_dots_f(const float* S, ptrdiff_t m, int d, const float* x, float* out) {
    KB_DISPATCH(kb_dots_f, (S, m, d, x, out))
}
static inline void kb_laplacian_d(const double* S, ptrdiff_t m, ptrdiff_t d, const double* x,
                                  double gamma, double* out) {
    KB_DISPATCH(kb_laplacian_d, (S, m, d, x, gamma, out))
}
static inline void kb_laplacian_f(const float* S, ptrdiff_t m, ptrdiff_t d, const float* x,
                                  float gamma, float* out) {
    KB_DISPATCH(kb_laplacian_f, (S, m, d, x, gamma, out))
}

#endif /* KBENCH_KERNEL_SIMD_H */
