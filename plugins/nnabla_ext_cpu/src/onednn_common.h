// What the oneDNN modules of nnabla_ext.cpu share: the CPU engine and the thread count of
// oneDNN's OpenMP team (src/onednn_conv.cpp: convolutions, which defines the module;
// src/onednn_matmul.cpp: batched matrix products, added to the same module).
//
// Threads: oneDNN (GNU OpenMP build) takes omp_get_max_threads() of the calling thread;
// every call first applies the count set by set_num_threads (nnabla_ext.cpu's), so
// oneDNN's team follows the plugin's thread setting.
#pragma once

#include <dlfcn.h>
#include <pthread.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"

namespace nbla_onednn {

// The thread count set through the module's set_num_threads.
inline std::atomic<int> g_threads{1};

using OmpSetNumThreads = void (*)(int);

inline OmpSetNumThreads omp_setter() {
  static const OmpSetNumThreads fn = [] {
    void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (!sym) {
      void *handle = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD);
      if (handle) sym = dlsym(handle, "omp_set_num_threads");
    }
    return reinterpret_cast<OmpSetNumThreads>(sym);
  }();
  return fn;
}

// GNU OpenMP's team does not survive fork(): a child whose first parallel region asks
// for more than one thread waits for workers that do not exist. A forked child therefore
// runs oneDNN on one thread (set_num_threads can raise it again, at the user's risk).
inline void after_fork_in_child() { g_threads.store(1); }

// The OpenMP thread count is per calling thread: apply ours (at most ``cap`` when it is
// positive) when it changed. Returns that count.
inline int apply_threads(int cap = 0) {
  static const bool fork_handler = [] {
    pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    return true;
  }();
  (void)fork_handler;
  static thread_local int applied = 0;
  int want = g_threads.load(std::memory_order_relaxed);
  if (cap > 0 && want > cap) want = cap;
  if (want != applied) {
    if (OmpSetNumThreads fn = omp_setter()) fn(want);
    applied = want;
  }
  return want;
}

inline dnnl::engine &engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// A least-recently-used cache of plans (a primitive and what runs it) keyed by integers
// (shapes, strides, options): a graph re-created every iteration (dynamic mode) finds its
// plans again. ``get`` makes a missing plan with ``make()`` while holding the lock.
template <class PlanT>
class PlanCache {
 public:
  using Key = std::vector<int64_t>;

  template <class Make>
  std::shared_ptr<PlanT> get(const Key &key, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      ++hits_;
      return it->second->second;
    }
    ++misses_;
    std::shared_ptr<PlanT> plan = make();
    order_.emplace_front(key, plan);
    index_[key] = order_.begin();
    trim();
    return plan;
  }

  void set_capacity(size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = n;
    trim();
  }

  // size, capacity, hits, misses
  pybind11::dict stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    pybind11::dict d;
    d["size"] = order_.size();
    d["capacity"] = capacity_;
    d["hits"] = hits_;
    d["misses"] = misses_;
    return d;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    order_.clear();
    index_.clear();
  }

 private:
  void trim() {
    while (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

  using Entry = std::pair<Key, std::shared_ptr<PlanT>>;
  std::list<Entry> order_;
  std::map<Key, typename std::list<Entry>::iterator> index_;
  size_t capacity_ = 128;
  uint64_t hits_ = 0, misses_ = 0;
  std::mutex mutex_;
};

// Adds the batched matrix product (MatmulPlan, matmul_plan, matmul cache functions) to
// the module (src/onednn_matmul.cpp).
void define_matmul(pybind11::module_ &m);

}  // namespace nbla_onednn
