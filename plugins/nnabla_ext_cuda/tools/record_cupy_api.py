"""Record the public API surface of the installed CuPy into nnabla_ext/cuda/_cupy_api.py.

The emulation (:mod:`nnabla_ext.cuda.emulation`) offers exactly these names, so a kernel
that calls something CuPy lacks (``xp.errstate``) fails under the emulation as it would on a
GPU. Run with a Python that has CuPy (no device needed):

    python plugins/nnabla_ext_cuda/tools/record_cupy_api.py
"""
import os
import pprint

import cupy
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "nnabla_ext", "cuda", "_cupy_api.py")
SUBMODULES = ("linalg", "fft")


def public(obj):
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def main():
    data = {
        "VERSION": cupy.__version__,
        "NAMES": public(cupy),
        "SUBMODULES": {m: public(getattr(cupy, m)) for m in SUBMODULES},
        "NDARRAY": sorted(n for n in dir(cupy.ndarray)
                          if not n.startswith("_") or n in dir(np.ndarray)),
        "UFUNC_METHODS": [m for m in ("at", "reduce", "accumulate", "outer", "reduceat")
                          if hasattr(cupy.add, m)],
    }
    lines = ['"""The public API surface of CuPy, recorded by tools/record_cupy_api.py '
             '(do not edit)."""', ""]
    for key, value in data.items():
        lines.append(f"{key} = {pprint.pformat(value, width=88, compact=True)}")
    tmp = OUT + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT} (CuPy {cupy.__version__}: {len(data['NAMES'])} names)")


if __name__ == "__main__":
    main()
