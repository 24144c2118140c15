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

// Adds the batched matrix product (MatmulPlan, matmul_plan, matmul cache functions) to
// the module (src/onednn_matmul.cpp).
void define_matmul(pybind11::module_ &m);

}  // namespace nbla_onednn
