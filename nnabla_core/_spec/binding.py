"""Binding user arguments to a spec: defaults, coercion, shape inference."""
from __future__ import annotations

import inspect

from .args import coerce
from .base import REQUIRED


def bind_args(spec, kwargs):
    """Return the complete, coerced argument dict of ``spec`` from ``kwargs``."""
    unknown = set(kwargs) - set(spec.arg_names)
    if unknown:
        raise TypeError(f"{spec.api_name}: unexpected argument(s) {sorted(unknown)}; "
                        f"arguments are {list(spec.arg_names)}")
    out = {}
    for arg in spec.args:
        value = kwargs.get(arg.name, arg.default)
        if value is REQUIRED:
            raise TypeError(f"{spec.api_name}: missing required argument '{arg.name}'")
        out[arg.name] = coerce(spec, arg, value)
    return out


def _takes_n_outputs(spec):
    takes = getattr(spec, "_takes_n_outputs", None)
    if takes is None:
        params = inspect.signature(spec.infer_shape).parameters
        takes = spec._takes_n_outputs = "n_outputs" in params
    return takes


def infer(spec, in_shapes, args, n_outputs=-1):
    """Resolve input-dependent defaults, then infer the output shapes.

    ``in_shapes`` holds one tuple per input actually given (``None`` for an
    omitted optional input). ``n_outputs`` reaches shape rules that declare it
    (functions whose output count the caller chooses, e.g. ``output_stat``).
    Returns ``(args, out_shapes)``.

    Raises:
        TypeError: a required input is missing (None).
        MissingInputsError: a variadic function (concatenate, sink, ...) got no input.
    """
    if not in_shapes and spec.inputs and spec.inputs[0].variadic:
        raise spec.missing_inputs_error(spec.inputs[0].name)
    if None in in_shapes:
        _check_present(spec, in_shapes)
    if spec.resolve_args is not None:
        args = spec.resolve_args(spec, in_shapes, args)
    if _takes_n_outputs(spec):
        out_shapes = spec.infer_shape(spec, *in_shapes, n_outputs=n_outputs, **args)
    else:
        out_shapes = spec.infer_shape(spec, *in_shapes, **args)
    return args, tuple(tuple(map(int, s)) for s in out_shapes)


def _check_present(spec, in_shapes):
    """TypeError naming the first required input given as None."""
    inputs = spec.inputs
    for i, shape in enumerate(in_shapes):
        if shape is not None:
            continue
        decl = inputs[min(i, len(inputs) - 1)]
        if decl.optional and not decl.variadic:
            continue
        name = f"{decl.name}[{i - inputs.index(decl)}]" if decl.variadic else decl.name
        raise TypeError(f"{spec.api_name}: input '{name}' is None; expected an "
                        "nnabla.Variable or nnabla.NdArray")
