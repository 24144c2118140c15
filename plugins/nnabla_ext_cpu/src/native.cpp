// Native hot kernels of the CPU backend (pybind11): im2col/col2im for
// convolutions, the window loops of max/average/sum pooling, softmax and softmax
// cross-entropy, the per-channel passes of the normalizations; and the switches of
// the caching allocator for numpy arrays (cached_allocator.h); the scalar kernels' small
// float32 loops (scalar_ops.h).
//
// Every kernel takes C-contiguous float32 or float64 arrays, allocates its output
// (im2col/col2im write into `out` when given), and runs without the GIL
// (on the thread pool of thread_pool.h). Up to three spatial axes are handled;
// callers promote 1-D/2-D geometry to 3-D with leading size-1 axes (see
// geometry.h), so one code path serves all ranks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "activation.h"
#include "bindings_rnn_norm.h"
#include "blas_threads.h"
#include "cached_allocator.h"
#include "depthwise.h"
#include "geometry.h"
#include "im2col.h"
#include "normalization.h"
#include "pooling.h"
#include "scalar_ops.h"
#include "softmax.h"
#include "solvers.h"

namespace py = pybind11;
using nbla_native::Geometry;
using nbla_native::idx_t;

namespace {

template <typename T>
using In = py::array_t<T, py::array::c_style | py::array::forcecast>;

Geometry make_geometry(const std::vector<idx_t> &in, const std::vector<idx_t> &out,
                       const std::vector<idx_t> &kernel, const std::vector<idx_t> &pad,
                       const std::vector<idx_t> &stride, const std::vector<idx_t> &dilation) {
  return nbla_native::make_geometry(in, out, kernel, pad, stride, dilation);
}

void check_size(idx_t given, idx_t expected, const char *what) {
  if (given != expected)
    throw py::value_error(std::string("nnabla_ext.cpu._native: ") + what + " has " +
                          std::to_string(given) + " elements; expected " +
                          std::to_string(expected));
}

// The result array: a new one, or `out` when given (a C-contiguous, writable array of T
// with `size` elements; anything else is refused rather than silently copied).
template <typename T>
py::array_t<T> result(const py::object &out, idx_t size, const char *fn) {
  if (out.is_none()) return py::array_t<T>(size);
  if (!py::isinstance<py::array_t<T, py::array::c_style>>(out))
    throw py::type_error(std::string("nnabla_ext.cpu._native.") + fn +
                         ": out must be a C-contiguous array of the input's dtype");
  auto array = py::reinterpret_borrow<py::array_t<T>>(out);
  if (!array.writeable())
    throw py::value_error(std::string("nnabla_ext.cpu._native.") + fn + ": out is read-only");
  check_size(array.size(), size, "out");
  return array;
}

template <typename T>
py::array_t<T> im2col(In<T> x, idx_t batch, idx_t channels, idx_t groups,
                      std::vector<idx_t> in, std::vector<idx_t> out,
                      std::vector<idx_t> kernel, std::vector<idx_t> pad,
                      std::vector<idx_t> stride, std::vector<idx_t> dilation,
                      bool channel_last, const py::object &dest) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, dilation);
  check_size(x.size(), batch * channels * g.in_size(), "x");
  if (groups <= 0 || channels % groups)
    throw py::value_error("nnabla_ext.cpu._native.im2col: groups must divide channels");
  auto col = result<T>(dest, channels * g.kernel_size() * batch * g.out_size(), "im2col");
  const T *px = x.data();
  T *pc = col.mutable_data();
  {
    py::gil_scoped_release release;
    if (channel_last)
      nbla_native::im2col_cl(px, pc, batch, channels, groups, g);
    else
      nbla_native::im2col_cf(px, pc, batch, channels, g);
  }
  return col;
}

template <typename T>
py::array_t<T> col2im(In<T> col, idx_t batch, idx_t channels, idx_t groups,
                      std::vector<idx_t> in, std::vector<idx_t> out,
                      std::vector<idx_t> kernel, std::vector<idx_t> pad,
                      std::vector<idx_t> stride, std::vector<idx_t> dilation,
                      bool channel_last, const py::object &dest) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, dilation);
  check_size(col.size(), channels * g.kernel_size() * batch * g.out_size(), "col");
  if (groups <= 0 || channels % groups)
    throw py::value_error("nnabla_ext.cpu._native.col2im: groups must divide channels");
  auto x = result<T>(dest, batch * channels * g.in_size(), "col2im");
  const T *pc = col.data();
  T *px = x.mutable_data();
  {
    py::gil_scoped_release release;
    if (channel_last)
      nbla_native::col2im_cl(pc, px, batch, channels, groups, g);
    else
      nbla_native::col2im_cf(pc, px, batch, channels, g);
  }
  return x;
}

