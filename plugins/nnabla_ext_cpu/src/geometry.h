// Spatial geometry shared by im2col and pooling: sizes promoted to 3-D.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "thread_pool.h"

namespace nbla_native {

using idx_t = std::int64_t;
using Dims = std::array<idx_t, 3>;

// Below this much work a parallel region costs more than it saves.
constexpr idx_t kParallelWork = 1 << 14;

// Whether `rows` independent rows of `width` values are worth splitting across the pool.
inline bool rows_parallel(idx_t rows, idx_t width) {
  return rows > 1 && rows * width > kParallelWork;
}

// One convolution or pooling geometry. A 1-D or 2-D problem is stored as 3-D
// with leading axes of size 1 (kernel 1, stride 1, pad 0, dilation 1).
struct Geometry {
  Dims in, out, kernel, pad, stride, dilation;

  idx_t in_size() const { return in[0] * in[1] * in[2]; }
  idx_t out_size() const { return out[0] * out[1] * out[2]; }
  idx_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }

  // Output positions o along `axis` whose input o*stride - pad + k*dilation
  // lies inside [0, in): the half-open range [lo, hi).
  void valid_range(int axis, idx_t k, idx_t &lo, idx_t &hi) const {
    const idx_t off = k * dilation[axis] - pad[axis];
    const idx_t s = stride[axis];
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    const idx_t room = in[axis] - off;
    hi = room <= 0 ? 0 : (room + s - 1) / s;
    lo = std::min(lo, out[axis]);
    hi = std::max(lo, std::min(hi, out[axis]));
  }
};

inline Dims promote(const std::vector<idx_t> &v, idx_t fill, const char *name) {
  if (v.size() > 3)
    throw std::invalid_argument(std::string("nnabla_ext.cpu._native: ") + name +
                                " has more than 3 spatial axes");
  Dims d{fill, fill, fill};
  std::copy(v.begin(), v.end(), d.begin() + (3 - v.size()));
  return d;
}

// An empty `dilation` means 1s (poolings).
inline Geometry make_geometry(const std::vector<idx_t> &in, const std::vector<idx_t> &out,
                              const std::vector<idx_t> &kernel, const std::vector<idx_t> &pad,
                              const std::vector<idx_t> &stride,
                              const std::vector<idx_t> &dilation) {
  const size_t n = in.size();
  if (out.size() != n || kernel.size() != n || pad.size() != n || stride.size() != n ||
      (!dilation.empty() && dilation.size() != n))
    throw std::invalid_argument("nnabla_ext.cpu._native: geometry lists differ in length");
  Geometry g{promote(in, 1, "in_shape"),   promote(out, 1, "out_shape"),
             promote(kernel, 1, "kernel"), promote(pad, 0, "pad"),
             promote(stride, 1, "stride"),
             dilation.empty() ? Dims{1, 1, 1} : promote(dilation, 1, "dilation")};
  for (int a = 0; a < 3; ++a) {
    if (g.in[a] < 0 || g.out[a] < 0 || g.kernel[a] <= 0 || g.pad[a] < 0 || g.stride[a] <= 0 ||
        g.dilation[a] <= 0)
      throw std::invalid_argument("nnabla_ext.cpu._native: invalid geometry");
  }
  return g;
}

}  // namespace nbla_native
