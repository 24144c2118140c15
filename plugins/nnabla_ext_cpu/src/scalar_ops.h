// scalar_add and scalar_multiply (scalar_ops.cpp): numpy.add / numpy.multiply of an array
// and a 0-d array, with a native loop for small float32 arrays (the scalar kernels'
// forward_ufunc).
#pragma once

#include <Python.h>

namespace nbla_native::scalar {

// Add the two functions to ``module``; false with a Python error set on failure.
bool add_functions(PyObject *module);

}  // namespace nbla_native::scalar
