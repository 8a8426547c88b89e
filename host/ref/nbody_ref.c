/* nbody_ref.c — see nbody_ref.h.  The j-set is first copied to a
 * structure of arrays so the inner loop (one i against all j) vectorises. */
#include "nbody_ref.h"

#include <math.h>
#include <stdlib.h>
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_ROW 1
#endif

/* The library is built for the generic x86-64 target and with errno-setting
 * sqrt, which keeps gcc from vectorising the j loop; so that the fp32
 * baseline of `clphys bench` is a fair one (what gcc -O3 -march=native
 * -ffast-math gives), its row is written with AVX2/FMA intrinsics and chosen
 * at run time when the CPU has them. */
#define REF_ATTR __attribute__((noinline))

#ifdef HAVE_AVX2_ROW
__attribute__((target("avx2,fma"))) static void row_f32_avx2(const float *sx, const float *sy, const float *sz,
                                                             const float *sm, int nj, float px, float py, float pz,
                                                             float e2, float *out)
{
    __m256 ax = _mm256_setzero_ps(), ay = ax, az = ax, ph = ax, zero = ax;
    const __m256 vx = _mm256_set1_ps(px), vy = _mm256_set1_ps(py), vz = _mm256_set1_ps(pz), ve = _mm256_set1_ps(e2);
    const __m256 half = _mm256_set1_ps(0.5f), three = _mm256_set1_ps(3.0f);
    int j = 0;
    for (; j + 8 <= nj; j += 8) {
        __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(sx + j), vx), dy = _mm256_sub_ps(_mm256_loadu_ps(sy + j), vy);
        __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(sz + j), vz);
        __m256 r2 = _mm256_fmadd_ps(dz, dz, _mm256_fmadd_ps(dy, dy, _mm256_fmadd_ps(dx, dx, ve)));
        /* rsqrt estimate + one Newton step, as gcc -ffast-math emits for 1/sqrtf */
        __m256 y = _mm256_rsqrt_ps(r2);
        __m256 inv = _mm256_mul_ps(_mm256_mul_ps(half, y), _mm256_fnmadd_ps(_mm256_mul_ps(r2, y), y, three));
        inv = _mm256_and_ps(inv, _mm256_cmp_ps(r2, zero, _CMP_GT_OQ)); /* r = 0: self pair skipped */
        __m256 mi = _mm256_mul_ps(_mm256_loadu_ps(sm + j), inv);
        __m256 mi3 = _mm256_mul_ps(mi, _mm256_mul_ps(inv, inv));
        ax = _mm256_fmadd_ps(dx, mi3, ax), ay = _mm256_fmadd_ps(dy, mi3, ay), az = _mm256_fmadd_ps(dz, mi3, az);
        ph = _mm256_add_ps(ph, mi);
    }
    float t[4][8];
    _mm256_storeu_ps(t[0], ax), _mm256_storeu_ps(t[1], ay), _mm256_storeu_ps(t[2], az), _mm256_storeu_ps(t[3], ph);
    for (int c = 0; c < 4; c++) {
        out[c] = 0;
        for (int l = 0; l < 8; l++) out[c] += t[c][l];
    }
    for (; j < nj; j++) {
        float dx = sx[j] - px, dy = sy[j] - py, dz = sz[j] - pz, r2 = dx * dx + dy * dy + dz * dz + e2;
        float inv = r2 > 0 ? 1.0f / sqrtf(r2) : 0.0f, mi = sm[j] * inv, mi3 = mi * inv * inv;
        out[0] += dx * mi3, out[1] += dy * mi3, out[2] += dz * mi3, out[3] += mi;
    }
}
#endif

#define DEFINE_REF(NAME, T, SQRT)                                                                                      \
    /* out = (sum ax, ay, az, sum m/r) of one i over all j */                                                          \
    REF_ATTR static void NAME##_row(const T *sx, const T *sy, const T *sz, const T *sm, int nj, T px, T py, T pz,      \
                                    T e2, T *out)                                                                      \
    {                                                                                                                  \
        T ax = 0, ay = 0, az = 0, ph = 0;                                                                              \
        _Pragma("omp simd reduction(+ : ax, ay, az, ph)") for (int j = 0; j < nj; j++)                                 \
        {                                                                                                              \
            const T dx = sx[j] - px, dy = sy[j] - py, dz = sz[j] - pz;                                                 \
            const T r2 = dx * dx + dy * dy + dz * dz + e2;                                                             \
            const T inv = r2 > 0 ? (T)1 / SQRT(r2) : (T)0; /* eps = 0: self pair skipped */                            \
            const T mi = sm[j] * inv, mi3 = mi * inv * inv;                                                            \
            ax += dx * mi3, ay += dy * mi3, az += dz * mi3, ph += mi;                                                  \
        }                                                                                                              \
        out[0] = ax, out[1] = ay, out[2] = az, out[3] = ph;                                                            \
    }                                                                                                                  \
    void NAME(int ni, const double *xi, int nj, const double *xj, double G, double eps, double *acc, double *pot)      \
    {                                                                                                                  \
        const int same = xi == NULL;                                                                                   \
        if (same) ni = nj, xi = xj;                                                                                    \
        T *s = malloc(4 * (size_t)(nj > 0 ? nj : 1) * sizeof *s);                                                      \
        if (!s) abort(); /* reference only: tests and bench, small sizes */                                            \
        T *sx = s, *sy = s + nj, *sz = s + 2 * (size_t)nj, *sm = s + 3 * (size_t)nj;                                   \
        for (int j = 0; j < nj; j++)                                                                                   \
            sx[j] = (T)xj[4 * j], sy[j] = (T)xj[4 * j + 1], sz[j] = (T)xj[4 * j + 2], sm[j] = (T)xj[4 * j + 3];        \
        const T e2 = (T)(eps * eps);                                                                                   \
        _Pragma("omp parallel for schedule(static)") for (int i = 0; i < ni; i++)                                      \
        {                                                                                                              \
            T r[4];                                                                                                    \
            ROW_OF(NAME)(sx, sy, sz, sm, nj, (T)xi[4 * i], (T)xi[4 * i + 1], (T)xi[4 * i + 2], e2, r);                 \
            acc[3 * i] = G * (double)r[0], acc[3 * i + 1] = G * (double)r[1], acc[3 * i + 2] = G * (double)r[2];       \
            if (pot) pot[i] = -G * (double)r[3] + (same && eps > 0 ? G * xi[4 * i + 3] / eps : 0.0);                   \
        }                                                                                                              \
        free(s);                                                                                                       \
    }

#define ROW_OF(NAME) NAME##_row
DEFINE_REF(nbody_ref_gravity, double, sqrt)
#undef ROW_OF
#ifdef HAVE_AVX2_ROW
static void (*pick_row_f32(void))(const float *, const float *, const float *, const float *, int, float, float, float,
                                  float, float *);
#define ROW_OF(NAME) pick_row_f32()
#else
#define ROW_OF(NAME) NAME##_row
#endif
DEFINE_REF(nbody_ref_gravity_f32, float, sqrtf)
#ifdef HAVE_AVX2_ROW
static void (*pick_row_f32(void))(const float *, const float *, const float *, const float *, int, float, float, float,
                                  float, float *)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? row_f32_avx2 : nbody_ref_gravity_f32_row;
}
#endif
