"""``nnabla.dtypes``: the numpy types nnabla arrays may hold."""
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
           "int32", "uint32", "int64", "uint64", "bool"]
