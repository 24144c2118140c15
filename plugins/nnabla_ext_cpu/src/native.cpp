// Native hot kernels of the CPU backend (pybind11).
#include <pybind11/pybind11.h>

namespace py = pybind11;

PYBIND11_MODULE(_native, m) {
    m.doc() = "Native C++ kernels of nnabla_ext.cpu";
    m.attr("ABI_VERSION") = 1;
}