template <typename T>
std::tuple<py::array_t<T>, py::array_t<idx_t>>
max_pool_forward(In<T> x, idx_t outer, idx_t inner, std::vector<idx_t> in,
                 std::vector<idx_t> out, std::vector<idx_t> kernel,
                 std::vector<idx_t> pad, std::vector<idx_t> stride) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, {});
  check_size(x.size(), outer * inner * g.in_size(), "x");
  const idx_t n = outer * inner * g.out_size();
  py::array_t<T> y(n);
  py::array_t<idx_t> index(n);
  const T *px = x.data();
  T *py_ = y.mutable_data();
  idx_t *pi = index.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::max_pool_forward(px, py_, pi, outer, inner, g);
  }
  return std::make_tuple(y, index);
}

template <typename T>
py::array_t<T> max_pool_backward(In<T> dy, In<idx_t> index, idx_t outer, idx_t x_size) {
  check_size(index.size(), dy.size(), "index");
  if (outer < 0 || (outer > 0 && (x_size % outer || dy.size() % outer)) ||
      (outer == 0 && (x_size || dy.size())))
    throw py::value_error("nnabla_ext.cpu._native.max_pool_backward: bad outer size");
  py::array_t<T> dx(x_size);
  if (outer == 0) return dx;
  const T *pd = dy.data();
  const idx_t *pi = index.data();
  T *px = dx.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::max_pool_backward(pd, pi, px, outer, dy.size() / outer, x_size / outer);
  }
  return dx;
}

template <typename T>
py::array_t<T> avg_pool_forward(In<T> x, idx_t outer, idx_t inner, std::vector<idx_t> in,
                                std::vector<idx_t> out, std::vector<idx_t> kernel,
                                std::vector<idx_t> pad, std::vector<idx_t> stride,
                                bool including_pad, bool average) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, {});
  check_size(x.size(), outer * inner * g.in_size(), "x");
  py::array_t<T> y(outer * inner * g.out_size());
  const T *px = x.data();
  T *py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::avg_pool_forward(px, py_, outer, inner, g, including_pad, average);
  }
  return y;
}

template <typename T>
py::array_t<T> avg_pool_backward(In<T> dy, idx_t outer, idx_t inner, std::vector<idx_t> in,
                                 std::vector<idx_t> out, std::vector<idx_t> kernel,
                                 std::vector<idx_t> pad, std::vector<idx_t> stride,
                                 bool including_pad, bool average) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, {});
  check_size(dy.size(), outer * inner * g.out_size(), "dy");
  py::array_t<T> dx(outer * inner * g.in_size());
  const T *pd = dy.data();
  T *px = dx.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::avg_pool_backward(pd, px, outer, inner, g, including_pad, average);
  }
  return dx;
}

// Positions of the k best entries of each row of x (rows, n), best first; ties keep the
// lower position first. "Best" is the largest (or smallest) value, or |value| when by_abs.
// numpy's argpartition took 2.8 ms on 256 x 1024 with k = 16; a partial sort of the
// positions is several times faster.
template <typename T>
py::array_t<idx_t> top_k(In<T> x, idx_t rows, idx_t n, idx_t k, bool by_abs, bool largest) {
  check_size(x.size(), rows * n, "x");
  if (k < 1 || k > n) throw py::value_error("nnabla_ext.cpu._native.top_k: k out of range");
  py::array_t<idx_t> out({rows, k});
  const T *px = x.data();
  idx_t *po = out.mutable_data();
  {
    py::gil_scoped_release release;
    std::vector<idx_t> pos(n);
    for (idx_t r = 0; r < rows; ++r) {
      const T *row = px + r * n;
      auto key = [&](idx_t i) { return by_abs ? std::abs(row[i]) : row[i]; };
      for (idx_t i = 0; i < n; ++i) pos[i] = i;
      std::partial_sort(pos.begin(), pos.begin() + k, pos.end(), [&](idx_t a, idx_t b) {
        const T ka = key(a), kb = key(b);
        if (ka != kb) return largest ? ka > kb : ka < kb;
        return a < b;
      });
      std::copy(pos.begin(), pos.begin() + k, po + r * k);
    }
  }
  return out;
}

