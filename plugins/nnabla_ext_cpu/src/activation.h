// Element-wise tanh and GELU (nnabla's tanh form), forward and backward, in one pass.
//
// numpy's float32 tanh runs at about 5 ns per element here, and the GELU formula took
// ten numpy passes; these loops vectorize. float32 uses fast_tanh (below: branch-free,
// so the compiler vectorizes it, within a few float32 ulps of std::tanh); float64 calls
// std::tanh.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "geometry.h"

namespace nbla_native {

// Built for x86-64-v3 (AVX2, FMA) as well as the baseline; the loader picks the clone the
// CPU supports ("arch=haswell" would test for that Intel model, not its features).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define NBLA_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define NBLA_VECTOR_CLONES
#endif
// Inlined into each clone, so the whole loop body is compiled for the clone's target.
#if defined(__GNUC__)
#define NBLA_INLINE __attribute__((always_inline)) inline
#else
#define NBLA_INLINE inline
#endif

namespace detail {

// e^x for x in [-104, 88] (Cephes' expf polynomial after x = n ln2 + r; 2^n from bits);
// 0 below (as float32's e^x rounds), e^88 above.
NBLA_INLINE float exp_bounded(float x) {
  x = std::min(std::max(x, -104.0f), 88.0f);  // not fmin/fmax: those are library calls
  // n = round(x / ln2) by the 1.5 * 2^23 trick: the integer lands in the low mantissa bits
  // (no float-to-int conversion or comparison, so the loop vectorizes).
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  std::int32_t n;
  std::memcpy(&n, &shifted, sizeof n);
  n -= 0x4B400000;
  const float fn = shifted - 12582912.0f;
  float r = x - fn * 0.693359375f;
  r = r + fn * 2.12194440e-4f;
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r2 + r + 1.0f;
  // 2^n as two normal factors, so results below 2^-126 underflow gradually as expf's do
  const std::int32_t half = n >> 1;
  const std::int32_t bits1 = (half + 127) << 23, bits2 = (n - half + 127) << 23;
  float scale1, scale2;
  std::memcpy(&scale1, &bits1, sizeof scale1);
  std::memcpy(&scale2, &bits2, sizeof scale2);
  return e * scale1 * scale2;
}

}  // namespace detail

// tanh in float: an odd polynomial below |x| = 0.625 (Cephes' tanhf), 1 - 2 / (e^2|x| + 1)
// above, both computed and selected without a branch.
NBLA_INLINE float fast_tanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = std::copysign(std::fabs(p * z * x + x), x);  // keeps tanh(-0) = -0
  const float large = std::copysign(1.0f - 2.0f / (detail::exp_bounded(2.0f * a) + 1.0f), x);
  return a < 0.625f ? small : large;
}

inline double fast_tanh(double x) { return std::tanh(x); }

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

template <typename T>
NBLA_INLINE void tanh_forward_loop(const T *__restrict x, T *__restrict y, idx_t n) {
  for (idx_t i = 0; i < n; ++i) y[i] = fast_tanh(x[i]);
}

// dx = dy (1 - y^2)
template <typename T>
NBLA_INLINE void tanh_backward_loop(const T *__restrict y, const T *__restrict dy, T *__restrict dx,
                        idx_t n) {
  for (idx_t i = 0; i < n; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

// y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
template <typename T>
NBLA_INLINE void gelu_forward_loop(const T *__restrict x, T *__restrict y, idx_t n) {
  const T k = T(kSqrt2OverPi), c = T(kGeluCubic);
  for (idx_t i = 0; i < n; ++i) {
    const T v = x[i];
    y[i] = T(0.5) * v * (T(1) + fast_tanh(k * (v + c * v * v * v)));
  }
}

// dx = dy (0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 c x^2)), t the tanh above
template <typename T>
NBLA_INLINE void gelu_backward_loop(const T *__restrict x, const T *__restrict dy, T *__restrict dx,
                        idx_t n) {
  const T k = T(kSqrt2OverPi), c = T(kGeluCubic);
  for (idx_t i = 0; i < n; ++i) {
    const T v = x[i];
    const T t = fast_tanh(k * (v + c * v * v * v));
    const T g = T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * k * (T(1) + T(3) * c * v * v);
    dx[i] = dy[i] * g;
  }
}

// The entry points: float32 loops in vector clones, float64 plain.
NBLA_VECTOR_CLONES static void tanh_forward(const float *x, float *y, idx_t n) {
  tanh_forward_loop(x, y, n);
}
NBLA_VECTOR_CLONES static void tanh_backward(const float *y, const float *dy, float *dx,
                                             idx_t n) {
  tanh_backward_loop(y, dy, dx, n);
}
NBLA_VECTOR_CLONES static void gelu_forward(const float *x, float *y, idx_t n) {
  gelu_forward_loop(x, y, n);
}
NBLA_VECTOR_CLONES static void gelu_backward(const float *x, const float *dy, float *dx,
                                             idx_t n) {
  gelu_backward_loop(x, dy, dx, n);
}
inline void tanh_forward(const double *x, double *y, idx_t n) { tanh_forward_loop(x, y, n); }
inline void tanh_backward(const double *y, const double *dy, double *dx, idx_t n) {
  tanh_backward_loop(y, dy, dx, n);
}
inline void gelu_forward(const double *x, double *y, idx_t n) { gelu_forward_loop(x, y, n); }
inline void gelu_backward(const double *x, const double *dy, double *dx, idx_t n) {
  gelu_backward_loop(x, dy, dx, n);
}

// Splits [0, n) into chunks over the native threads (element-wise loops are cheap per
// element: below kParallelWork * 16 elements one thread is faster).
template <typename Body>
void for_chunks(idx_t n, Body body) {
  const idx_t chunk = 1 << 14;
  const idx_t count = (n + chunk - 1) / chunk;
  parallel_for(count, n > kParallelWork * 16, [&](idx_t c) {
    const idx_t start = c * chunk;
    body(start, std::min(n, start + chunk) - start);
  });
}

}  // namespace nbla_native
