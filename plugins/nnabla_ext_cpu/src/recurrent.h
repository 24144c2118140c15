// One time step of the RNN, LSTM and GRU cells, forward and backward, fused into one pass
// each (nnabla_ext/cpu/kernels/recurrent.py holds the formulas, native_recurrent.py the
// time loop; the matrix products stay there, through numpy's BLAS, which runs on the same
// thread pool).
//
// Shapes, per step: the input projection gx and the recurrent projection gh are
// (batch, G * hidden) with the gate blocks side by side on each row (LSTM: i, f, g, o;
// GRU: r, z, n); states are (batch, hidden). The forward step keeps the gates'
// activations for backward in `act`, which may be gx itself. Rows are independent, so the
// loops split them across the pool's threads, and every element is computed the same way
// on any number of threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "activation.h"
#include "geometry.h"

namespace nbla_native {

namespace rnn_detail {

// sigmoid(a) in the tanh form (no overflow for large |a|), as the generic kernel.
template <typename T>
NBLA_INLINE T sigmoid(T a) {
  return T(0.5) * fast_tanh(T(0.5) * a) + T(0.5);
}

// The loops below work on one row at a time in short passes over __restrict pointers,
// so that each vectorizes (one loop over ten possibly-aliasing pointers did not).

// a[j] = f(a[j]) in place: sigmoid or tanh.
template <typename T>
NBLA_INLINE void sigmoid_inplace(T *__restrict a, idx_t n) {
  for (idx_t j = 0; j < n; ++j) a[j] = sigmoid(a[j]);
}
template <typename T>
NBLA_INLINE void tanh_inplace(T *__restrict a, idx_t n) {
  for (idx_t j = 0; j < n; ++j) a[j] = fast_tanh(a[j]);
}

// a = x + r (a may be x: then only r is added).
template <typename T>
NBLA_INLINE void add_rows(const T *x, const T *__restrict r, T *a, idx_t n) {
  if (a != x) {
    T *__restrict out = a;
    const T *__restrict in = x;
    for (idx_t j = 0; j < n; ++j) out[j] = in[j] + r[j];
  } else {
    T *__restrict out = a;
    for (idx_t j = 0; j < n; ++j) out[j] += r[j];
  }
}

// dh = dh_rec + dh_out, either possibly null (then 0).
template <typename T>
NBLA_INLINE void sum_grads(const T *__restrict ho, const T *__restrict hr, T *__restrict dh,
                           idx_t n) {
  if (ho && hr) {
    for (idx_t j = 0; j < n; ++j) dh[j] = hr[j] + ho[j];
  } else if (ho || hr) {
    const T *__restrict one = ho ? ho : hr;
    for (idx_t j = 0; j < n; ++j) dh[j] = one[j];
  } else {
    for (idx_t j = 0; j < n; ++j) dh[j] = T(0);
  }
}

template <typename T>
NBLA_INLINE void lstm_cell(const T *__restrict si, const T *__restrict sf,
                           const T *__restrict tg, const T *__restrict so,
                           const T *__restrict cp, T *__restrict cn, T *__restrict hn,
                           T *__restrict tn, idx_t n) {
  for (idx_t j = 0; j < n; ++j) {
    const T cv = sf[j] * cp[j] + si[j] * tg[j];
    const T t = fast_tanh(cv);
    cn[j] = cv;
    tn[j] = t;
    hn[j] = so[j] * t;
  }
}

template <typename T>
NBLA_INLINE void lstm_cell_back(const T *__restrict dh, T *__restrict dc,
                                const T *__restrict si, const T *__restrict sf,
                                const T *__restrict tg, const T *__restrict so,
                                const T *__restrict cp, const T *__restrict tn,
                                T *__restrict di, T *__restrict df, T *__restrict dg,
                                T *__restrict dout, idx_t n) {
  for (idx_t j = 0; j < n; ++j) {
    const T t = tn[j], i = si[j], f = sf[j], g = tg[j], o = so[j];
    const T dct = dc[j] + dh[j] * o * (T(1) - t * t);
    di[j] = dct * g * i * (T(1) - i);
    df[j] = dct * cp[j] * f * (T(1) - f);
    dg[j] = dct * i * (T(1) - g * g);
    dout[j] = dh[j] * t * o * (T(1) - o);
    dc[j] = dct * f;
  }
}

// Rows [b0, b1) of one LSTM step: act = activations of gx + gh, then c, h, tc.
template <typename T>
NBLA_INLINE void lstm_forward_rows(const T *gx, const T *gh, const T *c_prev, T *act, T *c,
                                   T *h, T *tc, idx_t hidden, idx_t b0, idx_t b1) {
  const idx_t width = 4 * hidden;
  for (idx_t b = b0; b < b1; ++b) {
    T *a = act + b * width;
    add_rows(gx + b * width, gh + b * width, a, width);
    sigmoid_inplace(a, 2 * hidden);  // i, f
    tanh_inplace(a + 2 * hidden, hidden);
    sigmoid_inplace(a + 3 * hidden, hidden);
    const idx_t at = b * hidden;
    lstm_cell(a, a + hidden, a + 2 * hidden, a + 3 * hidden, c_prev + at, c + at, h + at,
              tc + at, hidden);
  }
}

// Rows [b0, b1) of the LSTM backward step: dh = dh_rec + dh_out (either may be null); dc
// holds the cell state's gradient from later steps and receives the one of c_prev.
// `scratch` holds `hidden` values.
template <typename T>
NBLA_INLINE void lstm_backward_rows(const T *dh_out, const T *dh_rec, T *dc, const T *act,
                                    const T *c_prev, const T *tc, T *da, T *scratch,
                                    idx_t hidden, idx_t b0, idx_t b1) {
  const idx_t width = 4 * hidden;
  for (idx_t b = b0; b < b1; ++b) {
    const idx_t at = b * hidden;
    sum_grads(dh_out ? dh_out + at : nullptr, dh_rec ? dh_rec + at : nullptr, scratch, hidden);
    const T *a = act + b * width;
    T *d = da + b * width;
    lstm_cell_back(scratch, dc + at, a, a + hidden, a + 2 * hidden, a + 3 * hidden,
                   c_prev + at, tc + at, d, d + hidden, d + 2 * hidden, d + 3 * hidden,
                   hidden);
  }
}

template <typename T>
NBLA_INLINE void gru_cell(T *__restrict r, const T *__restrict z, T *__restrict n,
                          const T *__restrict gn, const T *bhn, const T *__restrict hp,
                          T *__restrict hn_out, T *__restrict h, idx_t count) {
  // r, z already hold their sigmoids; n holds gx_n; gn is gh_n (bias not yet added)
  for (idx_t j = 0; j < count; ++j) {
    const T hn = bhn ? gn[j] + bhn[j] : gn[j];
    const T nv = fast_tanh(n[j] + r[j] * hn);
    n[j] = nv;
    hn_out[j] = hn;
    h[j] = (T(1) - z[j]) * nv + z[j] * hp[j];
  }
}

// Rows [b0, b1) of one GRU step: r = s(gx_r + gh_r), z = s(gx_z + gh_z),
// hn = gh_n + bhn (bhn may be null), n = tanh(gx_n + r hn), h = (1 - z) n + z h_prev.
template <typename T>
NBLA_INLINE void gru_forward_rows(const T *gx, const T *gh, const T *bhn, const T *h_prev,
                                  T *act, T *hn_out, T *h, idx_t hidden, idx_t b0, idx_t b1) {
  const idx_t width = 3 * hidden;
  for (idx_t b = b0; b < b1; ++b) {
    T *a = act + b * width;
    const T *x = gx + b * width, *g = gh + b * width;
    add_rows(x, g, a, 2 * hidden);
    if (a != x) std::copy(x + 2 * hidden, x + width, a + 2 * hidden);
    sigmoid_inplace(a, 2 * hidden);
    const idx_t at = b * hidden;
    gru_cell(a, a + hidden, a + 2 * hidden, g + 2 * hidden, bhn, h_prev + at, hn_out + at,
             h + at, hidden);
  }
}

template <typename T>
NBLA_INLINE void gru_cell_back(const T *__restrict dh, T *__restrict dd, const T *__restrict r,
                               const T *__restrict z, const T *__restrict n,
                               const T *__restrict hn, const T *__restrict hp,
                               T *__restrict xr, T *__restrict xz, T *__restrict xn,
                               T *__restrict gr, T *__restrict gz, T *__restrict gn,
                               idx_t count) {
  for (idx_t j = 0; j < count; ++j) {
    const T d = dh[j], rv = r[j], zv = z[j], nv = n[j];
    const T dn = d * (T(1) - zv) * (T(1) - nv * nv);
    const T dr = dn * hn[j] * rv * (T(1) - rv);
    const T dz = d * (hp[j] - nv) * zv * (T(1) - zv);
    xr[j] = dr;
    xz[j] = dz;
    xn[j] = dn;
    gr[j] = dr;
    gz[j] = dz;
    gn[j] = dn * rv;
    dd[j] = d * zv;
  }
}

// Rows [b0, b1) of the GRU backward step: dh = dh_direct + (dh_rec + dh_out) (rec and out
// may be null); writes dgx = (dr, dz, dn), dgh = (dr, dz, dn r) and dh_direct = dh z
// (the gradient of h_prev other than through gh). `scratch` holds `hidden` values.
template <typename T>
NBLA_INLINE void gru_backward_rows(const T *dh_out, const T *dh_rec, T *dh_direct,
                                   const T *act, const T *hn_in, const T *h_prev, T *dgx,
                                   T *dgh, T *scratch, idx_t hidden, idx_t b0, idx_t b1) {
  const idx_t width = 3 * hidden;
  for (idx_t b = b0; b < b1; ++b) {
    const idx_t at = b * hidden;
    sum_grads(dh_out ? dh_out + at : nullptr, dh_rec ? dh_rec + at : nullptr, scratch, hidden);
    {
      T *__restrict s = scratch;
      const T *__restrict d = dh_direct + at;
      for (idx_t j = 0; j < hidden; ++j) s[j] = d[j] + s[j];
    }
    const T *a = act + b * width;
    T *x = dgx + b * width, *g = dgh + b * width;
    gru_cell_back(scratch, dh_direct + at, a, a + hidden, a + 2 * hidden, hn_in + at,
                  h_prev + at, x, x + hidden, x + 2 * hidden, g, g + hidden, g + 2 * hidden,
                  hidden);
  }
}

// RNN forward over elements [i0, i1): h = tanh(gx + gh) or relu(gx + gh).
template <typename T>
NBLA_INLINE void rnn_forward_range(const T *__restrict gx, const T *__restrict gh,
                                   T *__restrict h, bool relu, idx_t i0, idx_t i1) {
  if (relu) {
    for (idx_t i = i0; i < i1; ++i) h[i] = std::max(gx[i] + gh[i], T(0));
  } else {
    for (idx_t i = i0; i < i1; ++i) h[i] = fast_tanh(gx[i] + gh[i]);
  }
}

// RNN backward over elements [i0, i1): da = (dh_rec + dh_out) f'(a), from h = f(a).
template <typename T>
NBLA_INLINE void rnn_backward_range(const T *dh_out, const T *dh_rec, const T *__restrict h,
                                    T *__restrict da, bool relu, idx_t i0, idx_t i1) {
  sum_grads(dh_out ? dh_out + i0 : nullptr, dh_rec ? dh_rec + i0 : nullptr, da + i0, i1 - i0);
  if (relu) {
    for (idx_t i = i0; i < i1; ++i) da[i] = h[i] > T(0) ? da[i] : T(0);
  } else {
    for (idx_t i = i0; i < i1; ++i) da[i] = da[i] * (T(1) - h[i] * h[i]);
  }
}

}  // namespace rnn_detail

// The entry points, float32 in vector clones (as activation.h), float64 plain. Each
// runs rows [b0, b1); the callers below split the batch over the pool.
#define NBLA_RNN_ENTRY(name, params, args)                                  \
  NBLA_VECTOR_CLONES static void name##_f32 params(float) {                 \
    rnn_detail::name args;                                                  \
  }                                                                         \
  static void name##_f64 params(double) { rnn_detail::name args; }

