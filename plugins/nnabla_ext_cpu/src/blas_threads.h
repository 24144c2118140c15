// One thread pool for BLAS and the native loops.
//
// OpenBLAS (0.3.27 and later) lets its caller run its parallel jobs
// (`openblas_set_threads_callback_function`). Given `run_blas_jobs`, numpy's matrix
// products run their jobs on the pool of the native loops (thread_pool.h): between a GEMM
// and a native loop no second set of threads spins on the cores the other one needs, so
// both can use every core. `nnabla_ext/cpu/_blas.py` finds the OpenBLAS numpy loaded and
// installs the callback.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "thread_pool.h"

namespace nbla_native {

// OpenBLAS's types (cblas.h): one job is dojob(job index, &jobs[index], dojob_data).
using BlasDojob = void (*)(int, void *, int);

inline std::atomic<std::uint64_t> &blas_job_batches() {
  static std::atomic<std::uint64_t> count{0};
  return count;
}

namespace blas_detail {

struct Jobs {
  BlasDojob dojob;
  char *base;
  std::size_t elsize;
  int data;
  void operator()(pool_idx_t begin, pool_idx_t end) const {
    for (pool_idx_t i = begin; i < end; ++i)
      dojob(static_cast<int>(i), base + static_cast<std::size_t>(i) * elsize, data);
  }
};

}  // namespace blas_detail

// OpenBLAS's level-3 jobs wait for one another (each packs a share of B that the others
// read), so all `numjobs` must run at the same time: on the pool (exact mode), or, where
// it cannot (a nested call, another thread's job in progress), on threads started for
// the call.
extern "C" inline void run_blas_jobs(int /*sync*/, BlasDojob dojob, int numjobs,
                                     std::size_t jobdata_elsize, void *jobdata,
                                     int dojob_data) {
  blas_job_batches().fetch_add(1, std::memory_order_relaxed);
  blas_detail::Jobs jobs{dojob, static_cast<char *>(jobdata), jobdata_elsize, dojob_data};
  if (numjobs <= 1) {
    jobs(0, numjobs);
    return;
  }
  if (pool().run(numjobs, 1, &pool_detail::call_range<blas_detail::Jobs>, &jobs, true)) return;
  std::vector<std::thread> extra;
  extra.reserve(numjobs - 1);
  for (int i = 1; i < numjobs; ++i) extra.emplace_back([&jobs, i] { jobs(i, i + 1); });
  jobs(0, 1);
  for (auto &t : extra) t.join();
}

}  // namespace nbla_native
