// Convolutions through oneDNN (the `_onednn_conv` module of nnabla_ext.cpu).
//
// One plan per convolution geometry: the forward, backward-data and backward-weights
// primitives of oneDNN, built on first use, with the reorders between nnabla's plain
// layouts (channel-first or channel-last maps; weights (OC, IC/G, *K) or (OC, *K, IC/G))
// and the blocked layouts oneDNN picks for speed. A deconvolution is the same plan seen
// the other way round (its forward is the convolution's backward data, and so on), so
// the Python side needs only these three passes. Plans are kept in a small LRU cache
// keyed by the geometry, so a graph re-created every iteration (dynamic mode) does not
// re-create primitives either.
//
// The module names libdnnl.so.3 (the onednn-cpu-gomp wheel's, found through its RPATH
// in <prefix>/lib) when the build environment had the wheel; nnabla_ext/cpu/_onednn.py
// also loads that library with RTLD_GLOBAL first, which serves builds without it. If the
// library is missing the import fails and the kernels keep their im2col + GEMM path.
//
// Threads and the engine: onednn_common.h. The module also holds the batched matrix
// products of src/onednn_matmul.cpp.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "onednn_common.h"

namespace py = pybind11;
using dims_t = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

namespace {

using namespace nbla_onednn;
using Floats = py::array_t<float, py::array::c_style | py::array::forcecast>;

// ------------------------------------------------------------------ workspace
// Buffers for operands in oneDNN's layouts, per calling thread: slot 0 and 1 for the two
// inputs of a pass, slot 2 for its output (oneDNN keeps its own scratchpad). Each
// grows to the largest size asked of it and is kept, so a pass does not map (and
// page-fault) fresh memory for its reorders on every call.
//
// The slots are mapped with mmap, not malloc: glibc raises its mmap threshold to the size
// of every mmapped block freed, so growing (or freeing) multi-MiB blocks through malloc
// sent the feature maps that numpy allocates afterwards to the brk heap, which
// fragmented and kept growing from step to step (ResNet-18 inference b32: +16 MiB in the
// second step; freeing the buffers after every call was worse still).
class Workspace {
 public:
  float *get(int slot, size_t bytes) {
    Slot &s = slots_[slot];
    if (bytes > s.bytes) {
      if (s.data) munmap(s.data, s.bytes);
      s.data = nullptr;
      s.bytes = 0;
      const size_t rounded = (bytes + 4095) / 4096 * 4096;
      void *p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      s.data = p;
      s.bytes = rounded;
    }
    return static_cast<float *>(s.data);
  }
  // Unmaps the slots larger than `keep` bytes.
  void trim(size_t keep) {
    for (Slot &s : slots_)
      if (s.data && s.bytes > keep) {
        munmap(s.data, s.bytes);
        s.data = nullptr;
        s.bytes = 0;
      }
  }
  ~Workspace() { trim(0); }

 private:
  struct Slot {
    void *data = nullptr;
    size_t bytes = 0;
  };
  Slot slots_[3];
};

Workspace &thread_workspace() {
  static thread_local Workspace w;
  return w;
}

float *workspace(int slot, const dnnl::memory::desc &d) {
  return thread_workspace().get(slot, d.get_size());
}

// After a pass: the slots above 4 MiB are not kept. With the batch run in chunks (see
// Plan::batch_chunk) only weights reach that size (ResNet-18's 512x512x3x3 weights: a
// 9 MiB blocked copy that stayed mapped for the whole run); their pass costs far more
// than mapping the copy again.
void trim_workspace() { thread_workspace().trim(size_t(4) << 20); }

// ------------------------------------------------------------------ layouts
// Strides of a dense array whose dims (in oneDNN's logical order) are stored in the
// order `order` (outermost first).
dims_t strides_for(const dims_t &dims, const std::vector<int> &order) {
  dims_t strides(dims.size());
  int64_t step = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = step;
    step *= dims[*it];
  }
  return strides;
}

