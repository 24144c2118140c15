"""Folding a batch normalization into the convolution, deconvolution or affine next to it.

In test mode a batch normalization is an affine map per channel,
``y = c0 * x + c1`` with ``c0 = gamma / sqrt(var + eps)`` and
``c1 = beta - c0 * mean``. Following a linear layer ``x = W h + b`` it folds into
``W' = c0 W`` and ``b' = c0 b + c1`` (:class:`BatchNormalizationFoldingModifierInner`);
preceding one, ``W (c0 h + c1) + b`` gives ``W' = W c0`` and ``b' = b + W c1``
(:class:`BatchNormalizationFoldingOppositeModifierInner`).
"""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ... import parameter as _parameter
from ...initializer import ConstantInitializer
from .graph_converter import FunctionModifier

__all__ = ["AddBiasModifier", "BatchNormalizationFoldingModifier",
           "BatchNormalizationFoldingModifierInner",
           "BatchNormalizationFoldingOppositeModifierInner"]


class BatchNormBase:
    """The linear layers a batch normalization folds into."""

    def __init__(self):
        super().__init__()
        self._fct_set = {"Affine": F.affine, "Convolution": F.convolution,
                         "Deconvolution": F.deconvolution}

    def connect(self, f, x, w, b):
        """``f``'s function type with ``f``'s arguments on ``x``, ``w``, ``b``."""
        return self._fct_set[f.info.type_name](x, w, b, **f.info.args)


def _output_channels(f, w, channel_last):
    name = f.info.type_name
    if name == "Affine":
        return int(np.prod(w.shape[1:]))
    if name == "Deconvolution":
        group = f.info.args.get("group", 1)
        return (w.shape[-1] if channel_last else w.shape[1]) * group
    return w.shape[0]


def _first_reader(v):
    refs = v.function_references
    return refs[0] if refs else None


class AddBiasModifier(FunctionModifier, BatchNormBase):
    """Give a zero bias (parameter ``b`` in the weight's scope) to each convolution,
    deconvolution or affine without one that a batch normalization precedes or follows,
    so that the folding modifiers have a bias to fold into.

    Example:
        >>> import nnabla.experimental.graph_converters as GC
        >>> converter = GC.GraphConverter([GC.AddBiasModifier()])
    """

    def __init__(self, channel_last=False):
        super().__init__()
        self._channel_last = channel_last

    def modify(self, f, inputs):
        if f.info.type_name not in self._fct_set or len(inputs) == 3:
            return None
        following = _first_reader(f.outputs[0])
        preceding = f.inputs[0].parent
        near_bn = any(g is not None and g.info.type_name == "BatchNormalization"
                      for g in (following, preceding))
        if not near_bn:
            return None
        x, w = inputs[0], inputs[1]
        n_outmaps = _output_channels(f, w, self._channel_last)
        with _parameter.parameter_scope(self.get_parameter_scope(w)):
            b = _parameter.get_parameter_or_create("b", (n_outmaps,), ConstantInitializer(),
                                                   True, True)
        return self.connect(f, x, w, b)


def _bn_affine(bn_func):
    """``(c0, c1)`` of a batch normalization in test mode, shaped as its parameters."""
    beta, gamma, mean, var = (v.d.astype(np.float64) for v in bn_func.inputs[1:5])
    c0 = gamma / np.sqrt(var + bn_func.info.args["eps"])
    return c0, beta - c0 * mean


def _per_channel(a):
    return np.asarray(a).reshape(-1)