using Labels = py::array_t<nbla_native::label_t, py::array::c_style | py::array::forcecast>;

// The first out-of-range label (>= classes) of t, or None: the caller raises the error.
py::object bad_label(const Labels &t, idx_t classes) {
  const auto bad = nbla_native::first_bad_label(t.data(), t.size(), classes);
  if (bad == nbla_native::kNoBadLabel) return py::none();
  return py::int_(bad);
}

template <typename T>
py::object sce_forward(In<T> x, Labels t, idx_t outer, idx_t classes, idx_t inner) {
  check_size(x.size(), outer * classes * inner, "x");
  check_size(t.size(), outer * inner, "t");
  py::object bad = bad_label(t, classes);
  if (!bad.is_none()) return py::make_tuple(py::none(), bad);
  py::array_t<T> y(outer * inner);
  const T *px = x.data();
  const nbla_native::label_t *pt = t.data();
  T *py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::softmax_cross_entropy_forward(px, pt, py_, outer, classes, inner);
  }
  return py::make_tuple(y, py::none());
}

template <typename T>
py::object sce_backward(In<T> x, Labels t, In<T> dy, idx_t outer, idx_t classes,
                        idx_t inner) {
  check_size(x.size(), outer * classes * inner, "x");
  check_size(t.size(), outer * inner, "t");
  check_size(dy.size(), outer * inner, "dy");
  py::object bad = bad_label(t, classes);
  if (!bad.is_none()) return py::make_tuple(py::none(), bad);
  py::array_t<T> dx(outer * classes * inner);
  const T *px = x.data();
  const T *pdy = dy.data();
  const nbla_native::label_t *pt = t.data();
  T *pdx = dx.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::softmax_cross_entropy_backward(px, pt, pdy, pdx, outer, classes, inner);
  }
  return py::make_tuple(dx, py::none());
}

template <typename T>
py::tuple channel_moments(In<T> x, idx_t outer, idx_t channels, idx_t inner) {
  check_size(x.size(), outer * channels * inner, "x");
  py::array_t<T> mean(channels), var(channels);
  const T *px = x.data();
  T *pm = mean.mutable_data(), *pv = var.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::channel_moments(px, pm, pv, outer, channels, inner);
  }
  return py::make_tuple(mean, var);
}

template <typename T>
py::tuple channel_grad_sums(In<T> dy, In<T> x, In<T> mean, idx_t outer, idx_t channels,
                            idx_t inner) {
  check_size(x.size(), outer * channels * inner, "x");
  check_size(dy.size(), x.size(), "dy");
  check_size(mean.size(), channels, "mean");
  py::array_t<T> sum_dy(channels), sum_dy_xc(channels);
  const T *pd = dy.data(), *px = x.data(), *pm = mean.data();
  T *ps = sum_dy.mutable_data(), *psx = sum_dy_xc.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::channel_grad_sums(pd, px, pm, ps, psx, outer, channels, inner);
  }
  return py::make_tuple(sum_dy, sum_dy_xc);
}

template <typename T>
py::array_t<T> channel_affine(In<T> x, In<T> mean, In<T> a, In<T> b, idx_t outer,
                              idx_t channels, idx_t inner, const py::object &dy,
                              const py::object &p) {
  check_size(x.size(), outer * channels * inner, "x");
  check_size(mean.size(), channels, "mean");
  check_size(a.size(), channels, "a");
  check_size(b.size(), channels, "b");
  if (dy.is_none() != p.is_none())
    throw py::value_error("nnabla_ext.cpu._native.channel_affine: give both dy and p, or neither");
  In<T> dya, pa;
  if (!dy.is_none()) {
    dya = In<T>::ensure(dy);
    pa = In<T>::ensure(p);
    if (!dya || !pa) throw py::error_already_set();
    check_size(dya.size(), x.size(), "dy");
    check_size(pa.size(), channels, "p");
  }
  py::array_t<T> y(x.size());
  const T *px = x.data(), *pm = mean.data(), *pa_ = a.data(), *pb = b.data();
  const T *pdy = dy.is_none() ? nullptr : dya.data();
  const T *pp = dy.is_none() ? nullptr : pa.data();
  T *py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::channel_affine(px, pm, pa_, pb, pdy, pp, py_, outer, channels, inner);
  }
  return y;
}