#define NBLA_LSTM_FWD_PARAMS(T)                                                        \
  (const T *gx, const T *gh, const T *c_prev, T *act, T *c, T *h, T *tc, idx_t hidden, \
   idx_t b0, idx_t b1)
#define NBLA_LSTM_BWD_PARAMS(T)                                                          \
  (const T *dh_out, const T *dh_rec, T *dc, const T *act, const T *c_prev, const T *tc, \
   T *da, T *scratch, idx_t hidden, idx_t b0, idx_t b1)
#define NBLA_GRU_FWD_PARAMS(T)                                                          \
  (const T *gx, const T *gh, const T *bhn, const T *h_prev, T *act, T *hn_out, T *h, \
   idx_t hidden, idx_t b0, idx_t b1)
#define NBLA_GRU_BWD_PARAMS(T)                                                         \
  (const T *dh_out, const T *dh_rec, T *dh_direct, const T *act, const T *hn_in,     \
   const T *h_prev, T *dgx, T *dgh, T *scratch, idx_t hidden, idx_t b0, idx_t b1)
#define NBLA_RNN_FWD_PARAMS(T) (const T *gx, const T *gh, T *h, bool relu, idx_t i0, idx_t i1)
#define NBLA_RNN_BWD_PARAMS(T) \
  (const T *dh_out, const T *dh_rec, const T *h, T *da, bool relu, idx_t i0, idx_t i1)

