// The fused solver loops declared in solvers.h.
//
// Built with -ffp-contract=off -fno-math-errno (CMakeLists.txt). The pragma below keeps
// FMA contraction off even where that flag is missing: contracting m * b1 + c * g into an
// FMA (GCC's default for GNU C++ in the x86-64-v3 clone) would change the float32 results.
// -fno-math-errno only lets sqrt vectorize (a pragma cannot set it); results are the same.
#include "solvers.h"

#include <cmath>

#include "activation.h"

namespace nbla_native {
namespace solver {

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#elif defined(__clang__)
#pragma clang fp contract(off)
#endif

// p = p - g * lr                                     k: lr
NBLA_VECTOR_CLONES static void sgd(float *__restrict p, const float *__restrict g,
                                   const Scalars &c, idx_t n) {
  const float lr = c.k[0];
  for (idx_t i = 0; i < n; ++i) p[i] = p[i] - g[i] * lr;
}

// m = momentum * m + lr * g; p = p - m                k: momentum, lr
NBLA_VECTOR_CLONES static void momentum(float *__restrict p, const float *__restrict g,
                                        float *__restrict m, const Scalars &c, idx_t n) {
  const float mom = c.k[0], lr = c.k[1];
  for (idx_t i = 0; i < n; ++i) {
    const float mi = mom * m[i] + lr * g[i];
    m[i] = mi;
    p[i] = p[i] - mi;
  }
}

// m' = momentum * m - lr * g; p = p + (-momentum * m + (1 + momentum) * m')
//                                                    k: momentum, lr, -momentum, 1 + momentum
NBLA_VECTOR_CLONES static void nesterov(float *__restrict p, const float *__restrict g,
                                        float *__restrict m, const Scalars &c, idx_t n) {
  const float mom = c.k[0], lr = c.k[1], neg_mom = c.k[2], one_plus_mom = c.k[3];
  for (idx_t i = 0; i < n; ++i) {
    const float prev = m[i];
    const float mi = mom * prev - lr * g[i];
    m[i] = mi;
    p[i] = p[i] + (neg_mom * prev + one_plus_mom * mi);
  }
}

// m = momentum * m + lr * g; p = p - m - decay * p     k: momentum, lr, decay
NBLA_VECTOR_CLONES static void sgdw(float *__restrict p, const float *__restrict g,
                                    float *__restrict m, const Scalars &c, idx_t n) {
  const float mom = c.k[0], lr = c.k[1], decay = c.k[2];
  for (idx_t i = 0; i < n; ++i) {
    const float mi = mom * m[i] + lr * g[i];
    m[i] = mi;
    const float pi = p[i];
    p[i] = (pi - mi) - decay * pi;
  }
}

// v = v + g * g; p = p - lr * g / (sqrt(v) + eps)       k: lr, eps
NBLA_VECTOR_CLONES static void adagrad(float *__restrict p, const float *__restrict g,
                                       float *__restrict v, const Scalars &c, idx_t n) {
  const float lr = c.k[0], eps = c.k[1];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float vi = v[i] + gi * gi;
    v[i] = vi;
    p[i] = p[i] - (lr * gi) / (__builtin_sqrtf(vi) + eps);
  }
}

// v = v * decay + g * g * (1 - decay); p = p - lr / (sqrt(v) + eps) * g
//                                                    k: decay, 1 - decay, lr, eps
NBLA_VECTOR_CLONES static void rmsprop(float *__restrict p, const float *__restrict g,
                                       float *__restrict v, const Scalars &c, idx_t n) {
  const float decay = c.k[0], one_minus_decay = c.k[1], lr = c.k[2], eps = c.k[3];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float vi = v[i] * decay + (gi * gi) * one_minus_decay;
    v[i] = vi;
    p[i] = p[i] - (lr / (__builtin_sqrtf(vi) + eps)) * gi;
  }
}

// Adam's moments (solvers._moments), in place; k: beta1, 1 - beta1, beta2, 1 - beta2, ...
// m = m * beta1 + (1 - beta1) * g; v = v * beta2 + (1 - beta2) * g * g
NBLA_INLINE void adam_moments(float gi, float &m, float &v, const Scalars &c) {
  m = m * c.k[0] + c.k[1] * gi;
  v = v * c.k[2] + (c.k[3] * gi) * gi;
}

// alpha_t * m / (sqrt(v) + eps), Adam's step on the moments; k[4], k[5]: alpha_t, eps
NBLA_INLINE float adam_direction(float m, float v, const Scalars &c) {
  return (c.k[4] * m) / (__builtin_sqrtf(v) + c.k[5]);
}

// Updates the moments; returns Adam's step.
NBLA_INLINE float adam_step(float gi, float &m, float &v, const Scalars &c) {
  adam_moments(gi, m, v, c);
  return adam_direction(m, v, c);
}

