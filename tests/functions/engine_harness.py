"""Run a Case through ``nnabla.functions`` (the whole engine), in any mode and context."""
from __future__ import annotations

import numpy as np

import nnabla as nn
from nnabla._dispatch import call_function
from nnabla._spec import SPECS


def is_float(a):
    return a is not None and a.dtype.kind == "f"


def to_variables(arrays, need_grad=True):
    def one(a):
        if a is None:
            return None
        v = nn.Variable(a.shape, need_grad=need_grad and is_float(a))
        v.d = a
        return v
    return [[one(a) for a in x] if isinstance(x, list) else one(x) for x in arrays]


def flatten(items):
    out = []
    for x in items:
        out.extend(x if isinstance(x, list) else [x])
    return out


def call(case, inputs):
    spec = SPECS[case.name]
    if spec.variadic_input:
        return call_function(case.name, *inputs[0], **case.args)
    return call_function(case.name, *inputs, **case.args)


def outputs_of(result):
    return list(result) if isinstance(result, tuple) else [result]


def run_static(case, arrays=None):
    arrays = case.make_inputs() if arrays is None else arrays
    xs = to_variables(arrays)
    ys = outputs_of(call(case, xs))
    nn.forward_all(ys)
    return xs, ys


def reference_outputs(case, arrays):
    ref = case.ref(*arrays, **case.args)
    return list(ref) if isinstance(ref, tuple) else [ref]


def compare_outputs(case, got, expected, atol=None, rtol=None):
    for i, (g, e) in enumerate(zip(got, expected)):
        if case.check_outputs is not None and i not in case.check_outputs:
            continue
        np.testing.assert_allclose(g, e, atol=case.atol if atol is None else atol,
                                   rtol=case.rtol if rtol is None else rtol,
                                   err_msg=f"{case}: output {i}")
