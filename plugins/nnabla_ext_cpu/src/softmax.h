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
  const idx_t block = 16;
  parallel_for((rows + block - 1) / block, rows > block && rows * n > kParallelWork,
               [&](idx_t b) { softmax_rows(x, y, b * block, std::min(rows, (b + 1) * block), n); });
}

// dx = y (dy - sum(dy y)) over the last axis of (rows, n).
template <typename T>
void softmax_rows_backward(const T *y, const T *dy, T *dx, idx_t rows, idx_t n) {
  parallel_for(rows, rows > 1 && rows * n > kParallelWork, [&](idx_t r) {
    const T *yr = y + r * n;
    const T *gr = dy + r * n;
    T *out = dx + r * n;
    T dot = T(0);
    for (idx_t i = 0; i < n; ++i) dot += gr[i] * yr[i];
    for (idx_t i = 0; i < n; ++i) out[i] = yr[i] * (gr[i] - dot);
  });
}

}  // namespace nbla_native
