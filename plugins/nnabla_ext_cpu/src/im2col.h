// im2col / col2im for N-D (up to 3-D) convolutions, channel-first and -last.
//
// Channel-first columns are laid out (C, K0, K1, K2, N, O0, O1, O2): row r =
// (channel, kernel offset) is one GEMM row, so a grouped convolution is G
// GEMMs over contiguous row blocks. Channel-last columns are laid out
// (N, O0, O1, O2, G, K0, K1, K2, C/G): one row per output pixel, contiguous
// channel runs copied per kernel offset. Out-of-image taps read as zero.
#pragma once

#include <algorithm>

#include "geometry.h"

namespace nbla_native {

namespace detail {

inline void split_kernel(const Geometry &g, idx_t kk, idx_t k[3]) {
  k[2] = kk % g.kernel[2];
  k[1] = (kk / g.kernel[2]) % g.kernel[1];
  k[0] = kk / (g.kernel[1] * g.kernel[2]);
}

inline bool tap(const Geometry &g, int a, idx_t o, idx_t k, idx_t &i) {
  i = o * g.stride[a] - g.pad[a] + k * g.dilation[a];
  return i >= 0 && i < g.in[a];
}

}  // namespace detail

template <typename T>
void im2col_cf(const T *x, T *col, idx_t batch, idx_t channels, const Geometry &g) {
  const idx_t K = g.kernel_size(), O = g.out_size(), S = g.in_size();
  const idx_t O1 = g.out[1], O2 = g.out[2], s2 = g.stride[2];
  const idx_t rows = channels * K;
  parallel_for(rows, rows * batch * O > kParallelWork, [&](idx_t r) {
    const idx_t c = r / K;
    idx_t k[3], lo[3], hi[3];
    detail::split_kernel(g, r % K, k);
    for (int a = 0; a < 3; ++a) g.valid_range(a, k[a], lo[a], hi[a]);
    const idx_t off2 = k[2] * g.dilation[2] - g.pad[2];
    T *dst = col + r * batch * O;
    for (idx_t n = 0; n < batch; ++n) {
      const T *src = x + (n * channels + c) * S;
      for (idx_t o0 = 0; o0 < g.out[0]; ++o0) {
        T *d0 = dst + (n * g.out[0] + o0) * O1 * O2;
        if (o0 < lo[0] || o0 >= hi[0]) {
          std::fill(d0, d0 + O1 * O2, T(0));
          continue;
        }
        const idx_t i0 = o0 * g.stride[0] - g.pad[0] + k[0] * g.dilation[0];
        for (idx_t o1 = 0; o1 < O1; ++o1) {
          T *d1 = d0 + o1 * O2;
          if (o1 < lo[1] || o1 >= hi[1]) {
            std::fill(d1, d1 + O2, T(0));
            continue;
          }
          const idx_t i1 = o1 * g.stride[1] - g.pad[1] + k[1] * g.dilation[1];
          const T *srow = src + (i0 * g.in[1] + i1) * g.in[2];
          std::fill(d1, d1 + lo[2], T(0));
          if (s2 == 1) {
            std::copy(srow + lo[2] + off2, srow + hi[2] + off2, d1 + lo[2]);
          } else {
            for (idx_t o2 = lo[2]; o2 < hi[2]; ++o2) d1[o2] = srow[o2 * s2 + off2];
          }
          std::fill(d1 + hi[2], d1 + O2, T(0));
        }
      }
    }
  });
}

template <typename T>
void col2im_cf(const T *col, T *x, idx_t batch, idx_t channels, const Geometry &g) {
  const idx_t K = g.kernel_size(), O = g.out_size(), S = g.in_size();
  const idx_t O1 = g.out[1], O2 = g.out[2], s2 = g.stride[2];
  // One channel per task: the rows of a channel all write into its planes.
  parallel_for(channels, channels * K * batch * O > kParallelWork, [&](idx_t c) {
    for (idx_t n = 0; n < batch; ++n) std::fill(x + (n * channels + c) * S,
                                                x + (n * channels + c + 1) * S, T(0));
    for (idx_t kk = 0; kk < K; ++kk) {
      idx_t k[3], lo[3], hi[3];
      detail::split_kernel(g, kk, k);
      for (int a = 0; a < 3; ++a) g.valid_range(a, k[a], lo[a], hi[a]);
      const idx_t off2 = k[2] * g.dilation[2] - g.pad[2];
      const T *src = col + (c * K + kk) * batch * O;
      for (idx_t n = 0; n < batch; ++n) {
        T *dst = x + (n * channels + c) * S;
        for (idx_t o0 = lo[0]; o0 < hi[0]; ++o0) {
          const idx_t i0 = o0 * g.stride[0] - g.pad[0] + k[0] * g.dilation[0];
          for (idx_t o1 = lo[1]; o1 < hi[1]; ++o1) {
            const idx_t i1 = o1 * g.stride[1] - g.pad[1] + k[1] * g.dilation[1];
            const T *s = src + ((n * g.out[0] + o0) * O1 + o1) * O2;
            T *drow = dst + (i0 * g.in[1] + i1) * g.in[2];
            for (idx_t o2 = lo[2]; o2 < hi[2]; ++o2) drow[o2 * s2 + off2] += s[o2];
          }
        }
      }
    }
  });
}

template <typename T>
void im2col_cl(const T *x, T *col, idx_t batch, idx_t channels, idx_t groups,
               const Geometry &g) {
  const idx_t K = g.kernel_size(), O = g.out_size(), S = g.in_size();
  const idx_t cg = channels / groups, row = channels * K;
  parallel_for(batch * O, batch * O * row > kParallelWork, [&](idx_t no) {
    const idx_t n = no / O, o = no % O;
    const idx_t oo[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
    const T *xn = x + n * S * channels;
    T *dst = col + no * row;
    for (idx_t gi = 0; gi < groups; ++gi) {
      for (idx_t kk = 0; kk < K; ++kk, dst += cg) {
        idx_t k[3], i[3];
        detail::split_kernel(g, kk, k);
        if (detail::tap(g, 0, oo[0], k[0], i[0]) && detail::tap(g, 1, oo[1], k[1], i[1]) &&
            detail::tap(g, 2, oo[2], k[2], i[2])) {
          const T *src = xn + ((i[0] * g.in[1] + i[1]) * g.in[2] + i[2]) * channels + gi * cg;
          std::copy(src, src + cg, dst);
        } else {
          std::fill(dst, dst + cg, T(0));
        }
      }
    }
  });
}

template <typename T>
void col2im_cl(const T *col, T *x, idx_t batch, idx_t channels, idx_t groups,
               const Geometry &g) {
  const idx_t K = g.kernel_size(), O = g.out_size(), S = g.in_size();
  const idx_t cg = channels / groups, row = channels * K;
  // One sample per task: all of its pixels write only into its own image.
  parallel_for(batch, batch * O * row > kParallelWork, [&](idx_t n) {
    T *xn = x + n * S * channels;
    std::fill(xn, xn + S * channels, T(0));
    for (idx_t o = 0; o < O; ++o) {
      const idx_t oo[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
      const T *src = col + (n * O + o) * row;
      for (idx_t gi = 0; gi < groups; ++gi) {
        for (idx_t kk = 0; kk < K; ++kk, src += cg) {
          idx_t k[3], i[3];
          detail::split_kernel(g, kk, k);
          if (!(detail::tap(g, 0, oo[0], k[0], i[0]) && detail::tap(g, 1, oo[1], k[1], i[1]) &&
                detail::tap(g, 2, oo[2], k[2], i[2])))
            continue;
          T *dst = xn + ((i[0] * g.in[1] + i[1]) * g.in[2] + i[2]) * channels + gi * cg;
          for (idx_t c = 0; c < cg; ++c) dst[c] += src[c];
        }
      }
    }
  });
}

}  // namespace nbla_native