NBLA_RNN_ENTRY(lstm_forward_rows, NBLA_LSTM_FWD_PARAMS,
               (gx, gh, c_prev, act, c, h, tc, hidden, b0, b1))
NBLA_RNN_ENTRY(lstm_backward_rows, NBLA_LSTM_BWD_PARAMS,
               (dh_out, dh_rec, dc, act, c_prev, tc, da, scratch, hidden, b0, b1))
NBLA_RNN_ENTRY(gru_forward_rows, NBLA_GRU_FWD_PARAMS,
               (gx, gh, bhn, h_prev, act, hn_out, h, hidden, b0, b1))
NBLA_RNN_ENTRY(gru_backward_rows, NBLA_GRU_BWD_PARAMS,
               (dh_out, dh_rec, dh_direct, act, hn_in, h_prev, dgx, dgh, scratch, hidden, b0, b1))
NBLA_RNN_ENTRY(rnn_forward_range, NBLA_RNN_FWD_PARAMS, (gx, gh, h, relu, i0, i1))
NBLA_RNN_ENTRY(rnn_backward_range, NBLA_RNN_BWD_PARAMS, (dh_out, dh_rec, h, da, relu, i0, i1))

#undef NBLA_RNN_ENTRY

template <typename T>
void lstm_forward_step(const T *gx, const T *gh, const T *c_prev, T *act, T *c, T *h, T *tc,
                       idx_t batch, idx_t hidden) {
  parallel_range(batch, rows_parallel(batch, 4 * hidden),
                 [&](idx_t b0, idx_t b1) {
                   if constexpr (std::is_same_v<T, float>)
                     lstm_forward_rows_f32(gx, gh, c_prev, act, c, h, tc, hidden, b0, b1);
                   else
                     lstm_forward_rows_f64(gx, gh, c_prev, act, c, h, tc, hidden, b0, b1);
                 });
}