int64_t product(const dims_t &d) {
  int64_t p = 1;
  for (auto v : d) p *= v;
  return p;
}

struct Geometry {
  int64_t batch, in_channels, out_channels, groups;
  dims_t in, out, kernel, pad, stride, dilation;
  bool channel_last;
  bool weight_channel_last;  // weights (OC, *K, IC/G) instead of (OC, IC/G, *K)
};

// A oneDNN memory over a user buffer, or over a buffer of the primitive's layout that
// the user's data is reordered into (or out of).
struct Operand {
  dnnl::memory::desc user, prim;
  dnnl::reorder to_prim, to_user;  // empty when user == prim
  dnnl::reorder add_to_user;        // user += prim (in the user's layout); see `summed`
  bool same = true;

  Operand() = default;
  // `summed`: an output whose later chunks are added to the first (weight gradients).
  Operand(const dnnl::memory::desc &u, const dnnl::memory::desc &p, bool input, bool output,
          bool summed = false)
      : user(u), prim(p), same(u == p) {
    auto &e = engine();
    if (summed) {
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      dnnl::primitive_attr attr;
      attr.set_post_ops(sum);
      add_to_user = dnnl::reorder(dnnl::reorder::primitive_desc(e, prim, e, user, attr));
    }
    if (same) return;
    if (input) to_prim = dnnl::reorder(dnnl::reorder::primitive_desc(e, user, e, prim));
    if (output) to_user = dnnl::reorder(dnnl::reorder::primitive_desc(e, prim, e, user));
  }
};

size_t release_library_text();

class Plan {
 public:
  explicit Plan(const Geometry &g) : g_(g) {
    const int n = static_cast<int>(g.in.size());
    // maps: dims (N, C, *S); stored (N, C, *S) or (N, *S, C)
    std::vector<int> map_order(n + 2);
    map_order[0] = 0;
    if (g.channel_last) {
      for (int i = 0; i < n; ++i) map_order[1 + i] = 2 + i;
      map_order[n + 1] = 1;
    } else {
      for (int i = 0; i < n + 1; ++i) map_order[1 + i] = 1 + i;
    }
    chunk_ = batch_chunk(g);
    chunks_ = g.batch / chunk_;
    dims_t src_dims{chunk_, g.in_channels}, dst_dims{chunk_, g.out_channels};
    src_dims.insert(src_dims.end(), g.in.begin(), g.in.end());
    dst_dims.insert(dst_dims.end(), g.out.begin(), g.out.end());
    src_user_ = dnnl::memory::desc(src_dims, dt::f32, strides_for(src_dims, map_order));
    dst_user_ = dnnl::memory::desc(dst_dims, dt::f32, strides_for(dst_dims, map_order));

    // weights: dims (G, OC/G, IC/G, *K) (no G axis when G == 1); nnabla stores
    // (OC, IC/G, *K) or (OC, *K, IC/G): the same order with G outermost.
    const bool grouped = g.groups > 1;
    dims_t w_dims;
    if (grouped) w_dims.push_back(g.groups);
    w_dims.push_back(g.out_channels / g.groups);
    w_dims.push_back(g.in_channels / g.groups);
    w_dims.insert(w_dims.end(), g.kernel.begin(), g.kernel.end());
    const int lead = grouped ? 1 : 0;  // index of OC/G
    std::vector<int> w_order;
    for (int i = 0; i <= lead; ++i) w_order.push_back(i);
    if (g.weight_channel_last) {
      for (int i = 0; i < n; ++i) w_order.push_back(lead + 2 + i);
      w_order.push_back(lead + 1);
    } else {
      for (int i = 0; i < n + 1; ++i) w_order.push_back(lead + 1 + i);
    }
    w_user_ = dnnl::memory::desc(w_dims, dt::f32, strides_for(w_dims, w_order));
    b_user_ = dnnl::memory::desc({g.out_channels}, dt::f32, tag::a);

    // oneDNN's padding on the far side makes its output-size formula give ours
    // (nnabla: out = (in + 2 pad - dilation (k - 1) - 1) / stride + 1, floored).
    pad_r_ = g.pad;
    for (int i = 0; i < n; ++i) {
      const int64_t ext = g.dilation[i] * (g.kernel[i] - 1) + 1;
      pad_r_[i] = (g.out[i] - 1) * g.stride[i] + ext - g.in[i] - g.pad[i];
      if (pad_r_[i] < 0 || pad_r_[i] > g.pad[i]) pad_r_[i] = g.pad[i];
      dil_.push_back(g.dilation[i] - 1);
    }
    // The forward descriptor (a hint for both backward passes) is made now, so a
    // geometry oneDNN cannot take fails here, where the caller falls back.
    // A small convolution runs on one thread: waking OpenMP's sleeping workers costs
    // more than its work (tens of microseconds when idle, milliseconds on a loaded
    // machine: a (8, 4, 8, 8) deconvolution + convolution step took 17 ms on 2 threads
    // against 0.6 ms on one).
    int64_t macs = chunk_ * g.out_channels * (g.in_channels / g.groups);
    for (int i = 0; i < n; ++i) macs *= g.out[i] * g.kernel[i];
    thread_cap_ = macs < kSmallWork ? 1 : 0;
    threads_ = apply_threads(thread_cap_);
    fwd_pd_ = make_forward(false);
    release_library_text();
  }