// p = p - step                                       k: beta1, 1 - beta1, beta2, 1 - beta2,
//                                                       alpha_t, eps
NBLA_VECTOR_CLONES static void adam(float *__restrict p, const float *__restrict g,
                                    float *__restrict m, float *__restrict v, const Scalars &c,
                                    idx_t n) {
  for (idx_t i = 0; i < n; ++i) p[i] = p[i] - adam_step(g[i], m[i], v[i], c);
}

// p = p - step - eta_t * wd * p                      k: as adam, then eta_t * wd
NBLA_VECTOR_CLONES static void adamw(float *__restrict p, const float *__restrict g,
                                     float *__restrict m, float *__restrict v,
                                     const Scalars &c, idx_t n) {
  const float decay = c.k[6];
  for (idx_t i = 0; i < n; ++i) {
    const float pi = p[i];
    p[i] = (pi - adam_step(g[i], m[i], v[i], c)) - decay * pi;
  }
}

// numpy's maximum: a if a > b or a is NaN, else b (NaN when either is NaN; b when both are
// zeros, whatever their signs, as numpy's float32 loops).
NBLA_INLINE float maximum(float a, float b) { return (a > b || a != a) ? a : b; }

// m = beta1 * m + (1 - beta1) * g; u = max(beta2 * u, |g|); p = p - alpha_t * m / (u + eps)
//                                                    k: beta1, 1 - beta1, beta2, alpha_t, eps
NBLA_VECTOR_CLONES static void adamax(float *__restrict p, const float *__restrict g,
                                      float *__restrict m, float *__restrict u,
                                      const Scalars &c, idx_t n) {
  const float b1 = c.k[0], one_minus_b1 = c.k[1], b2 = c.k[2], alpha_t = c.k[3], eps = c.k[4];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = b1 * m[i] + one_minus_b1 * gi;
    const float ui = maximum(b2 * u[i], std::fabs(gi));
    m[i] = mi;
    u[i] = ui;
    p[i] = p[i] - (alpha_t * mi) / (ui + eps);
  }
}

// Adam's moments; v_hat = max(v_hat, v); p = p - alpha_t * m / (sqrt(v_hat) + eps)
//                                                    k: as adam (alpha_t: corrected or not)
NBLA_VECTOR_CLONES static void amsgrad(float *__restrict p, const float *__restrict g,
                                       float *__restrict m, float *__restrict v,
                                       float *__restrict v_hat, const Scalars &c, idx_t n) {
  for (idx_t i = 0; i < n; ++i) {
    adam_moments(g[i], m[i], v[i], c);
    const float hi = maximum(v_hat[i], v[i]);
    v_hat[i] = hi;
    p[i] = p[i] - adam_direction(m[i], hi, c);
  }
}

// numpy's minimum: a if a < b or a is NaN, else b (as maximum above).
NBLA_INLINE float minimum(float a, float b) { return (a < b || a != a) ? a : b; }

// e_g = e_g * decay + g * g * (1 - decay); delta = sqrt((e_d + eps) / (e_g + eps)) * g;
// e_d = e_d * decay + delta * delta * (1 - decay); p = p - lr * delta
//                                                    k: decay, 1 - decay, eps, lr
NBLA_VECTOR_CLONES static void adadelta(float *__restrict p, const float *__restrict g,
                                        float *__restrict e_g, float *__restrict e_d,
                                        const Scalars &c, idx_t n) {
  const float decay = c.k[0], one_minus_decay = c.k[1], eps = c.k[2], lr = c.k[3];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float egi = e_g[i] * decay + (gi * gi) * one_minus_decay;
    const float delta = __builtin_sqrtf((e_d[i] + eps) / (egi + eps)) * gi;
    e_g[i] = egi;
    e_d[i] = e_d[i] * decay + (delta * delta) * one_minus_decay;
    p[i] = p[i] - lr * delta;
  }
}

// n = decay * n + (1 - decay) * g * g; gbar = decay * gbar + (1 - decay) * g;
// d = momentum * d - lr * g / sqrt(n - gbar * gbar + eps); p = p + d
//                                                    k: decay, 1 - decay, momentum, lr, eps
NBLA_VECTOR_CLONES static void rmsprop_graves(float *__restrict p, const float *__restrict g,
                                              float *__restrict n_, float *__restrict gbar,
                                              float *__restrict d, const Scalars &c,
                                              idx_t n) {
  const float decay = c.k[0], one_minus_decay = c.k[1], mom = c.k[2], lr = c.k[3],
              eps = c.k[4];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float ni = decay * n_[i] + (one_minus_decay * gi) * gi;
    const float gbi = decay * gbar[i] + one_minus_decay * gi;
    const float di = mom * d[i] - (lr * gi) / __builtin_sqrtf((ni - gbi * gbi) + eps);
    n_[i] = ni;
    gbar[i] = gbi;
    d[i] = di;
    p[i] = p[i] + di;
  }
}