template <typename T>
py::array_t<T> softmax_forward(In<T> x, idx_t rows, idx_t n) {
  check_size(x.size(), rows * n, "x");
  py::array_t<T> y(rows * n);
  const T *px = x.data();
  T *py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::softmax_rows_forward(px, py_, rows, n);
  }
  return y;
}

template <typename T>
py::array_t<T> softmax_backward(In<T> y, In<T> dy, idx_t rows, idx_t n) {
  check_size(y.size(), rows * n, "y");
  check_size(dy.size(), rows * n, "dy");
  py::array_t<T> dx(rows * n);
  const T *py_ = y.data(), *pd = dy.data();
  T *px = dx.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::softmax_rows_backward(py_, pd, px, rows, n);
  }
  return dx;
}

// y = f(x) or dx = f(a, dy) element-wise, split into chunks over the native threads.
template <typename T, void (*F)(const T *, T *, idx_t)>
py::array_t<T> elementwise1(In<T> x) {
  py::array_t<T> y(x.size());
  const T *px = x.data();
  T *py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::for_chunks(x.size(), [&](idx_t at, idx_t n) { F(px + at, py_ + at, n); });
  }
  return y;
}

template <typename T, void (*F)(const T *, const T *, T *, idx_t)>
py::array_t<T> elementwise2(In<T> a, In<T> dy) {
  check_size(dy.size(), a.size(), "dy");
  py::array_t<T> dx(a.size());
  const T *pa = a.data(), *pd = dy.data();
  T *px = dx.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::for_chunks(a.size(),
                            [&](idx_t at, idx_t n) { F(pa + at, pd + at, px + at, n); });
  }
  return dx;
}

// Depthwise convolution (channel-first): forward, data gradient, weight gradient. `which`
// selects the pass; a and b are (x, w), (dy, w) or (dy, x).
template <typename T>
py::array_t<T> depthwise(int which, In<T> a, In<T> b, idx_t batch, idx_t channels,
                         idx_t multiplier, std::vector<idx_t> in, std::vector<idx_t> out,
                         std::vector<idx_t> kernel, std::vector<idx_t> pad,
                         std::vector<idx_t> stride, std::vector<idx_t> dilation) {
  const Geometry g = make_geometry(in, out, kernel, pad, stride, dilation);
  if (batch < 0 || channels < 0 || multiplier <= 0)
    throw py::value_error("nnabla_ext.cpu._native.depthwise: bad batch, channels or multiplier");
  const idx_t xs = batch * channels * g.in_size(), ys = batch * channels * multiplier * g.out_size(),
              ws = channels * multiplier * g.kernel_size();
  const idx_t sizes[3][3] = {{xs, ws, ys}, {ys, ws, xs}, {ys, xs, ws}};
  if (which < 0 || which > 2)
    throw py::value_error("nnabla_ext.cpu._native.depthwise: which must be 0, 1 or 2");
  check_size(a.size(), sizes[which][0], which ? "dy" : "x");
  check_size(b.size(), sizes[which][1], which == 2 ? "x" : "w");
  py::array_t<T> result(sizes[which][2]);
  const T *pa = a.data(), *pb = b.data();
  T *pr = result.mutable_data();
  {
    py::gil_scoped_release release;
    if (which == 0)
      nbla_native::depthwise_forward(pa, pb, pr, batch, channels, multiplier, g);
    else if (which == 1)
      nbla_native::depthwise_backward_data(pa, pb, pr, batch, channels, multiplier, g);
    else
      nbla_native::depthwise_backward_weight(pa, pb, pr, batch, channels, multiplier, g);
  }
  return result;
}

