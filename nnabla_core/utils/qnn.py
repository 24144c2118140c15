"""Quantization-aware training (``nnabla.utils.qnn``), as in nnabla 1.39.

A float network goes through three states (:class:`QNNState`):

1. ``NON_QNN``: the float network as built.
2. ``RECORDING``: :class:`~nnabla.experimental.graph_converters.QuantizeNonQNNToRecordingModifier`
   puts *recorders* in front of the inputs of the functions: identity functions that, while
   training, keep statistics of what flows through them (a running or moving-average max,
   min/max or absolute max) in parameters named ``M-<name>`` and ``m-<name>``.
3. ``TRAINING``: the recorders are removed and
   :class:`~nnabla.experimental.graph_converters.QuantizeRecordingToTrainingModifier`
   inserts ``QuantizeLinear``/``DequantizeLinear`` pairs (simulated 8-bit quantization)
   whose scales come from the recorded statistics (:meth:`get_scale_zeropoint` of the
   recorder callbacks: parameters ``scale-<name>`` and ``zeropoint-<name>``).

:class:`QATScheduler` moves registered networks through these states at the iterations
given by a :class:`QATConfig`.

Scales, for ``n_bits = 8`` (integer range ``[-128, 127]``) and ``d = 255`` (``254`` with
``narrow_range``):

- min/max recorders (:class:`MinMaxMinMaxRecorder`, :class:`MinMaxMvaRecorder`):
  ``scale = max(M - m, 1e-24) / d``;
- max recorders (:class:`MaxMaxRecorder`, :class:`MaxMvaRecorder`,
  :class:`AbsMaxRecorder`): ``scale = 2 M / d``;
- with a rounding method other than ``'NOTROUND'`` the scale becomes a power of two,
  ``2 ** round(log(scale) / log(2))`` with ``round`` one of ceil, round (half to even)
  or floor; the zero point is 0 (int8).

Differences from nnabla 1.39:

- nnabla's recorders pass no gradient on in their backward pass (they overwrite the output
  gradient with the input's and give that back), so nothing before a recorder learns during
  recording; here a recorder is a straight-through identity in both directions.
- ``get_scale_zeropoint`` of the callbacks is a static method (nnabla defines it without
  ``self`` and calls it on the class; both ways of calling work here).
- ``QATScheduler`` clears the device memory cache only when the configured extension is
  installed (nnabla fails on a machine without CUDA with ``ext_name='cudnn'``, the default),
  and scales the learning rate by ``learning_rate_scale`` once when quantized training
  starts (nnabla scales it once per registered network, so by 0.01 with a training and an
  evaluation network).

Example:
    >>> import numpy as np, nnabla as nn
    >>> from nnabla.utils.qnn import MaxMvaRecorderCallback
    >>> x = nn.Variable.from_numpy_array(np.array([[0.5, -2.0, 3.0]]))
    >>> with nn.parameter_scope('qnn-doc'):
    ...     y = MaxMvaRecorderCallback()(x, name='x0')
    ...     y.forward()
    ...     scale, zp = MaxMvaRecorderCallback.get_scale_zeropoint(x, name='x0')
    >>> M = nn.get_parameters(grad_only=False)['qnn-doc/M-x0']
    >>> M.shape, round(M.d.item(), 6)        # 0.99 * 0 + 0.01 * 3
    ((1, 1), 0.03)
    >>> round(scale.d.item(), 9), zp.d.item()   # 2 * 0.03 / 255, not rounded by default
    (0.000235294, 0)
    >>> nn.clear_parameters()
"""
from __future__ import annotations

from enum import Enum

import numpy as np

from .. import functions as F
from .. import parameter as _parameter
from ..experimental import graph_converters as GC
from ..function import PythonFunction
from ..initializer import ConstantInitializer

__all__ = [
    "AbsMaxRecorder", "AbsMaxRecorderCallback", "FunctionsRankRecorder", "MaxMaxRecorder",
    "MaxMaxRecorderCallback", "MaxMvaRecorder", "MaxMvaRecorderCallback",
    "MinMaxMinMaxRecorder", "MinMaxMinMaxRecorderCallback", "MinMaxMvaRecorder",
    "MinMaxMvaRecorderCallback", "PrecisionMode", "QATConfig", "QATScheduler",
    "QATTensorRTConfig", "QNNState", "abs_max_recorder", "max_max_recorder",
    "max_mva_recorder", "minmax_minmax_recorder", "minmax_mva_recorder",
    "qat_default_config",
]

