"""``nnabla.dtypes``: the numpy types nnabla arrays may hold."""
import builtins

import numpy as np

float = np.float32
half = np.float16
float16 = np.float16
float32 = np.float32
float64 = np.float64
int8 = np.int8
uint8 = np.uint8
int16 = np.int16
uint16 = np.uint16
int32 = np.int32
uint32 = np.uint32
int64 = np.int64
uint64 = np.uint64
bool = np.bool_

__all__ = ["float", "half", "float16", "float32", "float64", "int8", "uint8", "int16", "uint16",
           "int32", "uint32", "int64", "uint64", "bool", "np_dtpye_to_int", "int_to_np_dtype"]

# nnabla's dtype codes (numpy's C type numbers; 64-bit integers are LONGLONG, as nnabla
# stores them) used for dtype-valued NNP arguments. The misspelt name is nnabla's API.
np_dtpye_to_int = {
    np.bool_: 0, builtins.bool: 0, np.byte: 1, np.ubyte: 2, np.short: 3, np.ushort: 4,
    np.int32: 5, np.uint32: 6, np.longlong: 9, np.int64: 9, np.ulonglong: 10, np.uint64: 10,
    np.float32: 11, np.double: 12, np.longdouble: 13,
}
int_to_np_dtype = {code: t for t, code in np_dtpye_to_int.items()}
