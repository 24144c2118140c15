// Softmax cross-entropy over one axis of an (outer, classes, inner) block, in T.
//
// As nnabla computes it: per position, the maximum over the classes is subtracted, the
// exponentials are summed in T, and y = -(x[label] - max - log(sum)). A negative label
// means "ignored": y = 0 and no gradient. Labels >= classes are reported to the caller
// (the first one found), which raises; nothing here reads out of bounds.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

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

}  // namespace nbla_native
