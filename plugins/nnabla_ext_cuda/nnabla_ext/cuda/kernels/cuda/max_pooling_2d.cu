// Max pooling over two spatial axes of a (outer, H, W, inner) view: inner is 1 for
// channel-first maps and the channel count for channel-last ones, so one kernel serves both.
// The arg of an output is the number of the window tap (ky * KW + kx) holding the first
// maximum in tap order; taps in the padding read -inf, so they never win against a value.
// (NVRTC has no math.h: -inf is spelt through its bit pattern.)

extern "C" __global__ void max_pooling_2d_forward(
    const float* x, float* y, long long* arg, long long n_out, int h, int w, int trail,
    int oh, int ow, int kh, int kw, int sh, int sw, int ph, int pw) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_out;
       i += (long long)blockDim.x * gridDim.x) {
    const int c = (int)(i % trail);
    const int ox = (int)((i / trail) % ow);
    const int oy = (int)((i / trail / ow) % oh);
    const long long b = i / trail / ow / oh;
    const float* xb = x + b * h * (long long)w * trail + c;
    const float neg_inf = __int_as_float(0xff800000);
    float best = neg_inf;
    long long best_tap = 0;
    for (int ky = 0; ky < kh; ++ky) {
      const int iy = oy * sh - ph + ky;
      for (int kx = 0; kx < kw; ++kx) {
        const int ix = ox * sw - pw + kx;
        const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
        const float v = inside ? xb[((long long)iy * w + ix) * trail] : neg_inf;
        const long long tap = (long long)ky * kw + kx;
        if (tap == 0 || v > best) {
          best = v;
          best_tap = tap;
        }
      }
    }
    y[i] = best;
    arg[i] = best_tap;
  }
}

// dx (zero-filled by the caller) += dy at each output's winning tap; windows overlap when
// the stride is smaller than the kernel, hence the atomic add.
extern "C" __global__ void max_pooling_2d_backward(
    const float* dy, const long long* arg, float* dx, long long n_out, int h, int w,
    int trail, int oh, int ow, int kw, int sh, int sw, int ph, int pw) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n_out;
       i += (long long)blockDim.x * gridDim.x) {
    const int c = (int)(i % trail);
    const int ox = (int)((i / trail) % ow);
    const int oy = (int)((i / trail / ow) % oh);
    const long long b = i / trail / ow / oh;
    const int iy = oy * sh - ph + (int)(arg[i] / kw);
    const int ix = ox * sw - pw + (int)(arg[i] % kw);
    if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
      atomicAdd(dx + ((b * h + iy) * (long long)w + ix) * trail + c, dy[i]);
    }
  }
}
