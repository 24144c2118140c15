"""Every spec entry has a test case and a CPU kernel; the native kernels are built and in the
CPU table; every first-party module imports; every nnabla 1.39 function exists."""
import importlib
import importlib.machinery
import json
import pathlib
import subprocess
import sys

import pytest

import nnabla.functions as F
from nnabla.testing.function_cases import ALL_CASES
from nnabla._spec import SPECS
from nnabla_ext.cpu.kernels import CPU_KERNELS

# The C++ overrides in nnabla_ext.cpu.kernels.native: without the compiled module the CPU table
# silently keeps the generic numpy kernels, so a failed build must fail a test.
NATIVE_OVERRIDES = ("TopKData", "SoftmaxCrossEntropy", "Convolution", "Deconvolution",
                    "DepthwiseConvolution", "DepthwiseDeconvolution", "MaxPooling",
                    "AveragePooling", "SumPooling", "BatchNormalization",
                    "LayerNormalization", "InstanceNormalization", "Softmax", "Tanh", "GELU",
                    "AddScalar", "MulScalar")
NAMES = pathlib.Path(__file__).resolve().parents[1] / "data" / "nnabla_1.39_function_names.txt"


def test_every_spec_entry_has_a_case_and_a_cpu_kernel():
    covered = {c.name for c in ALL_CASES}
    assert sorted(set(SPECS) - covered) == []
    assert sorted(set(SPECS) - set(CPU_KERNELS)) == []


def test_every_registered_kernel_has_a_spec_entry():
    assert sorted(set(CPU_KERNELS) - set(SPECS)) == []


def test_native_extension_is_built():
    compiled = importlib.import_module("nnabla_ext.cpu._native")
    assert compiled.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), compiled
    native = importlib.import_module("nnabla_ext.cpu.kernels.native")
    assert sorted(native.KERNELS) == sorted(NATIVE_OVERRIDES)
    # the oneDNN convolutions (kernels/onednn.py) subclass the native ones
    generic = [name for name in NATIVE_OVERRIDES
               if not issubclass(CPU_KERNELS[name], native.KERNELS[name])]
    assert generic == [], "the CPU table runs these on the generic kernels"


@pytest.mark.conformance
def test_every_nnabla_function_name_exists():
    names = [line.strip() for line in NAMES.read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert len(names) == 230
    assert [n for n in names if not hasattr(F, n)] == []


# Modules that wrap an optional third-party package (as in nnabla): importing them without it
# raises ModuleNotFoundError naming that package, never one of ours.
OPTIONAL = {"nnabla.utils.image_utils.backend_events.cv2_backend": "cv2",
            "nnabla.utils.image_utils.backend_events.pypng_backend": "png"}
IMPORT_ALL = """
import importlib, json, pkgutil, sys, warnings
warnings.simplefilter("ignore")
import nnabla, nnabla_ext.cpu
failures, count = {}, 0
for package in (nnabla, nnabla_ext.cpu):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        count += 1
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as error:
            failures[info.name] = ["ModuleNotFoundError", error.name]
        except BaseException as error:
            failures[info.name] = [type(error).__name__, str(error)]
print(json.dumps({"count": count, "failures": failures}))
"""


def test_every_first_party_module_imports():
    # A module that fails to import must fail the suite, not hide behind a fallback or skip.
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["count"] > 200
    failures = result["failures"]
    unexpected = {name: why for name, why in failures.items()
                  if OPTIONAL.get(name) != why[1] or why[0] != "ModuleNotFoundError"}
    assert unexpected == {}
