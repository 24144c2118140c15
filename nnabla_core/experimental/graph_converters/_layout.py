"""Changing a graph between the channel-first (NCHW) and channel-last (NHWC) layouts; the
shared work of :class:`ChannelLastModifier` and :class:`ChannelFirstModifier`."""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ... import parameter as _parameter
from ..._variable import Variable
from .graph_converter import FunctionModifier

_POOLINGS = ("MaxPooling", "AveragePooling", "SumPooling", "Unpooling")
SUPPORTED = ("Convolution", "Deconvolution", "BatchNormalization", "MaxPooling",
             "AveragePooling", "SumPooling", "Unpooling", "Concatenate", "Affine")


def to_last(a):
    """NCHW... -> NHWC... (channel axis 1 moved last)."""
    return np.moveaxis(a, 1, -1)


def to_first(a):
    """NHWC... -> NCHW... (last axis moved to 1)."""
    return np.moveaxis(a, -1, 1)


class LayoutModifier(FunctionModifier):
    """Rewrites the layout-dependent functions for the layout ``channel_last``."""

    channel_last = True
    suffix = "cl"

    def __init__(self, inputs, inputs_new=None):
        super().__init__()
        self._inputs = list(inputs)
        self._inputs_new = inputs_new
        for i, inp in enumerate(self._inputs):
            if not isinstance(inp, Variable) or not inp.function_references:
                given = (f"a variable of shape {inp.shape} that no function reads"
                         if isinstance(inp, Variable) else type(inp).__name__)
                raise ValueError(f"{type(self).__name__}: argument 'inputs'[{i}] is {given}; "
                                 f"expected an input variable of the graph to convert")
        self._prepare_inputs(self._inputs, inputs_new)

    def _move(self, a):
        return to_last(a) if self.channel_last else to_first(a)

    def _new_inputs_of(self, inputs, given):
        if given is not None:
            return list(given)
        made = []
        for inp in inputs:
            if inp.ndim < 3:
                raise ValueError(f"{type(self).__name__}: input of shape {inp.shape} has no "
                                 f"spatial axes; expected (batch, channel, spatial...)")
            made.append(Variable.from_numpy_array(np.ascontiguousarray(self._move(inp.d)),
                                                  need_grad=inp.need_grad))
        return made

    def _prepare_inputs(self, inputs, inputs_new=None):
        new = self._new_inputs_of(inputs, inputs_new)
        self._converted = new
        self._set_converted_inputs(new)
        for inp, inp_new in zip(inputs, new):
            for f in inp.function_references:
                mapped = [None] * len(f.inputs)
                for i, v in enumerate(f.inputs):
                    if v == inp:
                        mapped[i] = inp_new
                self.init_map_func_inputs(f, mapped)

    def _set_converted_inputs(self, new):
        raise NotImplementedError

    def _param(self, like, name, data):
        with _parameter.parameter_scope(self.get_parameter_scope(like)):
            return _parameter.get_parameter_or_create(f"{name}_{self.suffix}", data.shape,
                                                      np.ascontiguousarray(data),
                                                      like.need_grad)

    def _kernel(self, fname, w):
        # conv: (o, i, k...) <-> (o, k..., i); deconv: (i, o, k...) <-> (i, k..., o)
        d = w.d
        moved = (np.moveaxis(d, 1, -1) if self.channel_last else np.moveaxis(d, -1, 1))
        return self._param(w, "W", moved)

    def connect(self, fname, inputs, args):
        """The function ``fname`` in the target layout on ``inputs``."""
        args = dict(args)
        if fname in ("Convolution", "Deconvolution"):
            args["channel_last"] = self.channel_last
            b = inputs[2] if len(inputs) > 2 else None
            fct = F.convolution if fname == "Convolution" else F.deconvolution
            return fct(inputs[0], self._kernel(fname, inputs[1]), b, **args)
        if fname == "BatchNormalization":
            x = inputs[0]
            args["axes"] = [x.ndim - 1] if self.channel_last else [1]
            args.pop("no_scale", None)
            args.pop("no_bias", None)
            names = ("beta", "gamma", "mean", "var")
            params = [self._param(p, n, self._move(p.d)) for p, n in zip(inputs[1:5], names)]
            return F.batch_normalization(x, *params, **args)
        if fname in _POOLINGS:
            args["channel_last"] = self.channel_last
            return self._call_function(fname, inputs, args)
        if fname == "Concatenate":
            args["axis"] = inputs[0].ndim - 1 if self.channel_last else 1
            return self._call_function(fname, inputs, args)
        if fname == "Affine" and inputs[0].ndim >= 3:
            return self._affine(inputs, args)
        return self._call_function(fname, inputs, args)

    def _affine(self, inputs, args):
        x, w = inputs[0], inputs[1]
        base = args.get("base_axis", 1)
        in_shape = x.shape[base:]                 # the new layout's feature shape
        first = (in_shape[-1],) + in_shape[:-1] if self.channel_last else \
            in_shape[1:] + (in_shape[0],)
        wd = w.d.reshape(first + (-1,))
        n = len(in_shape)
        axes = (tuple(range(1, n)) + (0, n) if self.channel_last
                else (n - 1,) + tuple(range(n - 1)) + (n,))
        wd = np.transpose(wd, axes).reshape(w.shape)
        b = inputs[2] if len(inputs) > 2 else None
        return F.affine(x, self._param(w, "w", wd), b, **args)

    def modify(self, f, inputs):
        if f.info.type_name in SUPPORTED:
            return self.connect(f.info.type_name, inputs, f.info.args)
        return None

    def __finish__(self):
        # The converted inputs stay those of the graph just made (nnabla 1.39 made new
        # ones here, so ``inputs_cl`` no longer fed the converted graph).
        self._prepare_inputs(self._inputs, self._converted)
