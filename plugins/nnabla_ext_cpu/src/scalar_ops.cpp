// x + v and x * v for the scalar kernels' forward_ufunc (AddScalar, MulScalar): a small
// float32 array costs numpy's ufunc machinery more than its loop, so these take a
// C-contiguous, aligned float32 ndarray and a 0-d float32 ndarray and run the loop here;
// any other operands go to numpy's own ufunc (np.add, np.multiply), which these match bit
// for bit (one IEEE operation per element, x first). A loop that raises a floating-point
// flag (overflow, invalid, division by zero, underflow) is done again by numpy, so its
// warnings and np.errstate behave as they do for any ufunc.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include <cfenv>

#include "scalar_ops.h"

namespace nbla_native::scalar {
namespace {

// Past this many elements numpy's SIMD loops win over the call overhead saved here.
constexpr npy_intp kMaxElements = npy_intp(1) << 14;

PyObject *np_add = nullptr, *np_multiply = nullptr;

bool qualifies(PyObject *x, PyObject *v) {
  if (!PyArray_CheckExact(x) || !PyArray_CheckExact(v)) return false;
  auto *a = reinterpret_cast<PyArrayObject *>(x);
  auto *s = reinterpret_cast<PyArrayObject *>(v);
  return PyArray_TYPE(a) == NPY_FLOAT32 && PyArray_ISNOTSWAPPED(a) && PyArray_ISALIGNED(a) &&
         PyArray_IS_C_CONTIGUOUS(a) && PyArray_SIZE(a) <= kMaxElements &&
         PyArray_NDIM(s) == 0 && PyArray_TYPE(s) == NPY_FLOAT32 && PyArray_ISNOTSWAPPED(s) &&
         PyArray_ISALIGNED(s);
}

template <typename Op>
PyObject *apply(PyObject *ufunc, const char *name, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "%s(x, v) takes 2 arguments (%zd given)", name, nargs);
    return nullptr;
  }
  if (!qualifies(args[0], args[1])) return PyObject_Vectorcall(ufunc, args, 2, nullptr);
  auto *a = reinterpret_cast<PyArrayObject *>(args[0]);
  PyObject *out = PyArray_SimpleNew(PyArray_NDIM(a), PyArray_DIMS(a), NPY_FLOAT32);
  if (!out) return nullptr;
  const float *x = static_cast<const float *>(PyArray_DATA(a));
  const float v = *static_cast<const float *>(PyArray_DATA(reinterpret_cast<PyArrayObject *>(args[1])));
  float *y = static_cast<float *>(PyArray_DATA(reinterpret_cast<PyArrayObject *>(out)));
  const npy_intp n = PyArray_SIZE(a);
  std::feclearexcept(FE_ALL_EXCEPT);
  for (npy_intp i = 0; i < n; ++i) y[i] = Op()(x[i], v);
  if (std::fetestexcept(FE_OVERFLOW | FE_INVALID | FE_DIVBYZERO | FE_UNDERFLOW)) {
    Py_DECREF(out);
    return PyObject_Vectorcall(ufunc, args, 2, nullptr);
  }
  return PyArray_Return(reinterpret_cast<PyArrayObject *>(out));  // 0-d: a scalar, as numpy
}

struct Add {
  float operator()(float a, float b) const { return a + b; }
};
struct Multiply {
  float operator()(float a, float b) const { return a * b; }
};

PyObject *scalar_add(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return apply<Add>(np_add, "scalar_add", args, nargs);
}

PyObject *scalar_multiply(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  return apply<Multiply>(np_multiply, "scalar_multiply", args, nargs);
}

PyMethodDef methods[] = {
    {"scalar_add", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(scalar_add)),
     METH_FASTCALL, "scalar_add(x, v): numpy.add(x, v), with a native loop for a small "
                    "C-contiguous float32 x and a 0-d float32 v."},
    {"scalar_multiply",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(scalar_multiply)),
     METH_FASTCALL, "scalar_multiply(x, v): numpy.multiply(x, v), with a native loop for a "
                    "small C-contiguous float32 x and a 0-d float32 v."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

bool add_functions(PyObject *module) {
  if (_import_array() < 0) return false;
  PyObject *numpy = PyImport_ImportModule("numpy");
  if (!numpy) return false;
  np_add = PyObject_GetAttrString(numpy, "add");
  np_multiply = np_add ? PyObject_GetAttrString(numpy, "multiply") : nullptr;
  Py_DECREF(numpy);
  if (!np_multiply) return false;
  return PyModule_AddFunctions(module, methods) == 0;
}

}  // namespace nbla_native::scalar
