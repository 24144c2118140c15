// A caching allocator for numpy's array data (numpy's memory-handler API, numpy >= 1.22):
// the CPU backend's counterpart of nnabla's CpuCachedArray.
//
// Blocks of at least kLargeBytes are mapped from the OS and, once freed, kept in a free
// list ordered by size; the next request of a similar size takes the smallest cached block
// that fits (at most twice its size) instead of mapping and faulting in fresh pages. A
// request that finds none first returns the oldest cached blocks, as many bytes as it
// needs, to the OS, so the cache does not pile up blocks of sizes no longer asked for.
// Smaller requests go to the handler that was current at installation (numpy's default,
// with its own small-block cache). The cache is bounded (set_limit); blocks beyond the
// limit are returned to the OS at once. All entry points are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nbla_native::cache {

constexpr std::size_t kLargeBytes = std::size_t(1) << 16;

struct Stats {
  std::uint64_t in_use;   // bytes of large blocks held by live arrays
  std::uint64_t cached;   // bytes of large blocks kept for reuse
  std::uint64_t hits;     // large requests served from the cache
  std::uint64_t misses;   // large requests that mapped a new block
  std::uint64_t limit;    // bound on `cached`
  bool installed;         // whether numpy allocates through this allocator now
};

// Make numpy allocate new arrays through the cache (in the calling thread's context, as
// PyDataMem_SetHandler does), or restore the handler found at the first install. Arrays
// keep the handler that allocated them, so uninstalling never frees through the wrong one.
// Both need the GIL; install raises (sets a Python error and returns false) on failure.
bool install();
void uninstall();

// Return every cached block to the OS; blocks in use are unaffected.
void clear();
void set_limit(std::uint64_t bytes);
Stats stats();

}  // namespace nbla_native::cache