  // y = conv(x, w) (+ b). x, w contiguous float32 in the user layouts.
  py::array_t<float> forward(Floats x, Floats w, const py::object &bias) {
    check(x, src_user_, "x", chunks_);
    check(w, w_user_, "w");
    Floats b;
    const bool with_bias = !bias.is_none();
    if (with_bias) {
      b = Floats::ensure(bias);
      if (!b) throw py::error_already_set();
      check(b, b_user_, "b");
    }
    const int64_t x_step = product(src_user_.get_dims()), y_step = product(dst_user_.get_dims());
    py::array_t<float> y(y_step * chunks_);
    const float *px = x.data(), *pw = w.data(), *pb = with_bias ? b.data() : nullptr;
    float *py_ = y.mutable_data();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    follow_threads();
    auto &f = forward_parts(with_bias);
    dnnl::stream s(engine());
    auto wei = input(f.wei, pw, s, 1);  // once for all chunks
    for (int64_t c = 0; c < chunks_; ++c, px += x_step, py_ += y_step) {
      auto src = input(f.src, px, s, 0);
      dnnl::memory dst_user(dst_user_, engine(), py_);
      dnnl::memory dst = f.dst.same ? dst_user : output(f.dst);
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
      if (with_bias)
        args[DNNL_ARG_BIAS] = dnnl::memory(b_user_, engine(), const_cast<float *>(pb));
      f.prim.execute(s, args);
      if (!f.dst.same) f.dst.to_user.execute(s, dst, dst_user);
      s.wait();
    }
    trim_workspace();
    py::gil_scoped_acquire acquire;
    return y;
  }