_N_BITS = 8
# the rounding applied to log2(scale) for each QATConfig.RoundingMethod value
_ROUNDINGS = {"CEIL": np.ceil, "ROUND": np.round, "FLOOR": np.floor, "NOTROUND": None}


# -- recorders ----------------------------------------------------------------------------
class _Recorder(PythonFunction):
    """An identity function that, when ``training``, updates statistics of its input kept
    in its other inputs (each of shape ``(1,) * x.ndim``). Subclasses name the statistics
    (:attr:`_stats`) and define :meth:`_update`."""

    _stats = ("M",)

    def __init__(self, ctx, training=True):
        super().__init__(ctx)
        self.training = training

    @property
    def name(self):
        return type(self).__name__

    def min_outputs(self):
        return 1

    def setup_impl(self, inputs, outputs):
        n = 1 + len(self._stats)
        if len(inputs) != n:
            raise ValueError(f"{self.name}: takes {n} inputs (data, "
                             f"{', '.join(self._stats)}); given {len(inputs)}")
        x = inputs[0]
        for stat, v in zip(self._stats, inputs[1:]):
            if v.ndim != x.ndim or int(np.prod(v.shape)) != 1:
                raise ValueError(f"{self.name}: input '{stat}' must have shape "
                                 f"{(1,) * x.ndim} (one element, ndim of the data); "
                                 f"given {tuple(v.shape)}")
        outputs[0].reset_shape(x.shape, True)

    def forward_impl(self, inputs, outputs):
        x = inputs[0].data
        outputs[0].data.copy_from(x)
        if self.training:
            self._update(x, *[v.data for v in inputs[1:]])

    def _update(self, x, *stats):
        raise NotImplementedError

    def backward_impl(self, inputs, outputs, propagate_down, accum):
        # straight-through: the gradient passes unchanged to the data (see the module doc)
        if not propagate_down[0]:
            return
        dx, dy = inputs[0].grad, outputs[0].grad
        if accum[0]:
            dx += dy
        else:
            dx.copy_from(dy)

    def grad_depends_output_data(self, i, o):
        return False

    def grad_depends_input_data(self, i, j):
        return False


class _MvaRecorder(_Recorder):
    """A recorder keeping moving averages: ``s <- decay * s + (1 - decay) * batch_s``."""

    def __init__(self, ctx, decay=0.99, training=True):
        super().__init__(ctx, training)
        self.decay = decay

    def _average(self, stat, batch):
        F.identity(self.decay * stat + (1 - self.decay) * batch, outputs=[stat])


class MinMaxMinMaxRecorder(_Recorder):
    """Records the smallest minimum and the largest maximum of the batches seen in training
    (inputs: data, ``m``, ``M``; ``m`` and ``M`` start at 0, so ``m <= 0 <= M``).

    Args:
        ctx (nnabla.Context): context.
        training (bool): update the statistics in the forward pass.
    """

    _stats = ("m", "M")

    def _update(self, x, m, M):
        F.minimum2(m, F.min(x, keepdims=True), outputs=[m])
        F.maximum2(M, F.max(x, keepdims=True), outputs=[M])


class AbsMaxRecorder(_Recorder):
    """Records the largest absolute value of the batches seen in training (inputs: data,
    ``M``).

    Args:
        ctx (nnabla.Context): context.
        training (bool): update the statistic in the forward pass.
    """

    def _update(self, x, M):
        F.maximum2(M, F.max(F.abs(x), keepdims=True), outputs=[M])


class MinMaxMvaRecorder(_MvaRecorder):
    """Records moving averages of the batch minimum and maximum (inputs: data, ``m``,
    ``M``).

    Args:
        ctx (nnabla.Context): context.
        decay (float): ``s <- decay * s + (1 - decay) * batch statistic``.
        training (bool): update the statistics in the forward pass.
    """

    _stats = ("m", "M")

    def _update(self, x, m, M):
        self._average(m, F.min(x, keepdims=True))
        self._average(M, F.max(x, keepdims=True))


class MaxMaxRecorder(_Recorder):
    """Records the largest maximum of the batches seen in training (inputs: data, ``M``).

    Args:
        ctx (nnabla.Context): context.
        training (bool): update the statistic in the forward pass.
    """

    def _update(self, x, M):
        F.maximum2(M, F.max(x, keepdims=True), outputs=[M])


