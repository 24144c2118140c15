// Per-channel statistics and affine maps over (outer, channels, inner) arrays, the fused
// passes of batch/layer/instance normalization (nnabla_ext/cpu/kernels/normalization.py
// holds the formulas; these loops only replace its several numpy passes by two).
//
// A channel c owns the elements x[o, c, i] for every o < outer and i < inner: `outer`
// contiguous runs of `inner` values. Channels are independent, so the loops split them
// across OpenMP threads; sums are accumulated in double and rounded once.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "activation.h"
#include "geometry.h"
#include "row_sums.h"

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

// Layer normalization of x viewed as (rows, features): statistics per row, an optional
// scale gamma and shift beta per feature (nnabla's layer_normalization with leading batch
// axes). Row sums are detail::row_sum's (row_sums.h); rows are independent and split across
// the pool.
namespace detail {

// Features per block of the parameter gradients' column sums (2 x 2 KiB of doubles).
constexpr idx_t kColumnBlock = 256;

}  // namespace detail

// One row of row_norm_forward (below): mean, var, inv_std and y.
template <typename T>
NBLA_INLINE void row_norm_forward_row(const T *__restrict xr, const T *gamma, const T *beta,
                                      T *__restrict yr, T *mean, T *var, T *inv_std,
                                      idx_t features, T eps) {
  const double n = double(features);
  const T m = features ? T(detail::row_sum(features, [&](idx_t i) { return double(xr[i]); }) / n)
                       : T(0);
  const double sq = detail::row_sum(features, [&](idx_t i) {
    const double d = double(xr[i] - m);
    return d * d;
  });
  const T v = features ? T(sq / n) : T(0);
  const T inv = T(1) / std::sqrt(v + eps);
  *mean = m;
  *var = v;
  *inv_std = inv;
  if (gamma && beta) {
    for (idx_t i = 0; i < features; ++i) yr[i] = (xr[i] - m) * inv * gamma[i] + beta[i];
  } else if (gamma) {
    for (idx_t i = 0; i < features; ++i) yr[i] = (xr[i] - m) * inv * gamma[i];
  } else if (beta) {
    for (idx_t i = 0; i < features; ++i) yr[i] = (xr[i] - m) * inv + beta[i];
  } else {
    for (idx_t i = 0; i < features; ++i) yr[i] = (xr[i] - m) * inv;
  }
}

// The input gradient of a row is dx = g inv + (x - mean) coef + cst (row_norm_backward_x,
// below); its two sums give the row's coef and cst.
template <typename T>
NBLA_INLINE void row_norm_grad_coefs(const T *__restrict xr, const T *__restrict gr, T m,
                                     T inv, const T *gamma, const T *dmean, const T *dvar,
                                     idx_t features, T *coef, T *cst) {
  double s_g, s_gxc;
  if (gamma) {
    detail::row_sums(
        features, [&](idx_t i) { return double(gr[i] * gamma[i]); },
        [&](idx_t i) { return double(gr[i] * gamma[i]) * double(xr[i] - m); }, &s_g, &s_gxc);
  } else {
    detail::row_sums(
        features, [&](idx_t i) { return double(gr[i]); },
        [&](idx_t i) { return double(gr[i]) * double(xr[i] - m); }, &s_g, &s_gxc);
  }
  const T n = T(features ? features : 1);
  T k = -inv * inv * inv * T(s_gxc) / n;
  T c = -inv * T(s_g) / n;
  if (dvar) k += T(2) * *dvar / n;
  if (dmean) c += *dmean / n;
  *coef = k;
  *cst = c;
}

// dx of `count` features of a row from the row's coef and cst (gamma: those features').
template <typename T>
NBLA_INLINE void row_norm_grad_write(const T *__restrict xr, const T *__restrict gr, T m,
                                     T inv, const T *gamma, T coef, T cst, T *__restrict out,
                                     idx_t count) {
  if (gamma) {
    for (idx_t i = 0; i < count; ++i)
      out[i] = gr[i] * gamma[i] * inv + (xr[i] - m) * coef + cst;
  } else {
    for (idx_t i = 0; i < count; ++i) out[i] = gr[i] * inv + (xr[i] - m) * coef + cst;
  }
}