  // dx = conv^T(dy, w).
  py::array_t<float> backward_data(Floats dy, Floats w) {
    check(dy, dst_user_, "dy", chunks_);
    check(w, w_user_, "w");
    const int64_t x_step = product(src_user_.get_dims()), y_step = product(dst_user_.get_dims());
    py::array_t<float> dx(x_step * chunks_);
    const float *pd = dy.data(), *pw = w.data();
    float *px = dx.mutable_data();
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex_);
    follow_threads();
    auto &b = data_parts();
    dnnl::stream s(engine());
    auto wei = input(b.wei, pw, s, 1);  // once for all chunks
    for (int64_t c = 0; c < chunks_; ++c, pd += y_step, px += x_step) {
      auto ddst = input(b.ddst, pd, s, 0);
      dnnl::memory dsrc_user(src_user_, engine(), px);
      dnnl::memory dsrc = b.dsrc.same ? dsrc_user : output(b.dsrc);
      b.prim.execute(s, {{DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_WEIGHTS, wei},
                         {DNNL_ARG_DIFF_SRC, dsrc}});
      if (!b.dsrc.same) b.dsrc.to_user.execute(s, dsrc, dsrc_user);
      s.wait();
    }
    trim_workspace();
    py::gil_scoped_acquire acquire;
    return dx;
  }

  // dw (and db = sum of dy per channel, when with_bias) from dy and x.
  py::object backward_weights(Floats dy, Floats x, bool with_bias) {
    check(dy, dst_user_, "dy", chunks_);
    check(x, src_user_, "x", chunks_);
    const int64_t x_step = product(src_user_.get_dims()), y_step = product(dst_user_.get_dims());
    const int64_t w_size = product(w_user_.get_dims());
    py::array_t<float> dw(w_size);
    py::array_t<float> db(with_bias ? g_.out_channels : 0);
    const float *pd = dy.data(), *px = x.data();
    float *const dw_out = dw.mutable_data(), *const db_out = db.mutable_data();
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex_);
      follow_threads();
      auto &b = weight_parts(with_bias);
      dnnl::stream s(engine());
      // The first chunk writes the results; each later one computes its term in the
      // workspace, which a summing reorder adds to dw (in parallel, no extra copy).
      std::vector<float> db_part(chunks_ > 1 && with_bias ? g_.out_channels : 0);
      dnnl::memory dw_user(w_user_, engine(), dw_out);
      for (int64_t c = 0; c < chunks_; ++c, pd += y_step, px += x_step) {
        float *pb = c ? db_part.data() : db_out;
        auto ddst = input(b.ddst, pd, s, 0);
        auto src = input(b.src, px, s, 1);
        dnnl::memory dwei = c == 0 && b.dwei.same ? dw_user : output(b.dwei);
        std::unordered_map<int, dnnl::memory> args{
            {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_WEIGHTS, dwei}};
        if (with_bias) args[DNNL_ARG_DIFF_BIAS] = dnnl::memory(b_user_, engine(), pb);
        b.prim.execute(s, args);
        if (c) {
          b.dwei.add_to_user.execute(s, dwei, dw_user);
        } else if (!b.dwei.same) {
          b.dwei.to_user.execute(s, dwei, dw_user);
        }
        s.wait();
        if (c)
          for (size_t i = 0; i < db_part.size(); ++i) db_out[i] += db_part[i];
      }
      trim_workspace();
    }
    if (with_bias) return py::make_tuple(dw, db);
    return std::move(dw);
  }

  std::string implementations() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::string(fwd_pd_.impl_info_str());
  }

 private:
  struct Forward {
    dnnl::convolution_forward prim;
    Operand src, wei, dst;
  };
  struct BackwardData {
    dnnl::convolution_backward_data prim;
    Operand ddst, wei, dsrc;
  };
  struct BackwardWeights {
    dnnl::convolution_backward_weights prim;
    Operand ddst, src, dwei;
  };

  // The layout of feature maps for the primitives: channel-last maps as they are
  // (oneDNN's brgemm convolutions read them directly: no reorders, and 3x3 64x128x8x8
  // forward + backward took 56 ms of CPU against 77 with blocked layouts); channel-first
  // maps in the blocked layout oneDNN picks (its direct kernels do not take plain NCHW).
  dnnl::memory::desc maps(const dnnl::memory::desc &d) const {
    return g_.channel_last ? d : any(d);
  }

  static dnnl::memory::desc any(const dnnl::memory::desc &d) {
    return dnnl::memory::desc(d.get_dims(), dt::f32, tag::any);
  }

  dnnl::convolution_forward::primitive_desc make_forward(bool with_bias) {
    auto src = maps(src_user_), wei = any(w_user_), dst = maps(dst_user_);
    if (with_bias)
      return {engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
              src, wei, b_user_, dst, g_.stride, dil_, g_.pad, pad_r_};
    return {engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
            src, wei, dst, g_.stride, dil_, g_.pad, pad_r_};
  }

  Forward &forward_parts(bool with_bias) {
    auto &slot = forward_[with_bias];
    if (!slot) {
      auto pd = with_bias ? make_forward(true) : fwd_pd_;
      slot.reset(new Forward{dnnl::convolution_forward(pd),
                             Operand(src_user_, pd.src_desc(), true, false),
                             Operand(w_user_, pd.weights_desc(), true, false),
                             Operand(dst_user_, pd.dst_desc(), false, true)});
      release_library_text();  // creation faulted in code it does not run again
    }
    return *slot;
  }

  BackwardData &data_parts() {
    if (!data_) {
      dnnl::convolution_backward_data::primitive_desc pd(
          engine(), dnnl::algorithm::convolution_direct, maps(src_user_), any(w_user_),
          maps(dst_user_), g_.stride, dil_, g_.pad, pad_r_, fwd_pd_);
      data_.reset(new BackwardData{dnnl::convolution_backward_data(pd),
                                   Operand(dst_user_, pd.diff_dst_desc(), true, false),
                                   Operand(w_user_, pd.weights_desc(), true, false),
                                   Operand(src_user_, pd.diff_src_desc(), false, true)});
      release_library_text();
    }
    return *data_;
  }

  BackwardWeights &weight_parts(bool with_bias) {
    auto &slot = weights_[with_bias];
    if (!slot) {
      using PD = dnnl::convolution_backward_weights::primitive_desc;
      PD pd = with_bias
                  ? PD(engine(), dnnl::algorithm::convolution_direct, maps(src_user_),
                       any(w_user_), b_user_, maps(dst_user_), g_.stride, dil_, g_.pad, pad_r_,
                       fwd_pd_)
                  : PD(engine(), dnnl::algorithm::convolution_direct, maps(src_user_),
                       any(w_user_), maps(dst_user_), g_.stride, dil_, g_.pad, pad_r_, fwd_pd_);
      slot.reset(new BackwardWeights{dnnl::convolution_backward_weights(pd),
                                     Operand(dst_user_, pd.diff_dst_desc(), true, false),
                                     Operand(src_user_, pd.src_desc(), true, false),
                                     Operand(w_user_, pd.diff_weights_desc(), false, true,
                                             chunks_ > 1)});
      release_library_text();
    }
    return *slot;
  }

  // oneDNN fixes a primitive's thread count when it is made (its work split), and runs
  // it on that many: after set_num_threads the primitives are made again.
  void follow_threads() {
    const int now = apply_threads(thread_cap_);
    if (now == threads_) return;
    forward_[0].reset();
    forward_[1].reset();
    data_.reset();
    weights_[0].reset();
    weights_[1].reset();
    fwd_pd_ = make_forward(false);
    threads_ = now;
  }

  // The memory the primitive reads for a user input (reordered when layouts differ).
  static dnnl::memory input(const Operand &op, const float *data, dnnl::stream &s, int slot) {
    dnnl::memory user(op.user, engine(), const_cast<float *>(data));
    if (op.same) return user;
    dnnl::memory prim(op.prim, engine(), workspace(slot, op.prim));
    op.to_prim.execute(s, user, prim);
    return prim;
  }

  // The memory a primitive writes before the result is reordered to the user's layout.
  static dnnl::memory output(const Operand &op) {
    return dnnl::memory(op.prim, engine(), workspace(2, op.prim));
  }

  // Samples per primitive call. Channel-first maps are reordered to oneDNN's blocked
  // layout in the workspace; running the batch in chunks bounds those copies (and the
  // scratchpads) to ~kChunkBytes per operand: ResNet-18 b32 keeps 2 MiB copies of its
  // 8 MiB maps. The chunk divides the batch; below 4 samples (prime batches) the whole
  // batch is run at once. Channel-last maps are read in place: one call.
  static int64_t batch_chunk(const Geometry &g) {
    constexpr int64_t kChunkBytes = int64_t(1) << 20;
    if (g.channel_last || g.batch <= 1) return g.batch;
    const int64_t per_sample = 4 * std::max(g.in_channels * product(g.in),
                                            g.out_channels * product(g.out));
    for (int64_t d = g.batch; d >= 1; --d) {
      if (g.batch % d) continue;
      if (d * per_sample <= kChunkBytes) return d >= std::min<int64_t>(4, g.batch) ? d : g.batch;
    }
    return g.batch;
  }

  static void check(const Floats &a, const dnnl::memory::desc &d, const char *what,
                    int64_t chunks = 1) {
    const int64_t want = product(d.get_dims()) * chunks;
    if (a.size() != want)
      throw py::value_error(std::string("nnabla_ext.cpu._onednn_conv: ") + what + " has " +
                            std::to_string(a.size()) + " elements; expected " +
                            std::to_string(want));
  }

  Geometry g_;
  dims_t pad_r_, dil_;
  dnnl::memory::desc src_user_, dst_user_, w_user_, b_user_;
  dnnl::convolution_forward::primitive_desc fwd_pd_;
  int threads_ = 1;  // the OpenMP thread count the primitives were made for
  int thread_cap_ = 0;  // 1 for a small convolution (kSmallWork), else none
  // Multiply-accumulates per chunk below which a convolution runs on one thread.
  static constexpr int64_t kSmallWork = int64_t(1) << 21;
  int64_t chunk_ = 1, chunks_ = 1;  // samples per primitive call, calls per pass
  std::unique_ptr<Forward> forward_[2];
  std::unique_ptr<BackwardData> data_;
  std::unique_ptr<BackwardWeights> weights_[2];
  std::mutex mutex_;
};