class MaxMvaRecorder(_MvaRecorder):
    """Records a moving average of the batch maximum (inputs: data, ``M``).

    Args:
        ctx (nnabla.Context): context.
        decay (float): ``M <- decay * M + (1 - decay) * max(batch)``.
        training (bool): update the statistic in the forward pass.
    """

    def _update(self, x, M):
        self._average(M, F.max(x, keepdims=True))


def _current_context():
    from ..context import get_current_context
    return get_current_context()


def minmax_minmax_recorder(x, m, M, training=True):
    """:class:`MinMaxMinMaxRecorder` on ``x`` with statistics ``m``, ``M``."""
    return MinMaxMinMaxRecorder(_current_context(), training)(x, m, M)


def abs_max_recorder(x, M, training=True):
    """:class:`AbsMaxRecorder` on ``x`` with statistic ``M``."""
    return AbsMaxRecorder(_current_context(), training)(x, M)


def minmax_mva_recorder(x, m, M, decay=0.99, training=True):
    """:class:`MinMaxMvaRecorder` on ``x`` with statistics ``m``, ``M``."""
    return MinMaxMvaRecorder(_current_context(), decay, training)(x, m, M)


def max_max_recorder(x, M, training=True):
    """:class:`MaxMaxRecorder` on ``x`` with statistic ``M``."""
    return MaxMaxRecorder(_current_context(), training)(x, M)


def max_mva_recorder(x, M, decay=0.99, training=True):
    """:class:`MaxMvaRecorder` on ``x`` with statistic ``M``."""
    return MaxMvaRecorder(_current_context(), decay, training)(x, M)


# -- recorder callbacks: create the statistics parameters and compute scales -----------------
def _param_exists(name):
    return _parameter.get_parameter(name) is not None


def _quantization_params(stat_shape, scale, round_method, name):
    """The parameters ``scale-<name>`` and ``zeropoint-<name>`` of the current scope (created
    from ``scale``, rounded to a power of two unless ``round_method`` is 'NOTROUND'; an
    existing pair is returned unchanged)."""
    if round_method not in _ROUNDINGS:
        raise ValueError(f"get_scale_zeropoint: argument 'round_method' must be one of "
                         f"{sorted(_ROUNDINGS)}; given {round_method!r}")
    rounding = _ROUNDINGS[round_method]
    if rounding is not None:
        # a statistic still at 0 (nothing recorded) gives a zero scale, as in nnabla
        with np.errstate(divide="ignore"):
            scale = 2 ** rounding(np.log(scale) / np.log(2))
    zero_point = np.zeros(stat_shape, dtype=np.int8)
    zp = _parameter.get_parameter_or_create(f"zeropoint-{name}", zero_point.shape, zero_point,
                                            False)
    s = _parameter.get_parameter_or_create(f"scale-{name}", scale.shape, scale, False)
    return s, zp


def _int_range(narrow_range):
    low, high = -2 ** (_N_BITS - 1), 2 ** (_N_BITS - 1) - 1
    return high - low - (1 if narrow_range else 0)


class _RecorderCallback:
    """Builds a recorder with its statistics parameters (``<stat>-<name>`` in the current
    parameter scope, zeros at creation) and turns recorded statistics into a scale."""

    _function = None
    _stats = ("M",)

    def name(self):
        """The recorder's function name (the class name without ``Callback``)."""
        n = type(self).__name__
        return n[:n.rfind("Callback")]

    def __call__(self, x, axes=[1], training=True, name=''):
        """The recorder on ``x`` (``axes`` is accepted for nnabla's signature; the statistics
        are per tensor)."""
        shape = [1] * x.ndim
        stats = [_parameter.get_parameter_or_create(f"{s}-{name}", shape, ConstantInitializer())
                 for s in self._stats]
        return type(self)._function(x, *stats, training=training)


class _MinMaxCallback(_RecorderCallback):
    _stats = ("m", "M")

    @staticmethod
    def get_scale_zeropoint(x, axes=[1], narrow_range=False, round_method='NOTROUND', name=''):
        """``(scale, zero_point)`` parameters from the recorded ``m-<name>`` and ``M-<name>``
        of the current scope: ``max(M - m, 1e-24) / (255 or 254)``; ``(None, None)`` when
        no recorder was there."""
        if not _param_exists(f"m-{name}") and not _param_exists(f"M-{name}"):
            return None, None
        shape = [1] * x.ndim
        m = _parameter.get_parameter_or_create(f"m-{name}", shape)
        M = _parameter.get_parameter_or_create(f"M-{name}", shape)
        scale = np.maximum(M.d - m.d, 1e-24) / _int_range(narrow_range)
        return _quantization_params(M.shape, scale, round_method, name)


