// Batched matrix products through oneDNN's matmul primitive (part of the `_onednn_conv`
// module of nnabla_ext.cpu; see onednn_common.h).
//
// c[..., m, n] = sum_k a[..., m, k] b[..., k, n] over batch axes that broadcast (an axis of
// size 1 in one operand stands for every index of the other's). Operands are read where
// they are, through their strides: a transposed operand is a view, not a copy. oneDNN
// spreads the batch over its OpenMP team, where numpy runs the products one after another
// and splits each of them across BLAS threads (64 products 128x32 by 32x128 on 2 threads:
// 0.47 ms against 0.72 ms here, best of 300 calls). Which products come here is decided by
// the kernel (nnabla_ext/cpu/kernels/onednn.py, BatchMatmul).
//
// One plan per (shapes, strides), holding the primitive; plans are kept in a small LRU
// cache, so a graph re-created every iteration (dynamic mode) does not re-create them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "onednn_common.h"

namespace py = pybind11;

namespace nbla_onednn {
namespace {

using dims_t = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

// Multiply-accumulates below which a product runs on one thread: waking OpenMP's
// sleeping workers costs more than the work (the convolutions' threshold).
constexpr int64_t kSmallWork = int64_t(1) << 21;

struct Operand {
  dims_t dims, strides;  // strides in elements; those of size-1 axes normalized
};

// oneDNN checks strides of size-1 axes like any other; numpy gives them any value (0 for
// a broadcast view, the neighbour's product otherwise). Here they become the span of the
// whole operand, which no other axis reaches.
dims_t normalized_strides(const dims_t &dims, const dims_t &strides) {
  int64_t span = 1;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > 1) span = std::max<int64_t>(span, strides[i] * dims[i]);
  dims_t out(strides);
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == 1) out[i] = span;
  return out;
}

// Shape and strides (elements) of a float32 array, as a plan takes them.
Operand operand_of(const py::array &a, const char *what) {
  if (!py::isinstance<py::array_t<float>>(a))
    throw py::type_error(std::string("nnabla_ext.cpu._onednn_conv.MatmulPlan: ") + what +
                         " must be a float32 array");
  Operand op;
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (a.strides(i) % static_cast<py::ssize_t>(sizeof(float)))
      throw py::value_error(std::string("nnabla_ext.cpu._onednn_conv.MatmulPlan: ") + what +
                            " has strides that are not whole elements");
    op.dims.push_back(a.shape(i));
    op.strides.push_back(a.strides(i) / static_cast<py::ssize_t>(sizeof(float)));
  }
  op.strides = normalized_strides(op.dims, op.strides);
  return op;
}

class MatmulPlan {
 public:
  MatmulPlan(const Operand &a, const Operand &b) : a_(a), b_(b) {
    const size_t n = a.dims.size();
    out_dims_.resize(n);
    int64_t macs = a.dims[n - 1];
    for (size_t i = 0; i + 2 < n; ++i) out_dims_[i] = std::max(a.dims[i], b.dims[i]);
    out_dims_[n - 2] = a.dims[n - 2];
    out_dims_[n - 1] = b.dims[n - 1];
    for (auto d : out_dims_) macs *= d;
    thread_cap_ = macs < kSmallWork ? 1 : 0;
    threads_ = apply_threads(thread_cap_);
    make();
  }

  // c = a @ b, a new contiguous float32 array; a and b must have the plan's shapes and
  // strides (ValueError otherwise).
  py::array_t<float> run(const py::array &a, const py::array &b) {
    check(operand_of(a, "a"), a_, "a");
    check(operand_of(b, "b"), b_, "b");
    py::array_t<float> c(std::vector<py::ssize_t>(out_dims_.begin(), out_dims_.end()));
    const float *pa = static_cast<const float *>(a.data());
    const float *pb = static_cast<const float *>(b.data());
    float *pc = c.mutable_data();
    if (c.size() == 0) return c;
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    follow_threads();
    dnnl::stream s(engine());
    prim_.execute(s, {{DNNL_ARG_SRC, dnnl::memory(pd_.src_desc(), engine(),
                                                   const_cast<float *>(pa))},
                      {DNNL_ARG_WEIGHTS, dnnl::memory(pd_.weights_desc(), engine(),
                                                       const_cast<float *>(pb))},
                      {DNNL_ARG_DST, dnnl::memory(pd_.dst_desc(), engine(), pc)}});
    s.wait();
    return c;
  }