// ------------------------------------------------------------------ library text
// libdnnl.so.3 keeps its code and read-only data in one 42 MiB executable segment. Its
// static initializers (one per source file, scattered over the segment) fault pages in
// on load, and the kernel maps up to 64 KiB of the page cache around each fault: ~30 MiB
// of the segment became resident at load although a convolution runs little of it (its
// kernels are generated at run time into anonymous memory). Those pages are clean copies
// of the file: dropping them from this process (MADV_DONTNEED on a read-only, executable,
// file-backed mapping) frees them from its RSS, and the code that runs later is mapped
// again from the page cache on its first use. Returns the bytes advised.
int release_text_cb(struct dl_phdr_info *info, size_t, void *data) {
  const char *name = info->dlpi_name;
  if (!name || !std::strstr(name, "libdnnl.so")) return 0;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  size_t &advised = *static_cast<size_t *>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || (ph.p_flags & PF_W)) continue;
    const uintptr_t start = (info->dlpi_addr + ph.p_vaddr + page - 1) / page * page;
    const uintptr_t end = (info->dlpi_addr + ph.p_vaddr + ph.p_filesz) / page * page;
    if (end > start &&
        madvise(reinterpret_cast<void *>(start), end - start, MADV_DONTNEED) == 0)
      advised += end - start;
  }
  return 1;
}

