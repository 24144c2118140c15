// Max / average / sum pooling over (outer, S0, S1, S2, inner) arrays.
//
// `inner` is 1 for channel-first data and C for channel-last data, so both
// layouts share one loop nest. A window starts at o*stride - pad, is cut at
// in + pad (nnabla's rule, which also fixes the including-pad divisor) and
// then clipped to the image; padding never takes part in a maximum.
#pragma once

#include <algorithm>

#include "geometry.h"

namespace nbla_native {

namespace detail {

struct Window {
  idx_t start[3], end[3];
  idx_t padded_count;  // window size counting padding (including_pad divisor)
  idx_t count() const {
    return (end[0] - start[0]) * (end[1] - start[1]) * (end[2] - start[2]);
  }
};

inline Window window(const Geometry &g, const idx_t o[3]) {
  Window w;
  w.padded_count = 1;
  for (int a = 0; a < 3; ++a) {
    idx_t st = o[a] * g.stride[a] - g.pad[a];
    idx_t en = std::min(st + g.kernel[a], g.in[a] + g.pad[a]);
    w.padded_count *= en - st;
    w.start[a] = std::max<idx_t>(st, 0);
    w.end[a] = std::max(w.start[a], std::min(en, g.in[a]));
  }
  return w;
}

inline void split_out(const Geometry &g, idx_t o, idx_t oo[3]) {
  oo[2] = o % g.out[2];
  oo[1] = (o / g.out[2]) % g.out[1];
  oo[0] = o / (g.out[1] * g.out[2]);
}

inline idx_t offset(const Geometry &g, idx_t i0, idx_t i1, idx_t i2, idx_t inner) {
  return ((i0 * g.in[1] + i1) * g.in[2] + i2) * inner;
}

}  // namespace detail

// index receives the flat position of each maximum in x (first one on ties),
// or -1 for a window without any element (then y is 0).
template <typename T>
void max_pool_forward(const T *x, T *y, idx_t *index, idx_t outer, idx_t inner,
                      const Geometry &g) {
  const idx_t X = g.in_size() * inner, O = g.out_size();
#pragma omp parallel for schedule(static) if (outer * O * inner * g.kernel_size() > kParallelWork)
  for (idx_t b = 0; b < outer; ++b) {
    for (idx_t o = 0; o < O; ++o) {
      idx_t oo[3];
      detail::split_out(g, o, oo);
      const detail::Window w = detail::window(g, oo);
      T *yo = y + (b * O + o) * inner;
      idx_t *io = index + (b * O + o) * inner;
      if (w.count() == 0) {
        std::fill(yo, yo + inner, T(0));
        std::fill(io, io + inner, idx_t(-1));
        continue;
      }
      bool first = true;
      for (idx_t i0 = w.start[0]; i0 < w.end[0]; ++i0)
        for (idx_t i1 = w.start[1]; i1 < w.end[1]; ++i1)
          for (idx_t i2 = w.start[2]; i2 < w.end[2]; ++i2) {
            const idx_t base = b * X + detail::offset(g, i0, i1, i2, inner);
            const T *xv = x + base;
            if (first) {
              for (idx_t c = 0; c < inner; ++c) {
                yo[c] = xv[c];
                io[c] = base + c;
              }
              first = false;
              continue;
            }
            for (idx_t c = 0; c < inner; ++c) {
              if (yo[c] < xv[c]) {
                yo[c] = xv[c];
                io[c] = base + c;
              }
            }
          }
    }
  }
}

// dx (outer blocks of x_block values) = scatter-add of dy at `index`.
template <typename T>
void max_pool_backward(const T *dy, const idx_t *index, T *dx, idx_t outer, idx_t y_block,
                       idx_t x_block) {
#pragma omp parallel for schedule(static) if (outer * (x_block + y_block) > kParallelWork)
  for (idx_t b = 0; b < outer; ++b) {
    std::fill(dx + b * x_block, dx + (b + 1) * x_block, T(0));
    for (idx_t j = b * y_block; j < (b + 1) * y_block; ++j) {
      if (index[j] >= 0) dx[index[j]] += dy[j];
    }
  }
}

inline idx_t divisor(const detail::Window &w, bool including_pad, bool average) {
  if (!average) return 1;
  return including_pad ? w.padded_count : w.count();
}

template <typename T>
void avg_pool_forward(const T *x, T *y, idx_t outer, idx_t inner, const Geometry &g,
                      bool including_pad, bool average) {
  const idx_t X = g.in_size() * inner, O = g.out_size();
#pragma omp parallel for schedule(static) if (outer * O * inner * g.kernel_size() > kParallelWork)
  for (idx_t b = 0; b < outer; ++b) {
    for (idx_t o = 0; o < O; ++o) {
      idx_t oo[3];
      detail::split_out(g, o, oo);
      const detail::Window w = detail::window(g, oo);
      T *yo = y + (b * O + o) * inner;
      std::fill(yo, yo + inner, T(0));
      for (idx_t i0 = w.start[0]; i0 < w.end[0]; ++i0)
        for (idx_t i1 = w.start[1]; i1 < w.end[1]; ++i1)
          for (idx_t i2 = w.start[2]; i2 < w.end[2]; ++i2) {
            const T *xv = x + b * X + detail::offset(g, i0, i1, i2, inner);
            for (idx_t c = 0; c < inner; ++c) yo[c] += xv[c];
          }
      if (average) {
        const T d = T(divisor(w, including_pad, average));
        for (idx_t c = 0; c < inner; ++c) yo[c] /= d;
      }
    }
  }
}

template <typename T>
void avg_pool_backward(const T *dy, T *dx, idx_t outer, idx_t inner, const Geometry &g,
                       bool including_pad, bool average) {
  const idx_t X = g.in_size() * inner, O = g.out_size();
#pragma omp parallel for schedule(static) if (outer * O * inner * g.kernel_size() > kParallelWork)
  for (idx_t b = 0; b < outer; ++b) {
    std::fill(dx + b * X, dx + (b + 1) * X, T(0));
    for (idx_t o = 0; o < O; ++o) {
      idx_t oo[3];
      detail::split_out(g, o, oo);
      const detail::Window w = detail::window(g, oo);
      const T *go = dy + (b * O + o) * inner;
      const T d = T(divisor(w, including_pad, average));
      for (idx_t i0 = w.start[0]; i0 < w.end[0]; ++i0)
        for (idx_t i1 = w.start[1]; i1 < w.end[1]; ++i1)
          for (idx_t i2 = w.start[2]; i2 < w.end[2]; ++i2) {
            T *xv = dx + b * X + detail::offset(g, i0, i1, i2, inner);
            for (idx_t c = 0; c < inner; ++c) xv[c] += go[c] / d;
          }
    }
  }
}

}  // namespace nbla_native
