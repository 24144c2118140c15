"""The host-staged list stays honest: each listed function's generic kernel really is not
device-clean (the strict emulation rejects it), so a fix in the CPU plugin's generic code
shows up here as a function to take off the list."""
import numpy as np
import pytest
from nnabla.function_spec import SPECS, bind_args, infer
from nnabla.testing.function_cases import ALL_CASES
from nnabla_ext.cpu.kernels import GENERIC
from nnabla_ext.cuda._namespace import DeviceNamespace
from nnabla_ext.cuda.emulation import cupy as emulated
from nnabla_ext.cuda.kernels.host_staged import HOST_STAGED_FUNCTIONS

XP = DeviceNamespace(emulated)
STRICTNESS = (TypeError, AttributeError)      # what the emulation raises, as CuPy does


def _run_generic_on_the_emulation(case):
    spec = SPECS[case.name]
    arrays = case.make_inputs()
    shapes = [None if a is None else np.shape(a) for a in arrays]
    bound, out_shapes = infer(spec, shapes, bind_args(spec, dict(case.args)))
    cls = GENERIC[case.name]
    kernel = cls.__new__(cls)
    kernel.xp = XP
    kernel.__init__(spec, bound, shapes, out_shapes)
    xs = [None if a is None else XP.asarray(np.asarray(a)) for a in arrays]
    ys = kernel.forward(xs)
    if case.grad:
        dys = [XP.ones(y.shape, dtype=XP.float32) for y in ys]
        kernel.backward(xs, list(ys), dys, [a is not None for a in arrays])


@pytest.mark.parametrize("name", HOST_STAGED_FUNCTIONS)
def test_each_host_staged_function_is_rejected_by_the_strict_emulation(name):
    cases = [c for c in ALL_CASES if c.name == name]
    assert cases, f"no function case for {name}"
    rejected = []
    for case in cases:
        try:
            _run_generic_on_the_emulation(case)
        except STRICTNESS as e:
            rejected.append(f"{case}: {type(e).__name__}: {e}")
    assert rejected, (f"the generic {name} kernel now runs on the strict emulation: take it "
                      "off HOST_STAGED_FUNCTIONS")