size_t release_library_text() {
  size_t advised = 0;
  dl_iterate_phdr(&release_text_cb, &advised);
  return advised;
}

// ------------------------------------------------------------------ plan cache
// The cache key of a geometry: every field a plan depends on.
std::vector<int64_t> plan_key(const Geometry &g) {
  std::vector<int64_t> key{g.batch, g.in_channels, g.out_channels, g.groups,
                           g.channel_last, g.weight_channel_last,
                           static_cast<int64_t>(g.in.size())};
  for (const dims_t *d : {&g.in, &g.out, &g.kernel, &g.pad, &g.stride, &g.dilation})
    key.insert(key.end(), d->begin(), d->end());
  return key;
}

PlanCache<Plan> &cache() {
  static PlanCache<Plan> *c = new PlanCache<Plan>();  // never destroyed: plans may outlive exit order
  return *c;
}

std::shared_ptr<Plan> plan(int64_t batch, int64_t in_channels, int64_t out_channels,
                           int64_t groups, dims_t in, dims_t out, dims_t kernel, dims_t pad,
                           dims_t stride, dims_t dilation, bool channel_last,
                           bool weight_channel_last) {
  const size_t n = in.size();
  if (n < 1 || n > 3 || out.size() != n || kernel.size() != n || pad.size() != n ||
      stride.size() != n || dilation.size() != n)
    throw py::value_error("nnabla_ext.cpu._onednn_conv.plan: 1 to 3 spatial axes, all of one rank");
  if (groups < 1 || in_channels % groups || out_channels % groups)
    throw py::value_error("nnabla_ext.cpu._onednn_conv.plan: groups must divide both channel counts");
  Geometry g{batch, in_channels, out_channels, groups, in, out, kernel, pad, stride, dilation,
             channel_last, weight_channel_last};
  try {
    return cache().get(plan_key(g), [&] { return std::make_shared<Plan>(g); });
  } catch (const dnnl::error &e) {
    throw py::value_error(std::string("nnabla_ext.cpu._onednn_conv.plan: oneDNN refused: ") +
                          e.what());
  }
}

}  // namespace

