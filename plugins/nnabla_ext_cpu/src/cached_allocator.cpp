// The caching allocator behind numpy's memory-handler API; see cached_allocator.h.
//
// Every block handed to numpy is preceded by a 16-byte tag (its size and kind), so free
// and realloc never depend on the size numpy passes back. Large blocks are anonymous
// mappings whose first 64 bytes hold the mapping length and the tag; their data is
// 64-byte aligned. Small blocks are the fallback handler's allocations, 16 bytes longer.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "cached_allocator.h"

namespace nbla_native::cache {
namespace {

constexpr std::uint32_t kSmall = 0x6e62736d, kLarge = 0x6e62736c;
constexpr std::size_t kTag = 16, kLargeOffset = 64;
constexpr std::size_t kMaxSize = std::size_t(1) << 62;
constexpr std::uint64_t kDefaultLimit = std::uint64_t(1) << 30;

struct Tag {
  std::uint64_t size;
  std::uint32_t magic;
  std::uint32_t unused;
};
static_assert(sizeof(Tag) == kTag, "the tag keeps 16-byte alignment");

struct Block {
  std::size_t length;
  char *base;
};

// The cached mappings, by (length, age) for best fit and by age for eviction.
struct Cache {
  std::mutex mutex;
  std::set<std::pair<std::size_t, std::uint64_t>> by_size;
  std::map<std::uint64_t, Block> by_age;
  std::uint64_t next_age = 0;
  std::uint64_t in_use = 0, cached = 0, hits = 0, misses = 0, limit = kDefaultLimit;

  void keep(const Block &block) {
    by_size.emplace(block.length, next_age);
    by_age.emplace(next_age++, block);
    cached += block.length;
  }