// One row of row_norm_backward_x (below): its sums, then its dx, while it is in cache.
template <typename T>
NBLA_INLINE void row_norm_backward_row(const T *__restrict xr, const T *__restrict gr,
                                       T m, T inv, const T *gamma, const T *dmean,
                                       const T *dvar, T *__restrict out, idx_t features) {
  T coef, cst;
  row_norm_grad_coefs(xr, gr, m, inv, gamma, dmean, dvar, features, &coef, &cst);
  row_norm_grad_write(xr, gr, m, inv, gamma, coef, cst, out, features);
}

// Columns [j0, j0 + count) of every row: their dx from the rows' coef and cst (when dx is
// given), and d beta = sum over rows of dy, d gamma = sum over rows of dy (x - mean) inv_std
// (either may be null), each sum over the rows in order, in double.
template <typename T>
NBLA_INLINE void row_norm_columns(const T *x, const T *dy, const T *mean, const T *inv_std,
                                  const T *gamma, const T *coef, const T *cst, T *dx,
                                  T *dbeta, T *dgamma, idx_t rows, idx_t features, idx_t j0,
                                  idx_t count) {
  constexpr idx_t kBlock = detail::kColumnBlock;
  double sb[kBlock], sg[kBlock];
  for (idx_t j = 0; j < count; ++j) sb[j] = sg[j] = 0.0;
  for (idx_t r = 0; r < rows; ++r) {
    const idx_t at = r * features + j0;
    const T *__restrict xr = x + at;
    const T *__restrict gr = dy + at;
    const T m = mean[r];
    if (dx)
      row_norm_grad_write(xr, gr, m, inv_std[r], gamma ? gamma + j0 : nullptr, coef[r],
                          cst[r], dx + at, count);
    const double inv = double(inv_std[r]);
    for (idx_t j = 0; j < count; ++j) {
      sb[j] += double(gr[j]);
      sg[j] += double(gr[j]) * (double(xr[j] - m) * inv);
    }
  }
  for (idx_t j = 0; j < count; ++j) {
    if (dbeta) dbeta[j0 + j] = T(sb[j]);
    if (dgamma) dgamma[j0 + j] = T(sg[j]);
  }
}

// float32 rows in vector clones (as activation.h), float64 plain.
NBLA_VECTOR_CLONES static void row_norm_forward_row_f32(const float *xr, const float *gamma,
                                                        const float *beta, float *yr,
                                                        float *mean, float *var,
                                                        float *inv_std, idx_t features,
                                                        float eps) {
  row_norm_forward_row(xr, gamma, beta, yr, mean, var, inv_std, features, eps);
}
NBLA_VECTOR_CLONES static void row_norm_backward_row_f32(const float *xr, const float *gr,
                                                         float m, float inv,
                                                         const float *gamma,
                                                         const float *dmean,
                                                         const float *dvar, float *out,
                                                         idx_t features) {
  row_norm_backward_row(xr, gr, m, inv, gamma, dmean, dvar, out, features);
}
NBLA_VECTOR_CLONES static void row_norm_grad_coefs_f32(const float *xr, const float *gr,
                                                       float m, float inv, const float *gamma,
                                                       const float *dmean, const float *dvar,
                                                       idx_t features, float *coef,
                                                       float *cst) {
  row_norm_grad_coefs(xr, gr, m, inv, gamma, dmean, dvar, features, coef, cst);
}
NBLA_VECTOR_CLONES static void row_norm_columns_f32(const float *x, const float *dy,
                                                    const float *mean, const float *inv_std,
                                                    const float *gamma, const float *coef,
                                                    const float *cst, float *dx, float *dbeta,
                                                    float *dgamma, idx_t rows, idx_t features,
                                                    idx_t j0, idx_t count) {
  row_norm_columns(x, dy, mean, inv_std, gamma, coef, cst, dx, dbeta, dgamma, rows, features,
                   j0, count);
}

