// The thread pool of the native loops, which also runs numpy's OpenBLAS jobs
// (blas_threads.h), so that one set of threads serves both.
//
// Built for a shared machine: the calling thread starts on the work at once and the
// workers claim chunks as they wake, so a worker the scheduler has parked costs nothing
// (the caller takes its chunks) instead of holding up the loop until its next time slice,
// as a fork-join team would. Workers spin briefly after a job, yield for up to 2 ms, then
// sleep on a condition variable. Nested calls (from a worker) and calls while another thread's job runs are
// computed on the calling thread. A forked child gets a fresh pool (its workers start on
// first use), as the parent's threads do not exist there.
#pragma once

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NBLA_CPU_RELAX() _mm_pause()
#else
#define NBLA_CPU_RELAX() std::this_thread::yield()
#endif

namespace nbla_native {

using pool_idx_t = std::int64_t;

class ThreadPool {
 public:
  using Task = void (*)(void *context, pool_idx_t begin, pool_idx_t end);

  explicit ThreadPool(int threads) : threads_(std::max(1, threads)) {}
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  // Workers are detached on purpose: they live as long as the process (a pool is never
  // destroyed, see pool()), and joining them at exit would race the interpreter's exit.

  int threads() const { return threads_.load(std::memory_order_relaxed); }
  void set_threads(int n) { threads_.store(std::max(1, n), std::memory_order_relaxed); }

  // task(context, begin, end) over [0, n) in chunks of `grain`, on up to threads()
  // threads. With `exact`, every index is its own chunk and all n run at the same time
  // on n distinct threads (returns false, having run nothing, when that is not possible).
  bool run(pool_idx_t n, pool_idx_t grain, Task task, void *context, bool exact = false) {
    if (n <= 0) return true;
    grain = exact ? 1 : std::max<pool_idx_t>(1, grain);
    const int helpers = exact ? static_cast<int>(n) - 1 : threads() - 1;
    if (helpers <= 0 || (!exact && n <= grain)) {
      if (exact && n > 1) return false;
      task(context, 0, n);
      return true;
    }
    if (in_worker()) {
      if (exact) return false;
      task(context, 0, n);
      return true;
    }
    std::unique_lock<std::mutex> submit(submit_, std::try_to_lock);
    if (!submit.owns_lock()) {
      if (exact) return false;
      task(context, 0, n);
      return true;
    }
    if (!ensure_workers(helpers)) {
      if (exact) return false;
      task(context, 0, n);
      return true;
    }
    task_ = task;
    context_ = context;
    n_ = n;
    grain_ = grain;
    helpers_ = helpers;
    next_.store(0);
    {
      std::lock_guard<std::mutex> lock(sleep_mutex_);
      open_.store(true);
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    work();
    open_.store(false);
    // A worker that saw the job open is still on a chunk, or about to find none left.
    while (inflight_.load() != 0) NBLA_CPU_RELAX();
    return true;
  }

 private:
  static bool &in_worker() {
    static thread_local bool flag = false;
    return flag;
  }

  void work() {
    const pool_idx_t n = n_, grain = grain_;
    for (pool_idx_t begin = next_.fetch_add(grain); begin < n; begin = next_.fetch_add(grain))
      task_(context_, begin, std::min(n, begin + grain));
  }

  bool ensure_workers(int count) {
    while (static_cast<int>(started_) < count) {
      const int id = started_;
      const std::uint64_t seen = generation_.load();  // before the job is published
      try {
        std::thread([this, id, seen] { loop(id, seen); }).detach();
      } catch (...) {
        return false;
      }
      ++started_;
    }
    return true;
  }

  void loop(int id, std::uint64_t seen) {
    in_worker() = true;
    for (;;) {
      // Spin a little, then yield for up to kYieldFor (a yielding worker stays runnable,
      // so back-to-back GEMMs and loops find it without a wake-up on a loaded machine),
      // then sleep.
      for (int spin = 0; spin < kSpins && generation_.load() == seen; ++spin) NBLA_CPU_RELAX();
      if (generation_.load() == seen) {
        const auto until = std::chrono::steady_clock::now() + kYieldFor;
        while (generation_.load() == seen && std::chrono::steady_clock::now() < until)
          std::this_thread::yield();
      }
      if (generation_.load() == seen) {
        std::unique_lock<std::mutex> lock(sleep_mutex_);
        wake_.wait(lock, [&] { return generation_.load() != seen; });
      }
      seen = generation_.load();
      inflight_.fetch_add(1);
      if (open_.load() && id < helpers_) work();
      inflight_.fetch_sub(1);
    }
  }

  static constexpr int kSpins = 4000;
  static constexpr std::chrono::microseconds kYieldFor{2000};

  std::atomic<int> threads_;
  std::mutex submit_;  // one job at a time
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  int started_ = 0;  // under submit_
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> open_{false};
  std::atomic<int> inflight_{0};
  std::atomic<pool_idx_t> next_{0};
  // The job: written before open_ is set, read by workers that saw it set.
  Task task_ = nullptr;
  void *context_ = nullptr;
  pool_idx_t n_ = 0, grain_ = 1;
  int helpers_ = 0;
};

namespace pool_detail {

inline std::atomic<ThreadPool *> &current() {
  static std::atomic<ThreadPool *> p{new ThreadPool(1)};
  return p;
}

inline void after_fork_in_child() {
  // The parent's workers do not exist here; the old pool is left as it is (its mutexes
  // may have been held by threads that did not survive).
  current().store(new ThreadPool(current().load()->threads()));
}

inline bool install_fork_handler() {
  static const bool done = [] {
    pthread_atfork(nullptr, nullptr, &after_fork_in_child);
    return true;
  }();
  return done;
}

template <typename F>
void call_range(void *f, pool_idx_t begin, pool_idx_t end) {
  (*static_cast<F *>(f))(begin, end);
}

}  // namespace pool_detail

inline ThreadPool &pool() {
  pool_detail::install_fork_handler();
  return *pool_detail::current().load();
}

inline int num_threads() { return pool().threads(); }
inline void set_num_threads(int n) { pool().set_threads(n); }

// f(begin, end) over [0, n) on the pool when `worth` (else on this thread), in about
// four chunks per thread (fewer when n is small).
template <typename F>
void parallel_range(pool_idx_t n, bool worth, F &&f) {
  using Fn = std::remove_reference_t<F>;
  ThreadPool &p = pool();
  const int t = p.threads();
  if (!worth || t <= 1 || n <= 1) {
    if (n > 0) f(pool_idx_t(0), n);
    return;
  }
  const pool_idx_t grain = std::max<pool_idx_t>(1, (n + 4 * t - 1) / (4 * t));
  p.run(n, grain, &pool_detail::call_range<Fn>, const_cast<void *>(static_cast<const void *>(&f)));
}

// f(i) for every i in [0, n), as parallel_range.
template <typename F>
void parallel_for(pool_idx_t n, bool worth, F &&f) {
  parallel_range(n, worth, [&f](pool_idx_t begin, pool_idx_t end) {
    for (pool_idx_t i = begin; i < end; ++i) f(i);
  });
}

}  // namespace nbla_native