// The fused solver update `rule` (solvers.h) on p, g and the states, in place, when every
// array is a C-contiguous float32 array of p's size, p and the states writable, and no two
// overlap: returns True. Otherwise returns False having touched nothing (the caller runs
// its numpy rule).
bool solver_update(const std::string &rule, const py::object &p, const py::object &g,
                   const py::tuple &states, const std::vector<float> &scalars) {
  namespace solver = nbla_native::solver;
  const int r = solver::find_rule(rule);
  if (r < 0)
    throw py::value_error("nnabla_ext.cpu._native.solver_update: no fused rule '" + rule + "'");
  const solver::RuleInfo &info = solver::kRules[r];
  if (static_cast<int>(states.size()) != info.states ||
      static_cast<int>(scalars.size()) != info.scalars)
    throw py::value_error("nnabla_ext.cpu._native.solver_update: " + rule + " takes " +
                          std::to_string(info.states) + " states and " +
                          std::to_string(info.scalars) + " scalars; given " +
                          std::to_string(states.size()) + " and " +
                          std::to_string(scalars.size()));
  using F32 = py::array_t<float, py::array::c_style>;
  std::vector<py::handle> arrays{p, g};
  for (const auto &s : states) arrays.push_back(s);
  if (!py::isinstance<F32>(p)) return false;
  const idx_t n = py::reinterpret_borrow<py::array>(p).size();
  std::vector<std::pair<const char *, const char *>> spans;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    if (!py::isinstance<F32>(arrays[i])) return false;
    auto a = py::reinterpret_borrow<py::array>(arrays[i]);
    if (a.size() != n || (i != 1 && !a.writeable())) return false;
    const char *begin = static_cast<const char *>(a.data());
    spans.emplace_back(begin, begin + n * sizeof(float));
  }
  for (std::size_t i = 0; i < spans.size(); ++i)
    for (std::size_t j = i + 1; j < spans.size(); ++j)
      if (n > 0 && spans[i].first < spans[j].second && spans[j].first < spans[i].second)
        return false;
  solver::Arrays a{static_cast<float *>(py::reinterpret_borrow<py::array>(p).mutable_data()),
                   static_cast<const float *>(py::reinterpret_borrow<py::array>(g).data()),
                   {nullptr, nullptr, nullptr}};
  for (int i = 0; i < info.states; ++i)
    a.s[i] = static_cast<float *>(py::reinterpret_borrow<py::array>(states[i]).mutable_data());
  solver::Scalars c{};
  std::copy(scalars.begin(), scalars.end(), c.k);
  {
    py::gil_scoped_release release;
    solver::update(r, a, c, n);
  }
  return true;
}