PYBIND11_MODULE(_onednn_conv, m) {
  using namespace pybind11::literals;
  m.doc() = "Convolutions and batched matrix products through oneDNN for nnabla_ext.cpu";
  m.attr("ABI_VERSION") = 1;
  py::register_exception<dnnl::error>(m, "OneDNNError", PyExc_RuntimeError);
  py::class_<Plan, std::shared_ptr<Plan>>(m, "Plan")
      .def("forward", &Plan::forward, "x"_a, "w"_a, "b"_a = py::none(),
           "y = conv(x, w) (+ b), flat.")
      .def("backward_data", &Plan::backward_data, "dy"_a, "w"_a,
           "dx, the gradient of the convolution's input, flat.")
      .def("backward_weights", &Plan::backward_weights, "dy"_a, "x"_a, "with_bias"_a,
           "dw (flat), or (dw, db) with_bias.")
      .def("implementation", &Plan::implementations,
           "oneDNN's implementation name of the forward primitive.");
  m.def("plan", &plan, "batch"_a, "in_channels"_a, "out_channels"_a, "groups"_a,
        "in_shape"_a, "out_shape"_a, "kernel"_a, "pad"_a, "stride"_a, "dilation"_a,
        "channel_last"_a, "weight_channel_last"_a,
        "The (cached) plan of a convolution; ValueError when oneDNN cannot take it.");
  m.def("set_num_threads", [](int n) { g_threads.store(n < 1 ? 1 : n); }, "n"_a,
        "Threads of oneDNN's OpenMP team for the next calls.");
  m.def("num_threads", [] { return g_threads.load(); });
  m.def("set_cache_capacity", [](size_t n) { cache().set_capacity(n); }, "n"_a,
        "Plans the LRU cache keeps.");
  m.def("cache_stats", [] { return cache().stats(); }, "size, capacity, hits, misses.");
  m.def("clear_cache", [] { cache().clear(); });
  m.def("release_library_text", &release_library_text,
        "Drop libdnnl's resident code pages from this process (bytes advised; see source).");
  // after libdnnl's static initializers, which have run by now (it is a dependency)
  m.attr("released_text_bytes") = release_library_text();
  define_matmul(m);
  m.def("version", [] {
    const dnnl_version_t *v = dnnl_version();
    return py::make_tuple(v->major, v->minor, v->patch);
  });
}