def _weight_view(f, w_data, channel_last):
    """``w_data`` with the output-channel axis first and the rest flattened (a view shape),
    plus a function bringing such an array back to ``w_data``'s layout."""
    name = f.info.type_name
    if name == "Affine":
        flat = w_data.reshape(w_data.shape[0], -1)
        return flat.T, lambda a: a.T.reshape(w_data.shape)
    if name == "Deconvolution":
        group = f.info.args.get("group", 1)
        axis = w_data.ndim - 1 if channel_last else 1
        moved = np.moveaxis(w_data, axis, 0)          # (o/g, i, k...)
        i = moved.shape[1]
        grouped = moved.reshape((moved.shape[0], group, i // group) + moved.shape[2:])
        grouped = np.moveaxis(grouped, 1, 0)          # (g, o/g, i/g, k...)
        view = grouped.reshape(group * moved.shape[0], -1)

        def back(a):
            a = a.reshape(grouped.shape)
            a = np.moveaxis(a, 0, 1).reshape(moved.shape)
            return np.moveaxis(a, 0, axis)
        return view, back
    return w_data.reshape(w_data.shape[0], -1), lambda a: a.reshape(w_data.shape)


class BatchNormalizationFoldingModifierInner(FunctionModifier, BatchNormBase):
    """Fold ``Convolution/Deconvolution/Affine -> BatchNormalization`` into one layer with
    parameters ``w-folded`` and ``b-folded`` (in the weight's scope); the batch
    normalization disappears. The layer needs a bias (:class:`AddBiasModifier` adds it).

    Args:
        channel_last (bool): the layers use the NHWC layout.
    """

    def __init__(self, channel_last=False):
        super().__init__()
        self._channel_last = channel_last

    def modify(self, f, inputs):
        readers = f.outputs[0].function_references
        if not readers:
            return None
        if (f.info.type_name == "BatchNormalization" and inputs[0].parent is not None
                and inputs[0].parent.info.type_name in self._fct_set
                and f.inputs[0].parent is not None
                and len(f.inputs[0].parent.inputs) == 3
                and len(f.inputs[0].function_references) == 1):
            return inputs[0]
        if (f.info.type_name not in self._fct_set or len(readers) != 1
                or readers[0].info.type_name != "BatchNormalization" or len(inputs) != 3):
            return None
        w_data, b_data = self._compute_folded_parameters(f, readers[0])
        w0, b0 = inputs[1], inputs[2]
        with _parameter.parameter_scope(self.get_parameter_scope(w0)):
            w = _parameter.get_parameter_or_create("w-folded", w0.shape, w_data, w0.need_grad)
            b = _parameter.get_parameter_or_create("b-folded", b0.shape, b_data, b0.need_grad)
        return self.connect(f, inputs[0], w, b)

    def _compute_folded_parameters(self, ip_func, bn_func):
        c0, c1 = (_per_channel(a) for a in _bn_affine(bn_func))
        w = ip_func.inputs[1].d.astype(np.float64)
        view, back = _weight_view(ip_func, w, self._channel_last)
        w_folded = back(view * c0[:, None])
        b = ip_func.inputs[2].d.astype(np.float64).reshape(-1)
        b_folded = c0 * b + c1
        dtype = ip_func.inputs[1].d.dtype
        return (w_folded.astype(dtype),
                b_folded.reshape(ip_func.inputs[2].shape).astype(dtype))


class BatchNormalizationFoldingOppositeModifierInner(FunctionModifier, BatchNormBase):
    """Fold ``BatchNormalization -> Convolution/Deconvolution/Affine`` into the layer
    (written into its own parameters); the batch normalization disappears.

    Args:
        channel_last (bool): the layers use the NHWC layout.
    """

    def __init__(self, channel_last=False):
        super().__init__()
        self._channel_last = channel_last

    def modify(self, f, inputs):
        readers = f.outputs[0].function_references
        if not readers:
            return None
        if f.info.type_name == "BatchNormalization":
            if len(readers) == 1 and readers[0].info.type_name in self._fct_set:
                return inputs[0]
            return None
        prev = f.inputs[0].parent
        if (f.info.type_name not in self._fct_set or prev is None
                or prev.info.type_name != "BatchNormalization" or len(inputs) != 3
                or len(prev.outputs[0].function_references) != 1):
            return None
        w_data, b_data = self._compute_folded_parameters(f, prev)
        f.inputs[1].d = w_data
        f.inputs[2].d = b_data
        return self.connect(f, inputs[0], inputs[1], inputs[2])

    def _compute_folded_parameters(self, ip_func, bn_func):
        c0, c1 = (_per_channel(a) for a in _bn_affine(bn_func))
        w = ip_func.inputs[1].d.astype(np.float64)
        name = ip_func.info.type_name
        args = ip_func.info.args
        if name == "Affine":
            flat = w.reshape(w.shape[0], -1)                  # (inputs, outputs)
            per_input = np.repeat(c0, flat.shape[0] // c0.size)[:, None]
            shift = np.repeat(c1, flat.shape[0] // c1.size)
            w_new = (flat * per_input).reshape(w.shape)
            b_add = shift @ flat
        else:
            w_new, b_add = _fold_input_channels(name, args, w, c0, c1, self._channel_last)
        b = ip_func.inputs[2].d.astype(np.float64).reshape(-1) + b_add.reshape(-1)
        dtype = ip_func.inputs[1].d.dtype
        return w_new.astype(dtype), b.reshape(ip_func.inputs[2].shape).astype(dtype)


def _fold_input_channels(name, args, w, c0, c1, channel_last):
    """Scale the input channels of a (de)convolution kernel by ``c0``; the bias gained from
    the shift ``c1`` (exact where padding does not reach the border values)."""
    group = args.get("group", 1)
    nd = w.ndim - 2
    if name == "Convolution":
        in_axis = w.ndim - 1 if channel_last else 1
        out_axis = 0
    else:
        in_axis = 0
        out_axis = w.ndim - 1 if channel_last else 1
    w_in = np.moveaxis(w, (in_axis, out_axis), (0, 1))   # (i or i/g, o or o/g, k...)
    n_in = c0.size
    if name == "Convolution":
        per_group = w_in.shape[0]
        scale = c0.reshape(group, per_group)
        shift = c1.reshape(group, per_group)
        o_g = w_in.shape[1] // group
        ws = w_in.reshape((per_group, group, o_g) + w_in.shape[2:])
        w_scaled = ws * np.moveaxis(scale, 0, 1).reshape((per_group, group, 1) + (1,) * nd)
        summed = ws.sum(axis=tuple(range(3, ws.ndim)))        # over the kernel window
        b_add = np.einsum("igo,ig->go", summed, np.moveaxis(shift, 0, 1)).reshape(-1)
        w_new = w_scaled.reshape(w_in.shape)
    else:
        w_new = w_in * c0.reshape((n_in, 1) + (1,) * nd)
        i_g = n_in // group
        b_add = np.concatenate([
            np.einsum("io,i->o", w_in[g * i_g:(g + 1) * i_g].sum(axis=tuple(range(2, w.ndim))),
                      c1[g * i_g:(g + 1) * i_g])
            for g in range(group)])
    return np.moveaxis(w_new, (0, 1), (in_axis, out_axis)), b_add


class BatchNormalizationFoldingModifier:
    """Fold batch normalizations into the neighbouring convolution, deconvolution or
    affine: ``[AddBiasModifier(), BatchNormalizationFoldingModifierInner()]`` (the BN
    follows the layer), or with ``opposite=True`` the
    :class:`BatchNormalizationFoldingOppositeModifierInner` (the BN precedes it).

    Args:
        opposite (bool): fold a BN into the layer after it.
        channel_last (bool): the layers use the NHWC layout.

    Returns:
        list of two modifiers (a :class:`GraphConverter` flattens it).

    Example:
        >>> import numpy as np, nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> x = nn.Variable.from_numpy_array(np.random.rand(2, 3, 6, 6))
        >>> y = PF.batch_normalization(PF.convolution(x, 4, (3, 3)), batch_stat=False)
        >>> yy = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()]).convert(y)
        >>> y.forward(); yy.forward()
        >>> bool(np.allclose(y.d, yy.d, atol=1e-5)), yy.parent.info.type_name
        (True, 'Convolution')
    """

    def __new__(cls, opposite=False, channel_last=False):
        inner = (BatchNormalizationFoldingOppositeModifierInner if opposite
                 else BatchNormalizationFoldingModifierInner)
        return [AddBiasModifier(channel_last=channel_last), inner(channel_last=channel_last)]