class _MaxCallback(_RecorderCallback):
    @staticmethod
    def get_scale_zeropoint(x, axes=[1], narrow_range=False, round_method='NOTROUND', name=''):
        """``(scale, zero_point)`` parameters from the recorded ``M-<name>`` of the current
        scope: ``2 M / (255 or 254)``; ``(None, None)`` when no recorder was there."""
        if not _param_exists(f"M-{name}"):
            return None, None
        M = _parameter.get_parameter_or_create(f"M-{name}", [1] * x.ndim)
        scale = (2 * M.d) / _int_range(narrow_range)
        return _quantization_params(M.shape, scale, round_method, name)


class MinMaxMinMaxRecorderCallback(_MinMaxCallback):
    """Creates :class:`MinMaxMinMaxRecorder` recorders (``recorder(x, axes=[1],
    training=True, name='')``) and their scales (:meth:`get_scale_zeropoint`)."""
    _function = staticmethod(minmax_minmax_recorder)


class AbsMaxRecorderCallback(_MaxCallback):
    """Creates :class:`AbsMaxRecorder` recorders and their scales."""
    _function = staticmethod(abs_max_recorder)


class MinMaxMvaRecorderCallback(_MinMaxCallback):
    """Creates :class:`MinMaxMvaRecorder` recorders and their scales."""
    _function = staticmethod(minmax_mva_recorder)


class MaxMaxRecorderCallback(_MaxCallback):
    """Creates :class:`MaxMaxRecorder` recorders and their scales."""
    _function = staticmethod(max_max_recorder)


class MaxMvaRecorderCallback(_MaxCallback):
    """Creates :class:`MaxMvaRecorder` recorders and their scales."""
    _function = staticmethod(max_mva_recorder)


# -- configuration ------------------------------------------------------------------------
class PrecisionMode(Enum):
    """How the training graph computes: quantized functions only (``QNN``),
    quantize/dequantize pairs around float functions (``SIM_QNN``, the only one the
    converter implements, as in nnabla), or a mix (``MIXED_QNN``)."""
    QNN = 0
    SIM_QNN = 1
    MIXED_QNN = 2


class QNNState(Enum):
    """The states of a network in quantization-aware training."""
    NON_QNN = 0
    RECORDING = 1
    TRAINING = 2
    DEPLOYMENT = 3


class QATConfig:
    """Settings of quantization-aware training (class attributes; set them on an instance).

    Attributes:
        ext_name (str): extension whose memory cache the scheduler clears ('cudnn').
        zero_point (bool): asymmetric quantization (False).
        dtype: integer type of the quantized values (``np.int8``).
        precision_mode (PrecisionMode): ``SIM_QNN``.
        channel_last (bool): the network is channel-last (False).
        channel_wise (bool): channel-wise quantization (False; not used).
        niter_to_recording (int): step at which recording starts (0).
        niter_to_training (int): step at which quantized training starts (-1: unset).
        pow2 (RoundingMethod): rounding of the scales to powers of two (``ROUND``).
        narrow_range (bool): integer range without its lowest value (False).
        round_mode (str): round mode of ``QuantizeLinear`` ('HALF_TO_EVEN').
        bn_folding, bn_self_folding (bool): fold batch normalizations first (False).
        recorder_weight: recorder callback class of parameters
            (:class:`MinMaxMinMaxRecorderCallback`).
        recorder_activation: recorder callback class of activations
            (:class:`MaxMvaRecorderCallback`).
        record_layers (list of str): function types to record; empty: all.
        recorder_position (RecorderPosition): ``BEFORE`` a function, or ``BOTH`` sides.
        skip_inputs_layers (list of str): function types left float when no function of
            the same type precedes them (['Convolution', 'Deconvolution']).
        skip_outputs_layers (list of str): function types left float when no function of
            the same type follows them (['Affine']).
        learning_rate_scale (float): learning-rate factor for quantized training (0.1).
        skip_bias (bool): keep the biases float (False).
    """

    ext_name = "cudnn"
    zero_point = False
    dtype = np.int8
    precision_mode = PrecisionMode.SIM_QNN
    channel_last = False
    channel_wise = False
    niter_to_recording = 0
    niter_to_training = -1

    class RoundingMethod(Enum):
        """Rounding of ``log2(scale)``: ceil, round (half to even), floor, or none."""
        CEIL = 'CEIL'
        ROUND = 'ROUND'
        FLOOR = 'FLOOR'
        NOTROUND = 'NOTROUND'

    pow2 = RoundingMethod.ROUND
    narrow_range = False
    round_mode = 'HALF_TO_EVEN'
    bn_folding = False
    bn_self_folding = False
    recorder_weight = MinMaxMinMaxRecorderCallback
    recorder_activation = MaxMvaRecorderCallback
    record_layers = []

    class RecorderPosition(Enum):
        """Where recorders go: before a function's inputs, or also after its output."""
        BEFORE = 0
        BOTH = 1

    recorder_position = RecorderPosition.BEFORE
    skip_inputs_layers = ['Convolution', 'Deconvolution']
    skip_outputs_layers = ['Affine']
    learning_rate_scale = 0.1
    skip_bias = False


