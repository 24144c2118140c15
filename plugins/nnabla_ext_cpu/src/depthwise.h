// Depthwise convolution computed directly (no columns): output channel o = c * m + j
// (c the input channel, m the multiplier) is the correlation of plane (n, c) with the
// filter w[o] (kernel taps k0, k1, k2). Data is channel-first, up to 3 spatial axes
// (Geometry promotes fewer).
//
// Each loop works on one output row (o0, o1) at a time: for each kernel tap whose input
// row exists and each k2, the positions o2 where the tap is inside the image are the
// range Geometry::valid_range gives, so the innermost loop has no branch (and is
// contiguous at stride 1). As im2col + GEMM, a depthwise convolution was 128 GEMMs of one
// row each; this is several times faster.
#pragma once

#include <algorithm>
#include <vector>

#include "geometry.h"

namespace nbla_native {

namespace detail {

// Calls body(o0, o1, i_row, k_index, k2) for every output row and every kernel tap
// (k0, k1, k2) whose input row (i0, i1) exists; i_row is that row's offset in the plane.
template <typename Body>
inline void for_each_row_tap(const Geometry &g, Body body) {
  for (idx_t o0 = 0; o0 < g.out[0]; ++o0)
    for (idx_t o1 = 0; o1 < g.out[1]; ++o1)
      for (idx_t k0 = 0; k0 < g.kernel[0]; ++k0) {
        const idx_t i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dilation[0];
        if (i0 < 0 || i0 >= g.in[0]) continue;
        for (idx_t k1 = 0; k1 < g.kernel[1]; ++k1) {
          const idx_t i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dilation[1];
          if (i1 < 0 || i1 >= g.in[1]) continue;
          for (idx_t k2 = 0; k2 < g.kernel[2]; ++k2)
            body(o0, o1, (i0 * g.in[1] + i1) * g.in[2], (k0 * g.kernel[1] + k1) * g.kernel[2] + k2,
                 k2);
        }
      }
}

struct Columns {
  std::vector<idx_t> lo, hi;  // per k2: output columns whose tap is inside the image
  explicit Columns(const Geometry &g) : lo(g.kernel[2]), hi(g.kernel[2]) {
    for (idx_t k = 0; k < g.kernel[2]; ++k) g.valid_range(2, k, lo[k], hi[k]);
  }
};

}  // namespace detail

// y (batch, channels * m, out) from x (batch, channels, in) and w (channels * m, kernel).
template <typename T>
void depthwise_forward(const T *x, const T *w, T *y, idx_t batch, idx_t channels, idx_t m,
                       const Geometry &g) {
  const detail::Columns cols(g);
  const idx_t X = g.in_size(), Y = g.out_size(), K = g.kernel_size();
  const idx_t planes = batch * channels * m;
  const idx_t s2 = g.stride[2], d2 = g.dilation[2], p2 = g.pad[2];
  parallel_for(planes, planes > 1 && planes * Y * K > kParallelWork, [&](idx_t plane) {
    const idx_t n = plane / (channels * m), o = plane % (channels * m), c = o / m;
    const T *xp = x + (n * channels + c) * X;
    const T *wo = w + o * K;
    T *yp = y + plane * Y;
    std::fill(yp, yp + Y, T(0));
    detail::for_each_row_tap(g, [&](idx_t o0, idx_t o1, idx_t row, idx_t k, idx_t k2) {
      T *out = yp + (o0 * g.out[1] + o1) * g.out[2];
      const T *in = xp + row + k2 * d2 - p2;
      const T wk = wo[k];
      for (idx_t o2 = cols.lo[k2]; o2 < cols.hi[k2]; ++o2) out[o2] += wk * in[o2 * s2];
    });
  });
}

// dx (batch, channels, in) = sum over the m filters of channel c of w scattered by dy.
template <typename T>
void depthwise_backward_data(const T *dy, const T *w, T *dx, idx_t batch, idx_t channels,
                             idx_t m, const Geometry &g) {
  const detail::Columns cols(g);
  const idx_t X = g.in_size(), Y = g.out_size(), K = g.kernel_size();
  const idx_t planes = batch * channels;
  const idx_t s2 = g.stride[2], d2 = g.dilation[2], p2 = g.pad[2];
  parallel_for(planes, planes > 1 && planes * m * Y * K > kParallelWork, [&](idx_t plane) {
    const idx_t n = plane / channels, c = plane % channels;
    T *xp = dx + plane * X;
    std::fill(xp, xp + X, T(0));
    for (idx_t j = 0; j < m; ++j) {
      const idx_t o = c * m + j;
      const T *gp = dy + (n * channels * m + o) * Y;
      const T *wo = w + o * K;
      detail::for_each_row_tap(g, [&](idx_t o0, idx_t o1, idx_t row, idx_t k, idx_t k2) {
        const T *grad = gp + (o0 * g.out[1] + o1) * g.out[2];
        T *in = xp + row + k2 * d2 - p2;
        const T wk = wo[k];
        for (idx_t o2 = cols.lo[k2]; o2 < cols.hi[k2]; ++o2) in[o2 * s2] += wk * grad[o2];
      });
    }
  });
}

// dw (channels * m, kernel) = sum over the batch of dy correlated with x.
template <typename T>
void depthwise_backward_weight(const T *dy, const T *x, T *dw, idx_t batch, idx_t channels,
                               idx_t m, const Geometry &g) {
  const detail::Columns cols(g);
  const idx_t X = g.in_size(), Y = g.out_size(), K = g.kernel_size();
  const idx_t filters = channels * m;
  const idx_t s2 = g.stride[2], d2 = g.dilation[2], p2 = g.pad[2];
  parallel_for(filters, filters > 1 && batch * filters * Y * K > kParallelWork, [&](idx_t o) {
    const idx_t c = o / m;
    std::vector<T> acc(K, T(0));
    for (idx_t n = 0; n < batch; ++n) {
      const T *gp = dy + (n * filters + o) * Y;
      const T *xp = x + (n * channels + c) * X;
      detail::for_each_row_tap(g, [&](idx_t o0, idx_t o1, idx_t row, idx_t k, idx_t k2) {
        const T *grad = gp + (o0 * g.out[1] + o1) * g.out[2];
        const T *in = xp + row + k2 * d2 - p2;
        T sum = T(0);
        for (idx_t o2 = cols.lo[k2]; o2 < cols.hi[k2]; ++o2) sum += grad[o2] * in[o2 * s2];
        acc[k] += sum;
      });
    }
    std::copy(acc.begin(), acc.end(), dw + o * K);
  });
}

}  // namespace nbla_native