// eta = min(upper, max(alpha_t / (sqrt(v) + eps), lower)); returns p - eta * m
NBLA_INLINE float bounded_step(float p, float m, float v, float alpha_t, float eps,
                               float lower, float upper) {
  const float eta = minimum(upper, maximum(alpha_t / (__builtin_sqrtf(v) + eps), lower));
  return p - eta * m;
}

// Adam's moments, then the bounded step on v          k: as adam, then lower, upper
NBLA_VECTOR_CLONES static void adabound(float *__restrict p, const float *__restrict g,
                                        float *__restrict m, float *__restrict v,
                                        const Scalars &c, idx_t n) {
  const float alpha_t = c.k[4], eps = c.k[5], lower = c.k[6], upper = c.k[7];
  for (idx_t i = 0; i < n; ++i) {
    adam_moments(g[i], m[i], v[i], c);
    p[i] = bounded_step(p[i], m[i], v[i], alpha_t, eps, lower, upper);
  }
}

// Adam's moments, v_hat = max(v_hat, v), then the bounded step on v_hat
//                                                    k: as adabound
NBLA_VECTOR_CLONES static void amsbound(float *__restrict p, const float *__restrict g,
                                        float *__restrict m, float *__restrict v,
                                        float *__restrict v_hat, const Scalars &c, idx_t n) {
  const float alpha_t = c.k[4], eps = c.k[5], lower = c.k[6], upper = c.k[7];
  for (idx_t i = 0; i < n; ++i) {
    adam_moments(g[i], m[i], v[i], c);
    const float hi = maximum(v_hat[i], v[i]);
    v_hat[i] = hi;
    p[i] = bounded_step(p[i], m[i], hi, alpha_t, eps, lower, upper);
  }
}

// u = sign(g + beta1 * (m - g)); m = g + beta2 * (m - g); p = p - lr * (u + wd * p)
// (numpy's sign: +0 for zeros of either sign, NaN stays)   k: beta1, beta2, lr, wd
NBLA_VECTOR_CLONES static void lion(float *__restrict p, const float *__restrict g,
                                    float *__restrict m, const Scalars &c, idx_t n) {
  const float b1 = c.k[0], b2 = c.k[1], lr = c.k[2], wd = c.k[3];
  for (idx_t i = 0; i < n; ++i) {
    const float gi = g[i], mi = m[i];
    const float x = gi + b1 * (mi - gi);
    const float u = x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : (x == 0.0f ? 0.0f : x));
    m[i] = gi + b2 * (mi - gi);
    const float pi = p[i];
    p[i] = pi - lr * (u + wd * pi);
  }
}

// x = x + y * k                                      k: k (the weight decay g += p * rate)
NBLA_VECTOR_CLONES static void add_scaled(float *__restrict x, const float *__restrict y,
                                          const Scalars &c, idx_t n) {
  const float k = c.k[0];
  for (idx_t i = 0; i < n; ++i) x[i] = x[i] + y[i] * k;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

void update(int r, const Arrays &a, const Scalars &c, idx_t n) {
  for_chunks(n, [&](idx_t at, idx_t len) {
    float *p = a.p + at;
    const float *g = a.g + at;
    float *s0 = a.s[0] ? a.s[0] + at : nullptr, *s1 = a.s[1] ? a.s[1] + at : nullptr,
          *s2 = a.s[2] ? a.s[2] + at : nullptr;
    switch (r) {
      case 0: sgd(p, g, c, len); break;
      case 1: momentum(p, g, s0, c, len); break;
      case 2: nesterov(p, g, s0, c, len); break;
      case 3: sgdw(p, g, s0, c, len); break;
      case 4: adagrad(p, g, s0, c, len); break;
      case 5: rmsprop(p, g, s0, c, len); break;
      case 6: adam(p, g, s0, s1, c, len); break;
      case 7: adamw(p, g, s0, s1, c, len); break;
      case 8: adamax(p, g, s0, s1, c, len); break;
      case 9: amsgrad(p, g, s0, s1, s2, c, len); break;
      case 10: adadelta(p, g, s0, s1, c, len); break;
      case 11: rmsprop_graves(p, g, s0, s1, s2, c, len); break;
      case 12: adabound(p, g, s0, s1, c, len); break;
      case 13: amsbound(p, g, s0, s1, s2, c, len); break;
      case 14: lion(p, g, s0, c, len); break;
      case 15: add_scaled(p, g, c, len); break;
      default: break;
    }
  });
}

}  // namespace solver
}  // namespace nbla_native