template <typename T>
void lstm_backward_step(const T *dh_out, const T *dh_rec, T *dc, const T *act,
                        const T *c_prev, const T *tc, T *da, idx_t batch, idx_t hidden) {
  parallel_range(batch, rows_parallel(batch, 4 * hidden),
                 [&](idx_t b0, idx_t b1) {
                   std::vector<T> scratch(hidden);
                   if constexpr (std::is_same_v<T, float>)
                     lstm_backward_rows_f32(dh_out, dh_rec, dc, act, c_prev, tc, da,
                                            scratch.data(), hidden, b0, b1);
                   else
                     lstm_backward_rows_f64(dh_out, dh_rec, dc, act, c_prev, tc, da,
                                            scratch.data(), hidden, b0, b1);
                 });
}

template <typename T>
void gru_forward_step(const T *gx, const T *gh, const T *bhn, const T *h_prev, T *act,
                      T *hn_out, T *h, idx_t batch, idx_t hidden) {
  parallel_range(batch, rows_parallel(batch, 3 * hidden),
                 [&](idx_t b0, idx_t b1) {
                   if constexpr (std::is_same_v<T, float>)
                     gru_forward_rows_f32(gx, gh, bhn, h_prev, act, hn_out, h, hidden, b0, b1);
                   else
                     gru_forward_rows_f64(gx, gh, bhn, h_prev, act, hn_out, h, hidden, b0, b1);
                 });
}

template <typename T>
void gru_backward_step(const T *dh_out, const T *dh_rec, T *dh_direct, const T *act,
                       const T *hn_in, const T *h_prev, T *dgx, T *dgh, idx_t batch,
                       idx_t hidden) {
  parallel_range(batch, rows_parallel(batch, 3 * hidden),
                 [&](idx_t b0, idx_t b1) {
                   std::vector<T> scratch(hidden);
                   if constexpr (std::is_same_v<T, float>)
                     gru_backward_rows_f32(dh_out, dh_rec, dh_direct, act, hn_in, h_prev, dgx,
                                           dgh, scratch.data(), hidden, b0, b1);
                   else
                     gru_backward_rows_f64(dh_out, dh_rec, dh_direct, act, hn_in, h_prev, dgx,
                                           dgh, scratch.data(), hidden, b0, b1);
                 });
}

template <typename T>
void rnn_forward_step(const T *gx, const T *gh, T *h, bool relu, idx_t n) {
  for_chunks(n, [&](idx_t at, idx_t count) {
    if constexpr (std::is_same_v<T, float>)
      rnn_forward_range_f32(gx, gh, h, relu, at, at + count);
    else
      rnn_forward_range_f64(gx, gh, h, relu, at, at + count);
  });
}

template <typename T>
void rnn_backward_step(const T *dh_out, const T *dh_rec, const T *h, T *da, bool relu,
                       idx_t n) {
  for_chunks(n, [&](idx_t at, idx_t count) {
    if constexpr (std::is_same_v<T, float>)
      rnn_backward_range_f32(dh_out, dh_rec, h, da, relu, at, at + count);
    else
      rnn_backward_range_f64(dh_out, dh_rec, h, da, relu, at, at + count);
  });
}

}  // namespace nbla_native
