// out[index[r], :] += rows[r, :] for r in [0, n_rows): the adjoint of gathering rows
// (embedding lookups, index_select); repeated indices accumulate, hence the atomic add.
// An index outside [0, n_targets) is skipped (the caller validates indices beforehand).

extern "C" __global__ void scatter_add_rows(
    const float* rows, const long long* index, float* out, long long n_rows, long long width,
    long long n_targets) {
  const long long n = n_rows * width;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)blockDim.x * gridDim.x) {
    const long long r = i / width;
    const long long target = index[r];
    if (target >= 0 && target < n_targets) {
      atomicAdd(out + target * width + (i % width), rows[i]);
    }
  }
}
