// Sampling images at per-output pixel coordinates: nearest or multilinear (2 or 3 axes,
// corners outside the image read 0), and the adjoints of both.
//
// An image batch is addressed through (batch, pixel, channel) strides, so channel-first
// (B, C, pixels) and channel-last (B, pixels, C) data share the kernels. coords holds, per
// batch item and output pixel, n pixel coordinates (axis 0 the slowest of the image's axes,
// of sizes s0, s1, s2). Corners are visited in the order of their bits (axis 0 the most
// significant), so sums add up in the order of the generic kernel's corner loop.

struct Corner {
  long long index;   // flat pixel index of the corner (valid only when inside)
  bool inside;
  float factor[3];   // per-axis interpolation factors
};

__device__ __forceinline__ Corner corner_at(const float* c, int n, const int* size, int bits) {
  Corner k;
  k.index = 0;
  k.inside = true;
  for (int a = 0; a < n; ++a) {
    const int step = (bits >> (n - 1 - a)) & 1;
    const float low = floorf(c[a]);
    const float frac = c[a] - low;
    const long long i = (long long)low + step;
    k.inside = k.inside && i >= 0 && i < size[a];
    k.index = k.index * size[a] + i;
    k.factor[a] = step ? frac : 1.0f - frac;
  }
  return k;
}

__device__ __forceinline__ Corner nearest_at(const float* c, int n, const int* size) {
  Corner k;
  k.index = 0;
  k.inside = true;
  for (int a = 0; a < n; ++a) {
    const long long i = (long long)floorf(c[a] + 0.5f);
    k.inside = k.inside && i >= 0 && i < size[a];
    k.index = k.index * size[a] + i;
    k.factor[a] = 1.0f;
  }
  return k;
}

__device__ __forceinline__ float weight_of(const Corner& k, int n) {
  float w = k.factor[0];
  for (int a = 1; a < n; ++a) w *= k.factor[a];
  return w;
}

// y[b, p, c] = sum over the corners of x[b, corner, c] * weight (one thread per output).
extern "C" __global__ void grid_sample_forward(
    const float* x, const float* coords, float* y, long long total, int n_out, int channels,
    int n, int s0, int s1, int s2, long long xb, long long xpix, long long xc, long long yb,
    long long ypix, long long yc, int nearest) {
  const int size[3] = {s0, s1, s2};
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)blockDim.x * gridDim.x) {
    const int c = (int)(i % channels);
    const long long bp = i / channels;
    const long long b = bp / n_out, p = bp % n_out;
    const float* co = coords + bp * n;
    const float* xbase = x + b * xb + c * xc;
    float acc = 0.0f;
    if (nearest) {
      const Corner k = nearest_at(co, n, size);
      if (k.inside) acc = xbase[k.index * xpix];
    } else {
      for (int bits = 0; bits < (1 << n); ++bits) {
        const Corner k = corner_at(co, n, size, bits);
        if (k.inside) acc += xbase[k.index * xpix] * weight_of(k, n);
      }
    }
    y[b * yb + p * ypix + c * yc] = acc;
  }
}

// dx (zero-filled by the caller) += dy[b, p, c] * weight at each corner; outputs share
// corners, hence the atomic add.
extern "C" __global__ void grid_sample_backward_data(
    const float* dy, const float* coords, float* dx, long long total, int n_out, int channels,
    int n, int s0, int s1, int s2, long long xb, long long xpix, long long xc, long long yb,
    long long ypix, long long yc, int nearest) {
  const int size[3] = {s0, s1, s2};
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
       i += (long long)blockDim.x * gridDim.x) {
    const int c = (int)(i % channels);
    const long long bp = i / channels;
    const long long b = bp / n_out, p = bp % n_out;
    const float* co = coords + bp * n;
    float* dxbase = dx + b * xb + c * xc;
    const float g = dy[b * yb + p * ypix + c * yc];
    if (nearest) {
      const Corner k = nearest_at(co, n, size);
      if (k.inside) atomicAdd(dxbase + k.index * xpix, g);
    } else {
      for (int bits = 0; bits < (1 << n); ++bits) {
        const Corner k = corner_at(co, n, size, bits);
        if (k.inside) atomicAdd(dxbase + k.index * xpix, g * weight_of(k, n));
      }
    }
  }
}

// dcoords[b, p, a] = sum over corners and channels of x * dy * d(weight)/d(coordinate a)
// (multilinear only; one thread per output pixel).
extern "C" __global__ void grid_sample_backward_coords(
    const float* x, const float* dy, const float* coords, float* dcoords, long long total,
    int n_out, int channels, int n, int s0, int s1, int s2, long long xb, long long xpix,
    long long xc, long long yb, long long ypix, long long yc) {
  const int size[3] = {s0, s1, s2};
  for (long long bp = blockIdx.x * (long long)blockDim.x + threadIdx.x; bp < total;
       bp += (long long)blockDim.x * gridDim.x) {
    const long long b = bp / n_out, p = bp % n_out;
    const float* co = coords + bp * n;
    float d[3] = {0.0f, 0.0f, 0.0f};
    for (int bits = 0; bits < (1 << n); ++bits) {
      const Corner k = corner_at(co, n, size, bits);
      float v = 0.0f;
      if (k.inside) {
        for (int c = 0; c < channels; ++c) {
          v += x[b * xb + k.index * xpix + c * xc] * dy[b * yb + p * ypix + c * yc];
        }
      }
      for (int a = 0; a < n; ++a) {
        float rest = 1.0f;
        for (int o = 0; o < n; ++o) {
          if (o != a) rest *= k.factor[o];
        }
        const int step = (bits >> (n - 1 - a)) & 1;
        d[a] += v * (step ? rest : -rest);
      }
    }
    for (int a = 0; a < n; ++a) dcoords[bp * n + a] = d[a];
  }
}
