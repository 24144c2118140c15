"""The two graph rewrites of quantization-aware training (see :mod:`nnabla.utils.qnn`).

:class:`QuantizeNonQNNToRecordingModifier` puts recorders (identity functions keeping
statistics of what flows through them) in front of the inputs of the functions of a float
graph; :class:`QuantizeRecordingToTrainingModifier` turns a graph whose recorders were
removed into a simulated-quantization graph: ``QuantizeLinear`` then ``DequantizeLinear``
on the inputs, parameters and outputs of its functions, with the scales the recorders
found.

Both find a function's recorded parameters under the parameter scope
``'<function type>-<rank>'``, where the rank numbers the functions of the graph in visit
order (:class:`nnabla.utils.qnn.FunctionsRankRecorder`); activations are named ``x<i>``
(the i-th data input) and parameters ``w<i>`` (the i-th parameter input).
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ... import functions as F
from ... import parameter as _parameter
from .graph_converter import FunctionModifier

__all__ = ["QuantizeNonQNNToRecordingModifier", "QuantizeRecordingToTrainingModifier"]

# binary functions: both inputs are data (x0, x1), none is a parameter
_BINARY = ("Add2", "Sub2", "Mul2", "Div2", "Pow2")
# functions whose quantized inputs share one scale (the lowest-ranked input's)
_SHARED = ("Add2", "Concatenate")
_WITH_BIAS = ("Affine", "Convolution", "Deconvolution", "DepthwiseConvolution",
              "DepthwiseDeconvolution")


def _n_data_inputs(type_name, inputs):
    """How many leading inputs are data (the rest are parameters: weight, bias, ...)."""
    if type_name in ("Concatenate", "Stack"):
        return len(inputs)
    if type_name in _BINARY:
        return 2
    return 1


def _scope(f, ranks):
    return f"{f.info.type_name}-{ranks.get(f, -1)}"


def _parent_type(v):
    p = v.parent
    return None if p is None else p.info.type_name


def _consumers(v):
    """The functions taking ``v`` as input, the newest first. nnabla keeps them in a hash
    map keyed by address, whose order is most often (not always) the reverse of creation;
    the conversions below pick the first consumer that matches, so this order decides
    which recorder a value shares and which scale quantizes it."""
    return v.function_references[::-1]


def _check_config(cls_name, config):
    if config is None:
        raise ValueError(f"{cls_name}: argument 'config' is required "
                         "(an nnabla.utils.qnn.QATConfig)")


class QuantizeNonQNNToRecordingModifier(FunctionModifier):
    """Put recorders on the inputs of the functions of a float graph.

    For each function selected by the configuration, each data input goes through an
    activation recorder (``config.recorder_activation``, named ``x<i>``; an input that a
    recorder already watches is not recorded twice) and each parameter input through a
    weight recorder (``config.recorder_weight``, ``w<i>``), in the parameter scope
    ``'<type>-<rank>'``. The inputs of ``Add2`` and ``Concatenate`` share the statistics of
    their lowest-ranked input. With ``config.recorder_position == BOTH`` the output is
    recorded too (as ``x0`` of the next function).

    Not recorded: ``Sink`` and ``BatchNormalization``; functions whose type is not in
    ``config.record_layers`` (when that is not empty); a function whose type is in
    ``config.skip_inputs_layers`` and no function of that type precedes it, or is in
    ``config.skip_outputs_layers`` and no function of that type follows it.

    Args:
        functions_ranks (dict): function -> rank, from
            :class:`nnabla.utils.qnn.FunctionsRankRecorder` on the graph to convert.
        config (nnabla.utils.qnn.QATConfig): the settings.
        training (bool): the recorders update their statistics in the forward pass.
    """

    def __init__(self, functions_ranks, config=None, training=True):
        super().__init__()
        _check_config(type(self).__name__, config)
        self._config = config
        self._training = training
        self._fct_bin_set = {"Add2": F.add2, "Sub2": F.sub2, "Mul2": F.mul2, "Div2": F.div2,
                             "Pow2": F.pow2}
        self.functions_ranks = functions_ranks

    def get_function_rank(self, f):
        """The rank of ``f`` (-1 when it was not numbered)."""
        return self.functions_ranks.get(f, -1)

    # -- which functions ------------------------------------------------------------------
    @staticmethod
    def _types_before(f):
        """Types of the functions ``f`` depends on (the original graph)."""
        seen, types, stack = set(), set(), [f]
        while stack:
            g = stack.pop()
            for v in g.inputs:
                p = v.parent
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    types.add(p.info.type_name)
                    stack.append(p)
        return types

    @staticmethod
    def _types_after(f):
        """Types of the functions depending on ``f``'s first output (the original graph)."""
        seen, types, stack = set(), set(), [f]
        while stack:
            g = stack.pop()
            outs = g.outputs
            if not outs:
                continue
            for h in outs[0].function_references:
                if id(h) not in seen:
                    seen.add(id(h))
                    types.add(h.info.type_name)
                    stack.append(h)
        return types

    def _skipped_at_the_ends(self, f):
        cfg = self._config
        fn = f.info.type_name
        if fn in cfg.skip_outputs_layers \
                and not set(cfg.skip_outputs_layers) & self._types_after(f):
            return True
        if fn in cfg.skip_inputs_layers \
                and not set(cfg.skip_inputs_layers) & self._types_before(f):
            return True
        return False

    def check(self, f):
        """Whether ``f`` gets recorders (see the class description)."""
        fn = f.info.type_name
        if fn in ("Sink", "BatchNormalization"):
            return False
        if self._config.record_layers and fn not in self._config.record_layers:
            return False
        return not self._skipped_at_the_ends(f)

    # -- recorders ------------------------------------------------------------------------
    def _axes(self):
        return [3] if self._config.channel_last else [1]

    def add_recorder(self, f, inputs, cfg):
        """``inputs`` with recorders in front (see the class description)."""
        activation = cfg.recorder_activation
        activation_name = activation().name()
        n_data = _n_data_inputs(f.info.type_name, inputs)
        new_inputs = []
        with _parameter.parameter_scope(_scope(f, self.functions_ranks)):
            for i, v in enumerate(inputs[:n_data]):
                refs = _consumers(v)
                if refs and refs[0].info.type_name == activation_name:
                    v = refs[0].outputs[0]      # already recorded for another function
                elif _parent_type(v) != activation_name:
                    v = activation()(v, axes=self._axes(), training=self._training,
                                     name=f"x{i}")
                new_inputs.append(v)
            for i, w in enumerate(inputs[n_data:]):
                new_inputs.append(cfg.recorder_weight()(w, axes=self._axes(),
                                                        training=self._training,
                                                        name=f"w{i}"))
        return new_inputs

    def share_recorder(self, f, inputs, new_inputs, cfg):
        """For ``Add2`` and ``Concatenate``, record every input with the statistics of the
        recorder of the lowest-ranked one."""
        if f.info.type_name not in _SHARED:
            return new_inputs
        # nnabla starts the search from the rank of the first input in the original graph
        idx, lowest = 0, inputs[0].rank
        for i, v in enumerate(new_inputs[1:], 1):
            if v.rank < lowest:
                idx, lowest = i, v.rank
        shared = new_inputs[idx].parent
        scope = self.get_parameter_scope(shared.inputs[1])
        for i, v in enumerate(new_inputs):
            if i == idx:
                continue
            with _parameter.parameter_scope(scope):
                new_inputs[i] = cfg.recorder_activation()(
                    v.parent.inputs[0], axes=self._axes(), training=self._training, name="x0")
        return new_inputs

    def modify(self, f, inputs):
        if not self.check(f):
            return None
        cfg = self._config
        new_inputs = self.add_recorder(f, inputs, cfg)
        new_inputs = self.share_recorder(f, inputs, new_inputs, cfg)
        h = self._modify_as_same(f, new_inputs)
        if cfg.recorder_position == cfg.RecorderPosition.BOTH:
            consumers = _consumers(f.outputs[0])
            scope = _scope(consumers[0], self.functions_ranks) if consumers else \
                _scope(f, self.functions_ranks)
            with _parameter.parameter_scope(scope):
                h = cfg.recorder_activation()(h, axes=self._axes(), training=self._training,
                                              name="x0")
        return h


