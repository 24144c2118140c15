// pybind11 entry points of the recurrent cell steps (recurrent.h) and of the row-wise
// layer normalization (normalization.h); included by native.cpp, which calls
// bind_rnn_norm<T> for float and double.
//
// A step writes into arrays the caller owns (slices of its per-sequence buffers), so the
// outputs are taken as they are: C-contiguous arrays of the input's dtype with the
// expected number of elements, else a TypeError/ValueError (never a silent copy). Inputs
// may be any array (converted when needed); optional ones are None.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "normalization.h"
#include "recurrent.h"

namespace nbla_native {
namespace bind_detail {

namespace py = pybind11;

template <typename T>
using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

inline std::string where(const char *fn, const char *name) {
  return std::string("nnabla_ext.cpu._native.") + fn + ": argument '" + name + "'";
}

inline void check_count(idx_t given, idx_t expected, const char *fn, const char *name) {
  if (given != expected)
    throw py::value_error(where(fn, name) + " has " + std::to_string(given) +
                          " elements; expected " + std::to_string(expected));
}

// The data of an output array (no copy: refused unless C-contiguous, writable, of T).
template <typename T>
T *out(const py::array &a, idx_t size, const char *fn, const char *name) {
  if (!py::isinstance<py::array_t<T, py::array::c_style>>(a))
    throw py::type_error(where(fn, name) + " must be a C-contiguous array of " +
                         (sizeof(T) == 4 ? "float32" : "float64"));
  if (!a.writeable()) throw py::value_error(where(fn, name) + " is read-only");
  check_count(a.size(), size, fn, name);
  return static_cast<T *>(const_cast<void *>(a.data()));
}

// An input's data, converted into `keep` when needed (keep holds it alive).
template <typename T>
const T *in(const Arr<T> &a, idx_t size, const char *fn, const char *name) {
  check_count(a.size(), size, fn, name);
  return a.data();
}

// An optional input: nullptr for None.
template <typename T>
const T *optional(const py::object &o, Arr<T> &keep, idx_t size, const char *fn,
                  const char *name) {
  if (o.is_none()) return nullptr;
  keep = Arr<T>::ensure(o);
  if (!keep) throw py::error_already_set();
  return in<T>(keep, size, fn, name);
}

inline void check_dims(idx_t batch, idx_t hidden, const char *fn) {
  if (batch < 0 || hidden < 0)
    throw py::value_error(std::string("nnabla_ext.cpu._native.") + fn +
                          ": batch and hidden must be >= 0");
}

template <typename T>
void py_lstm_forward(Arr<T> gx, Arr<T> gh, Arr<T> c_prev, py::array act, py::array c,
                  py::array h, py::array tc, idx_t batch, idx_t hidden) {
  const char *fn = "lstm_forward_step";
  check_dims(batch, hidden, fn);
  const idx_t wide = batch * 4 * hidden, narrow = batch * hidden;
  const T *pgx = in<T>(gx, wide, fn, "gx"), *pgh = in<T>(gh, wide, fn, "gh");
  const T *pcp = in<T>(c_prev, narrow, fn, "c_prev");
  T *pa = out<T>(act, wide, fn, "act"), *pc = out<T>(c, narrow, fn, "c");
  T *ph = out<T>(h, narrow, fn, "h"), *pt = out<T>(tc, narrow, fn, "tc");
  py::gil_scoped_release release;
  lstm_forward_step(pgx, pgh, pcp, pa, pc, ph, pt, batch, hidden);
}

template <typename T>
void py_lstm_backward(const py::object &dh_out, const py::object &dh_rec, py::array dc,
                   Arr<T> act, Arr<T> c_prev, Arr<T> tc, py::array da, idx_t batch,
                   idx_t hidden) {
  const char *fn = "lstm_backward_step";
  check_dims(batch, hidden, fn);
  const idx_t wide = batch * 4 * hidden, narrow = batch * hidden;
  Arr<T> k1, k2;
  const T *po = optional<T>(dh_out, k1, narrow, fn, "dh_out");
  const T *pr = optional<T>(dh_rec, k2, narrow, fn, "dh_rec");
  T *pdc = out<T>(dc, narrow, fn, "dc");
  const T *pa = in<T>(act, wide, fn, "act"), *pcp = in<T>(c_prev, narrow, fn, "c_prev");
  const T *pt = in<T>(tc, narrow, fn, "tc");
  T *pda = out<T>(da, wide, fn, "da");
  py::gil_scoped_release release;
  lstm_backward_step(po, pr, pdc, pa, pcp, pt, pda, batch, hidden);
}

template <typename T>
void py_gru_forward(Arr<T> gx, Arr<T> gh, const py::object &bhn, Arr<T> h_prev, py::array act,
                 py::array hn, py::array h, idx_t batch, idx_t hidden) {
  const char *fn = "gru_forward_step";
  check_dims(batch, hidden, fn);
  const idx_t wide = batch * 3 * hidden, narrow = batch * hidden;
  Arr<T> k;
  const T *pgx = in<T>(gx, wide, fn, "gx"), *pgh = in<T>(gh, wide, fn, "gh");
  const T *pb = optional<T>(bhn, k, hidden, fn, "bhn");
  const T *php = in<T>(h_prev, narrow, fn, "h_prev");
  T *pa = out<T>(act, wide, fn, "act"), *phn = out<T>(hn, narrow, fn, "hn");
  T *ph = out<T>(h, narrow, fn, "h");
  py::gil_scoped_release release;
  gru_forward_step(pgx, pgh, pb, php, pa, phn, ph, batch, hidden);
}

template <typename T>
void py_gru_backward(const py::object &dh_out, const py::object &dh_rec, py::array dh_direct,
                  Arr<T> act, Arr<T> hn, Arr<T> h_prev, py::array dgx, py::array dgh,
                  idx_t batch, idx_t hidden) {
  const char *fn = "gru_backward_step";
  check_dims(batch, hidden, fn);
  const idx_t wide = batch * 3 * hidden, narrow = batch * hidden;
  Arr<T> k1, k2;
  const T *po = optional<T>(dh_out, k1, narrow, fn, "dh_out");
  const T *pr = optional<T>(dh_rec, k2, narrow, fn, "dh_rec");
  T *pd = out<T>(dh_direct, narrow, fn, "dh_direct");
  const T *pa = in<T>(act, wide, fn, "act"), *phn = in<T>(hn, narrow, fn, "hn");
  const T *php = in<T>(h_prev, narrow, fn, "h_prev");
  T *px = out<T>(dgx, wide, fn, "dgx"), *pg = out<T>(dgh, wide, fn, "dgh");
  py::gil_scoped_release release;
  gru_backward_step(po, pr, pd, pa, phn, php, px, pg, batch, hidden);
}

template <typename T>
void py_rnn_forward(Arr<T> gx, Arr<T> gh, py::array h, bool relu) {
  const char *fn = "rnn_forward_step";
  const idx_t n = gx.size();
  const T *pgx = gx.data(), *pgh = in<T>(gh, n, fn, "gh");
  T *ph = out<T>(h, n, fn, "h");
  py::gil_scoped_release release;
  rnn_forward_step(pgx, pgh, ph, relu, n);
}

template <typename T>
void py_rnn_backward(const py::object &dh_out, const py::object &dh_rec, Arr<T> h, py::array da,
                  bool relu) {
  const char *fn = "rnn_backward_step";
  const idx_t n = h.size();
  Arr<T> k1, k2;
  const T *po = optional<T>(dh_out, k1, n, fn, "dh_out");
  const T *pr = optional<T>(dh_rec, k2, n, fn, "dh_rec");
  T *pda = out<T>(da, n, fn, "da");
  const T *ph = h.data();
  py::gil_scoped_release release;
  rnn_backward_step(po, pr, ph, pda, relu, n);
}

// Layer normalization of x viewed as (rows, features): (y, mean, var, inv_std).
template <typename T>
py::tuple py_row_norm_forward(Arr<T> x, const py::object &gamma, const py::object &beta,
                           idx_t rows, idx_t features, double eps) {
  const char *fn = "row_norm_forward";
  check_dims(rows, features, fn);
  const T *px = in<T>(x, rows * features, fn, "x");
  Arr<T> kg, kb;
  const T *pg = optional<T>(gamma, kg, features, fn, "gamma");
  const T *pb = optional<T>(beta, kb, features, fn, "beta");
  py::array_t<T> y(rows * features), mean(rows), var(rows), inv_std(rows);
  T *py_ = y.mutable_data(), *pm = mean.mutable_data(), *pv = var.mutable_data();
  T *pi = inv_std.mutable_data();
  {
    py::gil_scoped_release release;
    nbla_native::row_norm_forward(px, pg, pb, py_, pm, pv, pi, rows, features, T(eps));
  }
  return py::make_tuple(y, mean, var, inv_std);
}

// dx of the layer normalization (None unless want_dx), and (d beta, d gamma) column sums
// (None unless asked for).
template <typename T>
py::tuple py_row_norm_backward(Arr<T> x, Arr<T> dy, Arr<T> mean, Arr<T> inv_std,
                            const py::object &gamma, const py::object &dmean,
                            const py::object &dvar, idx_t rows, idx_t features, bool want_dx,
                            bool want_dbeta, bool want_dgamma) {
  const char *fn = "row_norm_backward";
  check_dims(rows, features, fn);
  const idx_t n = rows * features;
  const T *px = in<T>(x, n, fn, "x"), *pdy = in<T>(dy, n, fn, "dy");
  const T *pm = in<T>(mean, rows, fn, "mean"), *pi = in<T>(inv_std, rows, fn, "inv_std");
  Arr<T> kg, km, kv;
  const T *pg = optional<T>(gamma, kg, features, fn, "gamma");
  const T *pdm = optional<T>(dmean, km, rows, fn, "dmean");
  const T *pdv = optional<T>(dvar, kv, rows, fn, "dvar");
  py::object dx = py::none(), dbeta = py::none(), dgamma = py::none();
  T *pdx = nullptr, *pdb = nullptr, *pdg = nullptr;
  if (want_dx) {
    py::array_t<T> a(n);
    pdx = a.mutable_data();
    dx = a;
  }
  if (want_dbeta) {
    py::array_t<T> a(features);
    pdb = a.mutable_data();
    dbeta = a;
  }
  if (want_dgamma) {
    py::array_t<T> a(features);
    pdg = a.mutable_data();
    dgamma = a;
  }
  {
    py::gil_scoped_release release;
    nbla_native::row_norm_backward(px, pdy, pm, pi, pg, pdm, pdv, pdx, pdb, pdg, rows, features);
  }
  return py::make_tuple(dx, dbeta, dgamma);
}

}  // namespace bind_detail

template <typename T>
void bind_rnn_norm(pybind11::module_ &m) {
  namespace py = pybind11;
  using namespace pybind11::literals;
  using namespace bind_detail;
  m.def("lstm_forward_step", &py_lstm_forward<T>, "gx"_a, "gh"_a, "c_prev"_a, "act"_a, "c"_a,
        "h"_a, "tc"_a, "batch"_a, "hidden"_a,
        "One LSTM step from the projections gx, gh (batch, 4 hidden; gates i, f, g, o): "
        "writes the gates' activations to act (may be gx), c, h = s(o) tanh(c) and "
        "tc = tanh(c).");
  m.def("lstm_backward_step", &py_lstm_backward<T>, "dh_out"_a, "dh_rec"_a, "dc"_a, "act"_a,
        "c_prev"_a, "tc"_a, "da"_a, "batch"_a, "hidden"_a,
        "Backward of lstm_forward_step with dh = dh_rec + dh_out (None: zero): writes the "
        "pre-activation gradient da and replaces dc by the gradient of c_prev.");
  m.def("gru_forward_step", &py_gru_forward<T>, "gx"_a, "gh"_a, "bhn"_a, "h_prev"_a, "act"_a,
        "hn"_a, "h"_a, "batch"_a, "hidden"_a,
        "One GRU step (gates r, z, n): writes act = (r, z, n), hn = gh_n + bhn and "
        "h = (1 - z) n + z h_prev.");
  m.def("gru_backward_step", &py_gru_backward<T>, "dh_out"_a, "dh_rec"_a, "dh_direct"_a, "act"_a,
        "hn"_a, "h_prev"_a, "dgx"_a, "dgh"_a, "batch"_a, "hidden"_a,
        "Backward of gru_forward_step with dh = dh_direct + (dh_rec + dh_out): writes dgx, "
        "dgh and replaces dh_direct by dh z.");
  m.def("rnn_forward_step", &py_rnn_forward<T>, "gx"_a, "gh"_a, "h"_a, "relu"_a,
        "h = tanh(gx + gh), or relu with relu=True.");
  m.def("rnn_backward_step", &py_rnn_backward<T>, "dh_out"_a, "dh_rec"_a, "h"_a, "da"_a,
        "relu"_a, "da = (dh_rec + dh_out) f'(a) from h = f(a).");
  m.def("row_norm_forward", &py_row_norm_forward<T>, "x"_a, "gamma"_a, "beta"_a, "rows"_a,
        "features"_a, "eps"_a,
        "Layer normalization of x (rows, features) with per-feature gamma, beta (or None): "
        "(y, mean, biased var, 1 / sqrt(var + eps)).");
  m.def("row_norm_backward", &py_row_norm_backward<T>, "x"_a, "dy"_a, "mean"_a, "inv_std"_a,
        "gamma"_a, "dmean"_a, "dvar"_a, "rows"_a, "features"_a, "want_dx"_a, "want_dbeta"_a,
        "want_dgamma"_a,
        "(dx, d beta, d gamma) of row_norm_forward; dmean/dvar are the gradients of its "
        "mean and var outputs (or None); unwanted results are None.");
}

}  // namespace nbla_native
