// Per-channel statistics and affine maps over (outer, channels, inner) arrays, the fused
// passes of batch/layer/instance normalization (nnabla_ext/cpu/kernels/normalization.py
// holds the formulas; these loops only replace its several numpy passes by two).
//
// A channel c owns the elements x[o, c, i] for every o < outer and i < inner: `outer`
// contiguous runs of `inner` values. Channels are independent, so the loops split them
// across OpenMP threads; sums are accumulated in double and rounded once.
#pragma once

#include <cmath>

#include "geometry.h"

namespace nbla_native {

namespace detail {

inline bool channels_parallel(idx_t outer, idx_t channels, idx_t inner) {
  return channels > 1 && outer * channels * inner > kParallelWork;
}

}  // namespace detail

// mean[c] and biased variance var[c] (two passes: the variance of x - mean).
template <typename T>
void channel_moments(const T *x, T *mean, T *var, idx_t outer, idx_t channels, idx_t inner) {
  const idx_t n = outer * inner;
  parallel_for(channels, detail::channels_parallel(outer, channels, inner), [&](idx_t c) {
    double sum = 0.0;
    for (idx_t o = 0; o < outer; ++o) {
      const T *r = x + (o * channels + c) * inner;
      for (idx_t i = 0; i < inner; ++i) sum += r[i];
    }
    const T m = n ? T(sum / double(n)) : T(0);
    double squares = 0.0;
    for (idx_t o = 0; o < outer; ++o) {
      const T *r = x + (o * channels + c) * inner;
      for (idx_t i = 0; i < inner; ++i) {
        const double d = double(r[i] - m);
        squares += d * d;
      }
    }
    mean[c] = m;
    var[c] = n ? T(squares / double(n)) : T(0);
  });
}

// sum_dy[c] = sum dy and sum_dy_xc[c] = sum dy (x - mean[c]) over the channel.
template <typename T>
void channel_grad_sums(const T *dy, const T *x, const T *mean, T *sum_dy, T *sum_dy_xc,
                       idx_t outer, idx_t channels, idx_t inner) {
  parallel_for(channels, detail::channels_parallel(outer, channels, inner), [&](idx_t c) {
    const T m = mean[c];
    double s = 0.0, sx = 0.0;
    for (idx_t o = 0; o < outer; ++o) {
      const idx_t at = (o * channels + c) * inner;
      const T *g = dy + at;
      const T *r = x + at;
      for (idx_t i = 0; i < inner; ++i) {
        s += g[i];
        sx += double(g[i]) * double(r[i] - m);
      }
    }
    sum_dy[c] = T(s);
    sum_dy_xc[c] = T(sx);
  });
}

// y = (x - mean[c]) a[c] + b[c], plus dy p[c] when dy is given (the input gradient of a
// normalization is of this form, with per-channel coefficients).
template <typename T>
void channel_affine(const T *x, const T *mean, const T *a, const T *b, const T *dy,
                    const T *p, T *y, idx_t outer, idx_t channels, idx_t inner) {
  const idx_t rows = outer * channels;
  parallel_for(rows, rows > 1 && rows * inner > kParallelWork, [&](idx_t row) {
    const idx_t c = row % channels, at = row * inner;
    const T m = mean[c], ac = a[c], bc = b[c];
    const T *r = x + at;
    T *out = y + at;
    if (dy) {
      const T pc = p[c];
      const T *g = dy + at;
      for (idx_t i = 0; i < inner; ++i) out[i] = (r[i] - m) * ac + bc + g[i] * pc;
    } else {
      for (idx_t i = 0; i < inner; ++i) out[i] = (r[i] - m) * ac + bc;
    }
  });
}

}  // namespace nbla_native