  Block drop(std::map<std::uint64_t, Block>::iterator it) {
    const Block block = it->second;
    by_size.erase({block.length, it->first});
    by_age.erase(it);
    cached -= block.length;
    return block;
  }
};

// Never destroyed: arrays may be freed after static destructors have run.
Cache &state() {
  static Cache *cache = new Cache;
  return *cache;
}

PyDataMemAllocator fallback;          // the handler current at the first install
PyObject *fallback_capsule = nullptr;
PyObject *our_capsule = nullptr;

Tag *tag_of(void *data) { return reinterpret_cast<Tag *>(static_cast<char *>(data) - kTag); }

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

std::size_t mapping_length(std::size_t size) {
  const std::size_t page = page_size();
  return (size + kLargeOffset + page - 1) / page * page;
}

void release(const std::vector<Block> &blocks) {
  for (const Block &block : blocks) munmap(block.base, block.length);
}

// The smallest cached mapping of at least `need` bytes and at most twice that, or null.
// On a miss the oldest cached mappings, `need` bytes or more, go back to the OS (into
// `evicted`): a new mapping then replaces memory the cache held rather than adding to it,
// so the cache never holds more than the arrays' peak plus one request.
char *take_cached(std::size_t need, std::size_t &taken, std::vector<Block> &evicted) {
  Cache &c = state();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.by_size.lower_bound({need, 0});
  if (it == c.by_size.end() || it->first / 2 > need) {
    ++c.misses;
    for (std::size_t freed = 0; freed < need && !c.by_age.empty();) {
      evicted.push_back(c.drop(c.by_age.begin()));
      freed += evicted.back().length;
    }
    return nullptr;
  }
  const Block block = c.drop(c.by_age.find(it->second));
  taken = block.length;
  c.in_use += taken;
  ++c.hits;
  return block.base;
}

char *map_new(std::size_t length) {
  void *base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {  // the cache may be what fills memory: empty it, try once more
    clear();
    base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return nullptr;
  }
  Cache &c = state();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.in_use += length;
  return static_cast<char *>(base);
}

void *large_alloc(std::size_t size, bool zero) {
  if (size > kMaxSize) return nullptr;
  const std::size_t need = mapping_length(size);
  std::size_t length = need;
  std::vector<Block> evicted;
  char *base = take_cached(need, length, evicted);
  release(evicted);
  const bool fresh = base == nullptr;  // fresh anonymous mappings read as zeros
  if (fresh && !(base = map_new(length))) return nullptr;
  std::memcpy(base, &length, sizeof length);
  char *data = base + kLargeOffset;
  *tag_of(data) = Tag{size, kLarge, 0};
  if (zero && !fresh) std::memset(data, 0, size);
  return data;
}

void large_free(void *data) {
  char *base = static_cast<char *>(data) - kLargeOffset;
  std::size_t length;
  std::memcpy(&length, base, sizeof length);
  Cache &c = state();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    c.in_use -= length;
    if (c.cached + length <= c.limit) {
      c.keep(Block{length, base});
      return;
    }
  }
  munmap(base, length);
}

void *small_alloc(std::size_t size, bool zero) {
  void *raw = zero ? fallback.calloc(fallback.ctx, size + kTag, 1)
                   : fallback.malloc(fallback.ctx, size + kTag);
  if (!raw) return nullptr;
  *static_cast<Tag *>(raw) = Tag{size, kSmall, 0};
  return static_cast<char *>(raw) + kTag;
}

void *allocate(std::size_t size, bool zero) {
  return size >= kLargeBytes ? large_alloc(size, zero) : small_alloc(size, zero);
}

void handler_free(void *, void *data, std::size_t) {
  if (!data) return;
  Tag *tag = tag_of(data);
  if (tag->magic == kLarge)
    large_free(data);
  else
    fallback.free(fallback.ctx, tag, tag->size + kTag);
}

void *handler_malloc(void *, std::size_t size) { return allocate(size, false); }

void *handler_calloc(void *, std::size_t count, std::size_t item) {
  if (item && count > kMaxSize / item) return nullptr;
  return allocate(count * item, true);
}

void *handler_realloc(void *ctx, void *data, std::size_t size) {
  if (!data) return allocate(size, false);
  Tag *tag = tag_of(data);
  if (tag->magic == kSmall && size < kLargeBytes) {
    void *raw = fallback.realloc(fallback.ctx, tag, size + kTag);
    if (!raw) return nullptr;
    static_cast<Tag *>(raw)->size = size;
    return static_cast<char *>(raw) + kTag;
  }
  void *moved = allocate(size, false);
  if (!moved) return nullptr;
  std::memcpy(moved, data, std::min<std::size_t>(size, tag->size));
  handler_free(ctx, data, tag->size);
  return moved;
}

PyDataMem_Handler handler = {
    "nnabla_ext_cpu_cached", 1,
    {nullptr, handler_malloc, handler_calloc, handler_realloc, handler_free}};

bool set_current(PyObject *capsule) {
  PyObject *previous = PyDataMem_SetHandler(capsule);
  if (!previous) return false;
  Py_DECREF(previous);
  return true;
}

bool prepare() {
  if (our_capsule) return true;
  if (_import_array() < 0) return false;
  PyObject *current = PyDataMem_GetHandler();
  if (!current) return false;
  auto *h = static_cast<PyDataMem_Handler *>(PyCapsule_GetPointer(current, "mem_handler"));
  if (!h) {
    Py_DECREF(current);
    return false;
  }
  fallback = h->allocator;
  fallback_capsule = current;  // kept forever, as ours: arrays may outlive any uninstall
  our_capsule = PyCapsule_New(&handler, "mem_handler", nullptr);
  return our_capsule != nullptr;
}

}  // namespace

bool install() { return prepare() && set_current(our_capsule); }

void uninstall() {
  if (fallback_capsule && !set_current(fallback_capsule)) PyErr_Clear();
}

namespace {

// Returns the oldest cached mappings to the OS until at most `keep` bytes stay cached.
void shrink_to(std::uint64_t keep) {
  std::vector<Block> blocks;
  {
    Cache &c = state();
    std::lock_guard<std::mutex> lock(c.mutex);
    while (c.cached > keep) blocks.push_back(c.drop(c.by_age.begin()));
  }
  release(blocks);
}

}  // namespace

void clear() { shrink_to(0); }

void set_limit(std::uint64_t bytes) {
  {
    Cache &c = state();
    std::lock_guard<std::mutex> lock(c.mutex);
    c.limit = bytes;
  }
  shrink_to(bytes);
}

Stats stats() {
  bool installed = false;
  if (our_capsule) {
    PyObject *current = PyDataMem_GetHandler();
    if (current) {
      installed = current == our_capsule;
      Py_DECREF(current);
    } else {
      PyErr_Clear();
    }
  }
  Cache &c = state();
  std::lock_guard<std::mutex> lock(c.mutex);
  return Stats{c.in_use, c.cached, c.hits, c.misses, c.limit, installed};
}

}  // namespace nbla_native::cache
