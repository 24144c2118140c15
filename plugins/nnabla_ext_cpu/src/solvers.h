// Fused solver updates: one pass over p, g and the state arrays per parameter.
//
// The numpy rules of nnabla_ext/cpu/solvers.py make several full-size temporaries and
// about ten passes over memory per Adam update; these loops read each element once. The
// results are bit-identical to the numpy rules: every loop performs the same float32
// operations in the same order (the comments give the numpy expression), with the scalar
// factors rounded to float32 by the caller exactly where the Python code rounds them.
// Hence no FMA contraction and no reassociation (solvers.cpp, compiled with
// -ffp-contract=off); float division and sqrt are correctly rounded, as numpy's.
#pragma once

#include <string>

#include "geometry.h"

namespace nbla_native {
namespace solver {

// The arrays of one update: the parameter, its gradient and up to three states, each of
// n elements, none overlapping another (the binding checks it); states beyond the
// rule's are null.
struct Arrays {
  float *p;
  const float *g;
  float *s[3];
};

// The scalars, in the order the binding receives them from solvers.py.
struct Scalars {
  float k[8];
};

// One fused rule: its nnabla solver type name, how many states and scalars it takes.
struct RuleInfo {
  const char *name;
  int states, scalars;
};

constexpr RuleInfo kRules[] = {
    {"Sgd", 0, 1},      {"Momentum", 1, 2}, {"Nesterov", 1, 4}, {"SgdW", 1, 3},
    {"Adagrad", 1, 2},  {"RMSprop", 1, 4},  {"Adam", 2, 6},     {"AdamW", 2, 7},
    {"Adamax", 2, 5},   {"AMSGRAD", 3, 6},  {"Adadelta", 2, 4}, {"RMSpropGraves", 3, 5},
    {"AdaBound", 2, 8}, {"AMSBound", 3, 8}, {"Lion", 1, 4},
    // not a solver: x = x + y * k over (p, g) = (x, y), the non-fused weight decay
    // (g += p * rate, called with the gradient as p and the parameter as g)
    {"AddScaled", 0, 1},
};

// The index of `name` in kRules, or -1.
inline int find_rule(const std::string &name) {
  for (int r = 0; r < static_cast<int>(sizeof kRules / sizeof kRules[0]); ++r)
    if (name == kRules[r].name) return r;
  return -1;
}

// Runs rule `r` (an index of kRules) over n elements, in chunks on the native threads
// (without the GIL: the caller releases it).
void update(int r, const Arrays &a, const Scalars &c, idx_t n);

}  // namespace solver
}  // namespace nbla_native
