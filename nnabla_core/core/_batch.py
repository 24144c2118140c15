"""nnabla 1.39's batch abstraction of a proto network, applied to copies of its variables
and functions when it is saved with ``variable_batch_size``."""
from __future__ import annotations

import math

import numpy as np

_SHAPE_HEAD_FUNCTIONS = ("Constant", "Rand", "Randint", "Randn", "RandBinomial", "RandBeta",
                         "RandGamma")


def _resolve_reshape(functions, variables, parameters):
    for f in functions:
        shape = f.args.get("shape") if f.type == "Reshape" else None
        if shape is None or not any(s < 0 for s in shape):
            continue
        if sum(1 for s in shape if s < 0) > 1:
            raise ValueError(f"nn.graph_def: Reshape {f.name!r}: shape {tuple(shape)} has "
                             f"several negative entries")
        source = variables.get(f.inputs[0]) or parameters[f.inputs[0]]
        known = math.prod(s for s in shape if s >= 0)
        f.args["shape"] = tuple(math.prod(source.shape) // max(known, 1) if s < 0 else s
                                for s in shape)


def _folded(shape, base_axis):
    return (int(np.prod(shape[:base_axis])),) + tuple(shape[base_axis:])


def _variable_batch_size(functions, variables):
    """nnabla 1.39's batch abstraction of a proto network (on copies): the batch size is
    the product of the leading ``base_axis`` dimensions of an input of the last function
    with a nonzero ``base_axis``; dimension 0 equal to it becomes ``-1``.

    Returns:
        int or None: the batch size found.
    """
    batch = None
    for f in functions:
        if f.args.get("base_axis", 0) != 0:
            first = next((n for n in f.inputs if n in variables), None)
            if first is not None:
                batch = int(np.prod(variables[first].shape[:f.args["base_axis"]]))
    if batch is None:
        return None
    special, resolved = set(), set()
    for f in functions:
        if next((n for n in f.inputs if n in variables and n not in special), None) is None:
            special.update(f.outputs)
            continue
        base_axis = f.args.get("base_axis")
        if base_axis is not None and base_axis != 1:
            for n in f.inputs:
                if n in variables and n not in resolved and n not in special:
                    variables[n].shape = _folded(variables[n].shape, base_axis)
                    resolved.add(n)
            for n in f.outputs:
                if n not in resolved:
                    variables[n].shape = _folded(variables[n].shape, base_axis)
            f.args["base_axis"] = 1
        _abstract_shape_argument(f, batch, variables)
    for v in variables.values():
        if v.shape and v.name not in special and v.shape[0] == batch:
            v.shape = (-1,) + tuple(v.shape[1:])
    return batch


def _abstract_shape_argument(f, batch, variables):
    shape = list(f.args.get("shape") or [])
    if f.type in ("Reshape",) + _SHAPE_HEAD_FUNCTIONS and shape and shape[0] == batch:
        f.args["shape"] = tuple([-1] + shape[1:])
    elif f.type == "Broadcast" and shape:
        rank = len(variables[f.inputs[0]].shape)
        if rank < len(shape):
            diff = len(shape) - rank
            if math.prod(shape[:diff + 1]) == batch:
                f.args["shape"] = tuple([-1] + shape[diff + 1:])
        elif shape[0] == batch:
            f.args["shape"] = tuple([-1] + shape[1:])
