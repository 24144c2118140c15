"""Channel-wise pruning of weights by their L2 norm."""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ... import parameter as _parameter
from .graph_converter import FunctionModifier

__all__ = ["PruningModifier"]


class PruningModifier(FunctionModifier):
    """Set to zero the output channels of weights (and biases) whose squared L2 norm is at
    most ``pruning_threshold``; the pruned parameters are ``w-pruned`` and ``b-pruned`` in
    the weight's scope.

    Args:
        pruning_threshold (float): channels with ``sum(w**2) <= threshold`` are zeroed.
        functions_to_prune (tuple of str): function types to prune.
        channel_last (bool): the network is NHWC (the output axis of deconvolutions).

    Example:
        >>> import nnabla.experimental.graph_converters as GC
        >>> converter = GC.GraphConverter([GC.PruningModifier(pruning_threshold=0.1)])
    """

    _default_fct_set = {
        "Affine": F.affine, "Convolution": F.convolution, "Deconvolution": F.deconvolution,
        "DepthwiseConvolution": F.depthwise_convolution,
        "DepthwiseDeconvolution": F.depthwise_deconvolution,
    }

    def __init__(self, pruning_threshold,
                 functions_to_prune=("Convolution", "Deconvolution", "DepthwiseConvolution",
                                     "DepthwiseDeconvolution", "Affine"),
                 channel_last=False):
        super().__init__()
        self._channle_last = channel_last
        self._pruning_threshold = pruning_threshold
        self._fct_set = {name: self._default_fct_set[name] for name in functions_to_prune
                         if name in self._default_fct_set}
        self.output_channel_axis = {
            "Affine": 1, "Convolution": 0, "Deconvolution": {True: -1, False: 1},
            "DepthwiseConvolution": 0, "DepthwiseDeconvolution": 0,
        }

    def calculate_axis(self, f):
        """The output-channel axis of ``f``'s weight."""
        axis = self.output_channel_axis[f.info.type_name]
        return axis if isinstance(axis, int) else axis[self._channle_last]

    def modify(self, f, inputs):
        if f.info.type_name not in self._fct_set:
            return None
        x, w = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        axis = self.calculate_axis(f) % w.ndim
        others = tuple(i for i in range(w.ndim) if i != axis)
        mask = np.sum(w.d ** 2, axis=others, keepdims=True) > self._pruning_threshold
        with _parameter.parameter_scope(self.get_parameter_scope(w)):
            w_pruned = _parameter.get_parameter_or_create("w-pruned", w.shape, w.d * mask,
                                                          True, True)
            b_pruned = None
            if b is not None:
                b_data = b.d * mask.reshape(-1)
                b_pruned = _parameter.get_parameter_or_create("b-pruned", b_data.shape,
                                                              b_data, True, True)
        return self._fct_set[f.info.type_name](x, w_pruned, b_pruned, **f.info.args)