template <typename T>
void bind_all(py::module_ &m) {
  using namespace pybind11::literals;
  nbla_native::bind_rnn_norm<T>(m);
  m.def("depthwise", &depthwise<T>, "which"_a, "a"_a, "b"_a, "batch"_a, "channels"_a,
        "multiplier"_a, "in_shape"_a, "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a,
        "dilation"_a,
        "Depthwise convolution, direct: which=0 y from (x, w); 1 dx from (dy, w); 2 dw from "
        "(dy, x). Flat results.");
  m.def("tanh_forward", &elementwise1<T, nbla_native::tanh_forward>, "x"_a, "tanh(x), flat.");
  m.def("tanh_backward", &elementwise2<T, nbla_native::tanh_backward>, "y"_a, "dy"_a,
        "dy (1 - y^2), flat.");
  m.def("gelu_forward", &elementwise1<T, nbla_native::gelu_forward>, "x"_a,
        "x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), flat.");
  m.def("gelu_backward", &elementwise2<T, nbla_native::gelu_backward>, "x"_a, "dy"_a,
        "The gradient of gelu_forward times dy, flat.");
  m.def("channel_moments", &channel_moments<T>, "x"_a, "outer"_a, "channels"_a, "inner"_a,
        "(mean, biased variance) of each channel of x viewed as (outer, channels, inner).");
  m.def("channel_grad_sums", &channel_grad_sums<T>, "dy"_a, "x"_a, "mean"_a, "outer"_a,
        "channels"_a, "inner"_a, "(sum dy, sum dy (x - mean)) of each channel.");
  m.def("channel_affine", &channel_affine<T>, "x"_a, "mean"_a, "a"_a, "b"_a, "outer"_a,
        "channels"_a, "inner"_a, "dy"_a = py::none(), "p"_a = py::none(),
        "(x - mean) a + b (+ dy p) per channel, flat.");
  m.def("softmax_forward", &softmax_forward<T>, "x"_a, "rows"_a, "n"_a,
        "Softmax over the last axis of x (rows, n), flat.");
  m.def("softmax_backward", &softmax_backward<T>, "y"_a, "dy"_a, "rows"_a, "n"_a,
        "y (dy - sum(dy y)) over the last axis of (rows, n), flat.");
  m.def("softmax_cross_entropy_forward", &sce_forward<T>, "x"_a, "t"_a, "outer"_a,
        "classes"_a, "inner"_a,
        "(y, None), or (None, first label >= classes); negative labels give 0.");
  m.def("softmax_cross_entropy_backward", &sce_backward<T>, "x"_a, "t"_a, "dy"_a, "outer"_a,
        "classes"_a, "inner"_a,
        "(dx, None), or (None, first label >= classes); ignored labels get 0.");
  m.def("top_k", &top_k<T>, "x"_a, "rows"_a, "n"_a, "k"_a, "by_abs"_a, "largest"_a,
        "Positions of the k best entries of each row, best first (ties: lower first).");
  m.def("im2col", &im2col<T>, "x"_a, "batch"_a, "channels"_a, "groups"_a, "in_shape"_a,
        "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a, "dilation"_a, "channel_last"_a,
        "out"_a = py::none(),
        "Patches of x (N, C, *in) or (N, *in, C) as a flat column buffer (into out if given).");
  m.def("col2im", &col2im<T>, "col"_a, "batch"_a, "channels"_a, "groups"_a, "in_shape"_a,
        "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a, "dilation"_a, "channel_last"_a,
        "out"_a = py::none(),
        "Adjoint of im2col: sums patches back into a flat image buffer (out if given).");
  m.def("max_pool_forward", &max_pool_forward<T>, "x"_a, "outer"_a, "inner"_a, "in_shape"_a,
        "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a,
        "Max over windows; returns (y, flat index of each maximum in x).");
  m.def("max_pool_backward", &max_pool_backward<T>, "dy"_a, "index"_a, "outer"_a,
        "x_size"_a, "Scatters dy to the positions of the maxima.");
  m.def("avg_pool_forward", &avg_pool_forward<T>, "x"_a, "outer"_a, "inner"_a, "in_shape"_a,
        "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a, "including_pad"_a, "average"_a,
        "Sum (average=False) or mean over windows, nnabla's divisor rules.");
  m.def("avg_pool_backward", &avg_pool_backward<T>, "dy"_a, "outer"_a, "inner"_a,
        "in_shape"_a, "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a, "including_pad"_a,
        "average"_a, "Adjoint of avg_pool_forward.");
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  using namespace pybind11::literals;
  m.doc() = "Native C++ kernels of nnabla_ext.cpu";
  m.attr("ABI_VERSION") = 8;
  // float first: with an exact dtype match pybind11 picks the first overload.
  bind_all<float>(m);
  bind_all<double>(m);
  if (!nbla_native::scalar::add_functions(m.ptr())) throw py::error_already_set();
  m.def("num_threads", &nbla_native::num_threads, "Threads the native loops may use.");
  m.def("solver_update", &solver_update, "rule"_a, "p"_a, "g"_a, "states"_a, "scalars"_a,
        "Fused float32 solver update in place; False (nothing done) when the arrays do not "
        "qualify.");
  m.def("blas_callback_address", [] {
    return reinterpret_cast<std::uintptr_t>(&nbla_native::run_blas_jobs);
  }, "Address of the OpenBLAS threads callback that runs BLAS jobs on the native team.");
  m.def("blas_job_batches", [] { return nbla_native::blas_job_batches().load(); },
        "How many parallel BLAS calls the callback has run (for tests).");
  namespace cache = nbla_native::cache;
  m.attr("CACHE_MIN_BYTES") = cache::kLargeBytes;
  m.def("install_cached_allocator", [] { if (!cache::install()) throw py::error_already_set(); },
        "Allocate numpy arrays through the caching allocator (this thread's context).");
  m.def("uninstall_cached_allocator", &cache::uninstall,
        "Restore the numpy allocator found when the cache was first installed.");
  m.def("clear_memory_cache", &cache::clear, "Return the cached blocks to the OS.");
  m.def("set_memory_cache_limit", &cache::set_limit, "bytes"_a,
        "Bound the bytes the cache keeps (blocks beyond it go back to the OS).");
  m.def("memory_cache_stats", [] {
    const cache::Stats s = cache::stats();
    py::dict d;
    d["in_use"] = s.in_use;
    d["cached"] = s.cached;
    d["hits"] = s.hits;
    d["misses"] = s.misses;
    d["limit"] = s.limit;
    d["installed"] = s.installed;
    return d;
  }, "Counters of the caching allocator (large blocks only).");
  m.def("set_num_threads", &nbla_native::set_num_threads, "n"_a,
        "Threads of the native loops' pool (and of the OpenBLAS jobs it runs).");
}