class QATTensorRTConfig(QATConfig):
    """:class:`QATConfig` for TensorRT deployment: power-of-two scales, batch normalizations
    folded, recorders on convolutions, affines, batch matmuls and ReLUs."""
    pow2 = QATConfig.RoundingMethod.ROUND
    bn_folding = True
    bn_self_folding = True
    record_layers = ["Convolution", "Deconvolution", "Affine", "BatchMatmul", "ReLU"]
    # nnabla 1.39 spells this attribute so (QATConfig's is recorder_position)
    record_position = QATConfig.RecorderPosition.BEFORE


qat_default_config = QATTensorRTConfig()


class FunctionsRankRecorder:
    """A ``Variable.visit`` callback numbering the functions of a graph in visit order
    (``functions_ranks``: function -> rank), leaving out functions used only in training.

    Args:
        functions_only_for_training (list of str): function types not numbered.
    """

    def __init__(self, functions_only_for_training=['ImageAugmentation', 'Dropout']):
        self.functions_only_for_training = functions_only_for_training
        self.rank = 0
        self.functions_ranks = {}

    def __call__(self, f):
        if f.info.type_name in self.functions_only_for_training:
            return
        self.functions_ranks[f] = self.rank
        self.rank += 1


# -- scheduler ----------------------------------------------------------------------------
class QATScheduler:
    """Moves registered networks from float to recording to quantized training at the steps
    ``config.niter_to_recording`` and ``config.niter_to_training``.

    Args:
        config (QATConfig): settings (default: ``qat_default_config``, a
            :class:`QATTensorRTConfig`); ``niter_to_training`` must be set, and larger
            than ``niter_to_recording``.
        solver (nnabla.solvers.Solver): the solver, re-given the parameters after each
            conversion that folds batch normalizations, and whose learning rate is
            multiplied by ``config.learning_rate_scale`` when quantized training starts.

    As in nnabla 1.39, each converted output is given ``need_grad = False`` when recording
    starts, which stops the backward pass at it: the parameters before it no longer receive
    gradients from a loss computed on it.

    Example:
        ``sched = QATScheduler(config, solver); sched(pred); sched(vpred, training=False)``,
        then ``sched.step()`` at every iteration and ``sched.save('qnn.nnp', vimage)``.
    """

    def __init__(self, config=qat_default_config, solver=None):
        if config.niter_to_training <= 0 or config.niter_to_recording < 0:
            raise ValueError(
                f"QATScheduler: config.niter_to_recording must be >= 0 and "
                f"config.niter_to_training > 0; given {config.niter_to_recording} and "
                f"{config.niter_to_training}")
        if config.niter_to_training - config.niter_to_recording <= 0:
            raise ValueError(
                f"QATScheduler: config.niter_to_training ({config.niter_to_training}) must "
                f"be larger than config.niter_to_recording ({config.niter_to_recording}), "
                "by more than the steps of one epoch")
        self.config = config
        self.solver = solver
        self.counter = 0
        self.state = QNNState.NON_QNN
        self.registry = []

    def __call__(self, pred, training=True):
        """Register the network output ``pred`` (a training or, with ``training=False``, an
        evaluation network) to be converted in place."""
        self.registry.append((pred, training))

    def _register_params(self, solver):
        if solver is None or not (self.config.bn_folding or self.config.bn_self_folding):
            return
        solver.set_parameters(_parameter.get_parameters(grad_only=True))

    def _set_qat_learning_rate(self):
        self.solver.set_learning_rate(self.solver.learning_rate()
                                      * self.config.learning_rate_scale)

    def _fold_bn(self, pred):
        cfg = self.config
        modifiers = []
        if cfg.bn_folding:
            modifiers += [GC.BatchNormalizationFoldingModifier(opposite=False,
                                                               channel_last=cfg.channel_last),
                          GC.BatchNormalizationFoldingModifier(opposite=True,
                                                               channel_last=cfg.channel_last)]
        if cfg.bn_self_folding:
            modifiers.append(GC.BatchNormalizationSelfFoldingModifier())
        if modifiers:
            # fused batch normalizations are expanded first so that they fold too
            modifiers.insert(0, GC.UnfusedBatchNormalizationModifier())
            pred.rewire_on(GC.GraphConverter(modifiers).convert(pred))
        return pred

    def _clear_memory_cache(self):
        if self.config.ext_name not in ("cuda", "cudnn"):
            return
        from ..ext_utils import import_extension_module
        try:
            ext = import_extension_module(self.config.ext_name)
        except (ImportError, ValueError):
            return      # the extension is not installed here: nothing to clear
        ext.clear_memory_cache()

    def _schedule_to_recording(self):
        for i, (pred, training) in enumerate(self.registry):
            pred = self._fold_bn(pred)
            ranks = FunctionsRankRecorder()
            pred.visit(ranks)
            recording = GC.GraphConverter([GC.QuantizeNonQNNToRecordingModifier(
                ranks.functions_ranks, config=self.config, training=training)]).convert(pred)
            pred.rewire_on(recording)
            pred.need_grad = False
            self._register_params(self.solver)
            self.registry[i] = (pred, training)
            self.state = QNNState.RECORDING
            print(f"QNNState.NON_QNN -> QNNState.RECORDING: graph={pred}")

    def _schedule_to_training(self):
        cfg = self.config
        for i, (pred, training) in enumerate(self.registry):
            remove = GC.RemoveFunctionModifier(rm_funcs=[cfg.recorder_activation().name(),
                                                         cfg.recorder_weight().name()])
            pred.rewire_on(GC.GraphConverter([remove]).convert(pred))
            ranks = FunctionsRankRecorder()
            pred.visit(ranks)
            quantized = GC.GraphConverter([GC.QuantizeRecordingToTrainingModifier(
                ranks.functions_ranks, config=cfg)]).convert(pred)
            pred.rewire_on(quantized)
            self._register_params(self.solver)
            self.registry[i] = (pred, training)
            self.state = QNNState.TRAINING
            print(f"QNNState.RECORDING -> QNNState.TRAINING: graph={pred}")
        if self.solver is not None:
            self._set_qat_learning_rate()

    def step(self):
        """Advance one iteration; convert the registered networks when the iteration count
        reaches ``niter_to_recording`` or ``niter_to_training``."""
        if self.counter == self.config.niter_to_recording:
            self._clear_memory_cache()
            self._schedule_to_recording()
        elif self.counter == self.config.niter_to_training:
            self._clear_memory_cache()
            self._schedule_to_training()
        self.counter += 1

    def save(self, fname, inputs, batch_size=1, net_name='net', deploy=False):
        """Save the registered evaluation networks (``training=False``) to an NNP file.

        Args:
            fname (str): NNP file name.
            inputs (nnabla.Variable or list of them): the network inputs.
            batch_size (int): batch size written in the file.
            net_name (str): network name.
            deploy (bool): deployment conversion; not supported (as in nnabla 1.39).
        """
        if deploy:
            raise NotImplementedError("QATScheduler.save: deploy=True is not supported "
                                      "(nnabla 1.39 does not implement it either)")
        from .save import save

        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        for pred, training in self.registry:
            if training:
                continue
            outputs = list(pred) if isinstance(pred, (list, tuple)) else [pred]
            names = {f"x{k}": v for k, v in enumerate(inputs)}
            outs = {f"y{k}": v for k, v in enumerate(outputs)}
            save(fname, {
                "networks": [{"name": net_name, "batch_size": batch_size,
                              "outputs": outs, "names": names}],
                "executors": [{"name": "runtime", "network": net_name,
                               "data": list(names), "outputs": list(outs)}],
            })