  std::string implementation() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::string(pd_.impl_info_str());
  }

  int threads() const { return threads_; }

 private:
  void make() {
    dnnl::memory::desc a(a_.dims, dt::f32, a_.strides), b(b_.dims, dt::f32, b_.strides);
    dnnl::memory::desc c(out_dims_, dt::f32, contiguous_strides(out_dims_));
    pd_ = dnnl::matmul::primitive_desc(engine(), a, b, c);
    prim_ = dnnl::matmul(pd_);
  }

  // oneDNN fixes a primitive's thread count when it is made: after set_num_threads the
  // primitive is made again.
  void follow_threads() {
    const int now = apply_threads(thread_cap_);
    if (now == threads_) return;
    threads_ = now;
    make();
  }

  static dims_t contiguous_strides(const dims_t &dims) {
    dims_t strides(dims.size());
    int64_t step = 1;
    for (size_t i = dims.size(); i-- > 0;) {
      strides[i] = step;
      step *= std::max<int64_t>(dims[i], 1);
    }
    return strides;
  }

  static void check(const Operand &given, const Operand &want, const char *what) {
    if (given.dims == want.dims && given.strides == want.strides) return;
    throw py::value_error(std::string("nnabla_ext.cpu._onednn_conv.MatmulPlan.run: ") + what +
                          " has another shape or strides than the plan's");
  }

  Operand a_, b_;
  dims_t out_dims_;
  dnnl::matmul::primitive_desc pd_;
  dnnl::matmul prim_;
  int threads_ = 1;     // the OpenMP thread count the primitive was made for
  int thread_cap_ = 0;  // 1 for a small product (kSmallWork), else none
  std::mutex mutex_;
};

// ------------------------------------------------------------------ plan cache
// The cache key of a product: rank, then both operands' shapes and strides.
std::vector<int64_t> matmul_key(const Operand &a, const Operand &b) {
  std::vector<int64_t> key{static_cast<int64_t>(a.dims.size())};
  for (const dims_t *d : {&a.dims, &a.strides, &b.dims, &b.strides})
    key.insert(key.end(), d->begin(), d->end());
  return key;
}

PlanCache<MatmulPlan> &matmul_cache() {
  static PlanCache<MatmulPlan> *c = new PlanCache<MatmulPlan>();  // never destroyed: plans may outlive exit order
  return *c;
}

// The (cached) plan of a @ b for arrays of these shapes and strides. The operands have one
// rank (2 to 12), matching inner sizes and batch axes that are equal or 1 in one of them.
std::shared_ptr<MatmulPlan> matmul_plan(const py::array &a, const py::array &b) {
  const Operand oa = operand_of(a, "a"), ob = operand_of(b, "b");
  const size_t n = oa.dims.size();
  const char *fn = "nnabla_ext.cpu._onednn_conv.matmul_plan: ";
  if (n < 2 || n > 12 || ob.dims.size() != n)
    throw py::value_error(std::string(fn) + "a and b must have one rank, 2 to 12; given " +
                          std::to_string(n) + " and " + std::to_string(ob.dims.size()));
  if (oa.dims[n - 1] != ob.dims[n - 2])
    throw py::value_error(std::string(fn) + "a.shape[-1] (" + std::to_string(oa.dims[n - 1]) +
                          ") must equal b.shape[-2] (" + std::to_string(ob.dims[n - 2]) + ")");
  for (size_t i = 0; i + 2 < n; ++i)
    if (oa.dims[i] != ob.dims[i] && oa.dims[i] != 1 && ob.dims[i] != 1)
      throw py::value_error(std::string(fn) + "batch axis " + std::to_string(i) +
                            " does not broadcast: " + std::to_string(oa.dims[i]) + " and " +
                            std::to_string(ob.dims[i]));
  for (size_t i = 0; i < n; ++i)
    if (oa.dims[i] == 0 || ob.dims[i] == 0)
      throw py::value_error(std::string(fn) + "empty operands are not taken");
  try {
    return matmul_cache().get(matmul_key(oa, ob),
                              [&] { return std::make_shared<MatmulPlan>(oa, ob); });
  } catch (const dnnl::error &e) {
    throw py::value_error(std::string(fn) + "oneDNN refused: " + e.what());
  }
}

}  // namespace

void define_matmul(py::module_ &m) {
  using namespace pybind11::literals;
  py::class_<MatmulPlan, std::shared_ptr<MatmulPlan>>(m, "MatmulPlan")
      .def("run", &MatmulPlan::run, "a"_a, "b"_a,
           "c = a @ b (batch axes broadcast), a new contiguous float32 array.")
      .def("implementation", &MatmulPlan::implementation,
           "oneDNN's implementation name of the primitive.")
      .def_property_readonly("threads", &MatmulPlan::threads,
                             "OpenMP threads the primitive runs on.");
  m.def("matmul_plan", &matmul_plan, "a"_a, "b"_a,
        "The (cached) plan of a @ b for float32 arrays of these shapes and strides; "
        "ValueError when the shapes do not fit or oneDNN cannot take them.");
  m.def("set_matmul_cache_capacity", [](size_t n) { matmul_cache().set_capacity(n); }, "n"_a,
        "Matmul plans the LRU cache keeps.");
  m.def("matmul_cache_stats", [] { return matmul_cache().stats(); },
        "size, capacity, hits, misses.");
  m.def("clear_matmul_cache", [] { matmul_cache().clear(); });
}

}  // namespace nbla_onednn
