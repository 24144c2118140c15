// Softmax cross-entropy over one axis of an (outer, classes, inner) block, in T.
//
// As nnabla computes it: per position, the maximum over the classes is subtracted, the
// exponentials are summed in T, and y = -(x[label] - max - log(sum)). A negative label
// means "ignored": y = 0 and no gradient. Labels >= classes are reported to the caller
// (the first one found), which raises; nothing here reads out of bounds.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "activation.h"
#include "geometry.h"
#include "row_sums.h"

namespace nbla_native {

using label_t = std::int64_t;
constexpr label_t kNoBadLabel = std::numeric_limits<label_t>::min();

// The first label >= classes in t[0 .. n), or kNoBadLabel.
inline label_t first_bad_label(const label_t *t, idx_t n, idx_t classes) {
  for (idx_t i = 0; i < n; ++i)
    if (t[i] >= classes) return t[i];
  return kNoBadLabel;
}

template <typename T>
void softmax_cross_entropy_forward(const T *x, const label_t *t, T *y, idx_t outer,
                                   idx_t classes, idx_t inner) {
  for (idx_t o = 0; o < outer; ++o) {
    for (idx_t i = 0; i < inner; ++i) {
      const T *row = x + o * classes * inner + i;
      const idx_t at = o * inner + i;
      const label_t label = t[at];
      if (label < 0) {
        y[at] = T(0);
        continue;
      }
      T max_x = row[0];
      for (idx_t c = 1; c < classes; ++c) max_x = std::max(max_x, row[c * inner]);
      T sum = T(0);
      for (idx_t c = 0; c < classes; ++c) sum += std::exp(row[c * inner] - max_x);
      y[at] = -(row[label * inner] - max_x - std::log(sum));
    }
  }
}

// dx = dy * (softmax(x) - onehot(label)); zero where the label is ignored.
template <typename T>
void softmax_cross_entropy_backward(const T *x, const label_t *t, const T *dy, T *dx,
                                    idx_t outer, idx_t classes, idx_t inner) {
  for (idx_t o = 0; o < outer; ++o) {
    for (idx_t i = 0; i < inner; ++i) {
      const T *row = x + o * classes * inner + i;
      T *grow = dx + o * classes * inner + i;
      const idx_t at = o * inner + i;
      const label_t label = t[at];
      if (label < 0) {
        for (idx_t c = 0; c < classes; ++c) grow[c * inner] = T(0);
        continue;
      }
      T max_x = row[0];
      for (idx_t c = 1; c < classes; ++c) max_x = std::max(max_x, row[c * inner]);
      T sum = T(0);
      for (idx_t c = 0; c < classes; ++c) {
        const T e = std::exp(row[c * inner] - max_x);
        grow[c * inner] = e;
        sum += e;
      }
      const T scale = dy[at] / sum;
      for (idx_t c = 0; c < classes; ++c) grow[c * inner] *= scale;
      grow[label * inner] -= dy[at];
    }
  }
}

// Softmax over the last axis of (rows, n): y = exp(x - max) / sum, one row at a time (the
// row stays in cache between its passes; numpy made five passes over the whole array).
// float32 takes the vectorized exponential of activation.h (within 2 ulps of std::exp).
NBLA_INLINE float softmax_exp(float x) { return detail::exp_bounded(x); }
NBLA_INLINE double softmax_exp(double x) { return std::exp(x); }

template <typename T>
NBLA_INLINE void softmax_row(const T *__restrict in, T *__restrict out, idx_t n) {
  constexpr int kLanes = 8;  // independent partial results, so the reductions vectorize
  T lane_max[kLanes], lane_sum[kLanes];
  for (int l = 0; l < kLanes; ++l) lane_max[l] = n ? in[0] : T(0);
  idx_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane_max[l] = std::max(lane_max[l], in[i + l]);
  T max_x = lane_max[0];
  for (int l = 1; l < kLanes; ++l) max_x = std::max(max_x, lane_max[l]);
  for (; i < n; ++i) max_x = std::max(max_x, in[i]);
  for (idx_t k = 0; k < n; ++k) out[k] = softmax_exp(in[k] - max_x);
  for (int l = 0; l < kLanes; ++l) lane_sum[l] = T(0);
  for (i = 0; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lane_sum[l] += out[i + l];
  T sum = T(0);
  for (int l = 0; l < kLanes; ++l) sum += lane_sum[l];
  for (; i < n; ++i) sum += out[i];
  for (idx_t k = 0; k < n; ++k) out[k] /= sum;
}

NBLA_VECTOR_CLONES static void softmax_rows(const float *x, float *y, idx_t first, idx_t last,
                                            idx_t n) {
  for (idx_t r = first; r < last; ++r) softmax_row(x + r * n, y + r * n, n);
}

static void softmax_rows(const double *x, double *y, idx_t first, idx_t last, idx_t n) {
  for (idx_t r = first; r < last; ++r) softmax_row(x + r * n, y + r * n, n);
}

template <typename T>
void softmax_rows_forward(const T *x, T *y, idx_t rows, idx_t n) {
  parallel_range(rows, rows_parallel(rows, n),
                 [&](idx_t first, idx_t last) { softmax_rows(x, y, first, last, n); });
}

// dx = y (dy - sum(dy y)) over one row of n; the sum is detail::row_sum's in T, as nnabla
// sums (a single running sum is a chain of dependent additions, which made this pass 2.3x
// slower than PyTorch's; double partial sums, 1.8x).
template <typename T>
NBLA_INLINE void softmax_grad_row(const T *__restrict y, const T *__restrict dy,
                                  T *__restrict dx, idx_t n) {
  const T dot = detail::row_sum<T>(n, [&](idx_t i) { return dy[i] * y[i]; });
  for (idx_t k = 0; k < n; ++k) dx[k] = y[k] * (dy[k] - dot);
}

NBLA_VECTOR_CLONES static void softmax_grad_rows(const float *y, const float *dy, float *dx,
                                                 idx_t first, idx_t last, idx_t n) {
  for (idx_t r = first; r < last; ++r) softmax_grad_row(y + r * n, dy + r * n, dx + r * n, n);
}

static void softmax_grad_rows(const double *y, const double *dy, double *dx, idx_t first,
                              idx_t last, idx_t n) {
  for (idx_t r = first; r < last; ++r) softmax_grad_row(y + r * n, dy + r * n, dx + r * n, n);
}

// dx = y (dy - sum(dy y)) over the last axis of (rows, n).
template <typename T>
void softmax_rows_backward(const T *y, const T *dy, T *dx, idx_t rows, idx_t n) {
  parallel_range(rows, rows_parallel(rows, n),
                 [&](idx_t first, idx_t last) { softmax_grad_rows(y, dy, dx, first, last, n); });
}

}  // namespace nbla_native