// y = (x - mean) inv_std gamma + beta per row (gamma, beta may be null), with the row's
// mean, biased variance and inv_std = 1 / sqrt(var + eps).
template <typename T>
void row_norm_forward(const T *x, const T *gamma, const T *beta, T *y, T *mean, T *var,
                      T *inv_std, idx_t rows, idx_t features, T eps) {
  parallel_for(rows, rows_parallel(rows, features), [&](idx_t r) {
    const idx_t at = r * features;
    if constexpr (std::is_same_v<T, float>)
      row_norm_forward_row_f32(x + at, gamma, beta, y + at, mean + r, var + r, inv_std + r,
                               features, eps);
    else
      row_norm_forward_row(x + at, gamma, beta, y + at, mean + r, var + r, inv_std + r,
                           features, eps);
  });
}

// dx of row_norm_forward: with g = dy gamma, n = features, xc = x - mean,
// dx = g inv + xc (-inv^3 sum(g xc) / n + 2 dvar / n) + (-inv sum(g) / n + dmean / n);
// dmean, dvar (per row) are the gradients of the statistics outputs, or null.
template <typename T>
void row_norm_backward_x(const T *x, const T *dy, const T *mean, const T *inv_std,
                         const T *gamma, const T *dmean, const T *dvar, T *dx, idx_t rows,
                         idx_t features) {
  parallel_for(rows, rows_parallel(rows, features), [&](idx_t r) {
    const idx_t at = r * features;
    const T *dm = dmean ? dmean + r : nullptr, *dv = dvar ? dvar + r : nullptr;
    if constexpr (std::is_same_v<T, float>)
      row_norm_backward_row_f32(x + at, dy + at, mean[r], inv_std[r], gamma, dm, dv, dx + at,
                                features);
    else
      row_norm_backward_row(x + at, dy + at, mean[r], inv_std[r], gamma, dm, dv, dx + at,
                            features);
  });
}

// dx of row_norm_forward (when dx is given) and its parameter gradients d beta, d gamma
// (row_norm_columns; either may be null). Without parameter gradients, rows are split
// across the pool (row_norm_backward_x). With them, the rows' coef and cst come first
// (rows split across the pool), then column blocks are: each reads its columns of x and dy
// once for dx and both sums, where separate passes read all of x and dy twice (64 rows of
// 8192 floats with gamma, 1 thread: 0.54 ms as two passes, 0.42 ms now).
template <typename T>
void row_norm_backward(const T *x, const T *dy, const T *mean, const T *inv_std,
                       const T *gamma, const T *dmean, const T *dvar, T *dx, T *dbeta,
                       T *dgamma, idx_t rows, idx_t features) {
  if (!dbeta && !dgamma) {
    if (dx) row_norm_backward_x(x, dy, mean, inv_std, gamma, dmean, dvar, dx, rows, features);
    return;
  }
  std::vector<T> coef(dx ? rows : 0), cst(dx ? rows : 0);
  if (dx)
    parallel_for(rows, rows_parallel(rows, features), [&](idx_t r) {
      const idx_t at = r * features;
      const T *dm = dmean ? dmean + r : nullptr, *dv = dvar ? dvar + r : nullptr;
      if constexpr (std::is_same_v<T, float>)
        row_norm_grad_coefs_f32(x + at, dy + at, mean[r], inv_std[r], gamma, dm, dv,
                                features, &coef[r], &cst[r]);
      else
        row_norm_grad_coefs(x + at, dy + at, mean[r], inv_std[r], gamma, dm, dv, features,
                            &coef[r], &cst[r]);
    });
  constexpr idx_t kBlock = detail::kColumnBlock;
  const idx_t blocks = (features + kBlock - 1) / kBlock;
  parallel_for(blocks, blocks > 1 && rows * features > kParallelWork, [&](idx_t blk) {
    const idx_t j0 = blk * kBlock, count = std::min(kBlock, features - j0);
    if constexpr (std::is_same_v<T, float>)
      row_norm_columns_f32(x, dy, mean, inv_std, gamma, coef.data(), cst.data(), dx, dbeta,
                           dgamma, rows, features, j0, count);
    else
      row_norm_columns(x, dy, mean, inv_std, gamma, coef.data(), cst.data(), dx, dbeta,
                       dgamma, rows, features, j0, count);
  });
}

}  // namespace nbla_native