class QuantizeRecordingToTrainingModifier(FunctionModifier):
    """Turn a graph whose recorders were removed into a quantization-aware training graph.

    With ``config.precision_mode == PrecisionMode.SIM_QNN`` (the only mode nnabla 1.39
    implements) every function ``f`` becomes ``DQ(Q(inputs)) -> f -> Q``: graph inputs and
    parameters are quantized with the scales of their recorders (``x<i>``, ``w<i>`` in the
    scope ``'<type>-<rank>'``), a function's output with the scale recorded at the input of
    the function that consumes it, and the bias of a convolution or affine with the product
    of its input's and weight's scales (parameters ``scale-b``, ``zeropoint-b``; left float
    with ``config.skip_bias``). Values with no recorded scale stay float. The inputs of
    ``Add2`` and ``Concatenate`` are requantized with the scale of their lowest-ranked
    input. The graph's outputs are not quantized.

    Args:
        functions_ranks (dict): function -> rank (numbered on the graph without recorders,
            which gives the ranks the recording graph was built with).
        config (nnabla.utils.qnn.QATConfig): the settings.
    """

    class SimulatedQNN:
        """The ``SIM_QNN`` rewrite (quantize/dequantize pairs around float functions)."""

        def __init__(self, functions_ranks, modifier=None, config=None):
            self._config = config
            self._modifier = modifier
            self._map_input_scale_zeropoint = defaultdict(list)
            self.functions_ranks = functions_ranks

        def get_function_rank(self, f):
            """The rank of ``f`` (-1 when it was not numbered)."""
            return self.functions_ranks.get(f, -1)

        def _settings(self):
            cfg = self._config
            return cfg.round_mode, cfg.narrow_range, cfg.dtype, cfg.pow2.value, \
                ([3] if cfg.channel_last else [1])

        def try_to_quantize(self, x, scale, zero_point, round_mode, narrow_range, dtype):
            """``QuantizeLinear`` of ``x``, or ``x`` when ``scale`` is None."""
            if scale is None:
                return x
            return F.quantize_linear(x, scale, zero_point, round_mode, narrow_range, dtype)

        def try_to_dequantize(self, x, scale, zero_point):
            """``DequantizeLinear`` of ``x``, or ``x`` when ``scale`` is None."""
            if scale is None:
                return x
            return F.dequantize_linear(x, scale, zero_point)

        def get_quantization_params(self, variable):
            """The (scale, zero point) values (numpy) of a ``QuantizeLinear`` output, else
            ``(None, None)``."""
            if _parent_type(variable) != "QuantizeLinear":
                return None, None
            q = variable.parent.inputs
            return q[1].d, q[2].d

        def _quantize_outputs(self, f, output, axes, cfg):
            rm, nr, dt, pow2, _ = self._settings()
            scale = zero_point = None
            for consumer in _consumers(f.outputs[0]):
                cn = consumer.info.type_name
                if cn == "Sink":
                    return output
                name = "x0"
                if cn in _BINARY:
                    for i, v in enumerate(consumer.inputs):
                        if v == f.outputs[0]:
                            name = f"x{i}"
                with _parameter.parameter_scope(_scope(consumer, self.functions_ranks)):
                    scale, zero_point = cfg.recorder_activation.get_scale_zeropoint(
                        output, axes=axes, narrow_range=nr, round_method=pow2, name=name)
                if scale is not None:
                    break
            h = self.try_to_quantize(output, scale, zero_point, rm, nr, dt)
            self._map_input_scale_zeropoint[h] = (scale, zero_point)
            return h

        def requantize_bias(self, f, inputs, scope, rm, nr, dt, skip_bias=False):
            """Quantize the bias of a convolution or affine with scale = input scale x
            weight scale (both must be known); with ``skip_bias`` the bias stays float."""
            if f.info.type_name not in _WITH_BIAS or len(inputs) != 3:
                return inputs
            x, w, b = inputs
            sx, zpx = self.get_quantization_params(x)
            sw, _ = self.get_quantization_params(w)
            if sx is None or sw is None:
                return inputs
            with _parameter.parameter_scope(scope):
                sb = _parameter.get_parameter_or_create(
                    "scale-b", (1,), np.reshape(sx, (1,)) * np.reshape(sw, (1,)), False)
                zpb = _parameter.get_parameter_or_create(
                    "zeropoint-b", (1,), np.reshape(zpx, (1,)).copy(), False)
                if _parent_type(b) == "QuantizeLinear":
                    b = b.parent.inputs[0]
                    if not skip_bias:
                        b = F.quantize_linear(b, sb, zpb, rm, nr, dt)
                    inputs[2] = b
            return inputs

        def quantize_inputs(self, f, inputs, scope, cfg, axes, rm, nr, dt, pow2):
            """Quantize the graph inputs (rank 0) among ``f``'s data inputs and its
            parameters, with their recorded scales."""
            n_data = _n_data_inputs(f.info.type_name, inputs)
            out = []
            with _parameter.parameter_scope(scope):
                for i, v in enumerate(inputs[:n_data]):
                    if v.parent is None:         # rank 0: a graph input or parameter
                        s, zp = cfg.recorder_activation.get_scale_zeropoint(
                            v, axes=axes, narrow_range=nr, round_method=pow2, name=f"x{i}")
                        v = self.try_to_quantize(v, s, zp, rm, nr, dt)
                        self._map_input_scale_zeropoint[v] = (s, zp)
                    out.append(v)
                for i, w in enumerate(inputs[n_data:]):
                    s, zp = cfg.recorder_weight.get_scale_zeropoint(
                        w, axes=axes, narrow_range=nr, round_method=pow2, name=f"w{i}")
                    out.append(self.try_to_quantize(w, s, zp, rm, nr, dt))
            return self.requantize_bias(f, out, scope, rm, nr, dt, cfg.skip_bias)

        def dequantize_inputs(self, inps):
            """Dequantize each quantized input (reusing a ``DequantizeLinear`` already
            made for it)."""
            for i, v in enumerate(inps):
                for g in _consumers(v):
                    if g.info.type_name == "DequantizeLinear":
                        v = g.outputs[0]
                        break
                s = zp = None
                if _parent_type(v) == "QuantizeLinear":
                    s, zp = v.parent.inputs[1:3]
                inps[i] = self.try_to_dequantize(v, s, zp)
            return inps

        def shared_quantization(self, f, inps, cfg):
            """For ``Add2`` and ``Concatenate``, requantize every input with the scale of
            the lowest-ranked dequantized input."""
            if f.info.type_name not in _SHARED:
                return inps
            idx, lowest = 0, inps[0].rank
            for i, v in enumerate(inps[1:], 1):
                if _parent_type(v) == "DequantizeLinear" and v.rank < lowest:
                    idx, lowest = i, v.rank
            s = zp = None
            if _parent_type(inps[idx]) == "DequantizeLinear":
                s, zp = inps[idx].parent.inputs[1:3]
            for i, v in enumerate(inps):
                if i == idx:
                    continue
                if _parent_type(v) == "DequantizeLinear":
                    v = v.parent.inputs[0].parent.inputs[0]     # the float value
                v = self.try_to_quantize(v, s, zp, cfg.round_mode, cfg.narrow_range,
                                         cfg.dtype)
                inps[i] = self.try_to_dequantize(v, s, zp)
            return inps

        def modify(self, f, inputs):
            cfg = self._config
            rm, nr, dt, pow2, axes = self._settings()
            scope = _scope(f, self.functions_ranks)
            inps = self.quantize_inputs(f, inputs, scope, cfg, axes, rm, nr, dt, pow2)
            inps = self.dequantize_inputs(inps)
            inps = self.shared_quantization(f, inps, cfg)
            h = self._modifier._modify_as_same(f, inps)
            if f.info.type_name == "Sink":
                return h
            return self._quantize_outputs(f, h, axes, cfg)

        def __finish__(self):
            self._map_input_scale_zeropoint = defaultdict(list)

    def __init__(self, functions_ranks, config=None):
        super().__init__()
        _check_config(type(self).__name__, config)
        self._fct_bin_set = {"Add2": F.add2, "Sub2": F.sub2, "Mul2": F.mul2, "Div2": F.div2,
                             "Pow2": F.pow2}
        # by the enum member's name: nnabla.utils.qnn imports this package, not the reverse
        modes = {"SIM_QNN": self.SimulatedQNN}
        mode = modes.get(getattr(config.precision_mode, "name", None))
        if mode is None:
            raise ValueError(f"QuantizeRecordingToTrainingModifier: config.precision_mode "
                             f"{config.precision_mode} is not implemented (nnabla 1.39 "
                             "implements PrecisionMode.SIM_QNN only)")
        self._mode = mode(functions_ranks, self, config)

    def modify(self, f, inputs):
        return self._mode.modify(f, inputs)

    def __finish__(self):
        self._mode.__finish__()
