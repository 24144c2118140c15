"""Building a model's architecture directly (``pretrained=False``), with the variable and
parameter names of nnabla's published ``.nnp`` files (Neural Network Console naming:
layer ``Convolution_3`` has parameters ``Convolution_3/conv/W``; inside a repeat block
``RepeatStart_4`` the i-th copy's output is ``Convolution_27_RepeatStart_4[i]`` and its
parameters ``Convolution_27[i]/conv/W``)."""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

import numpy as np

from .. import functions as F
from .. import initializer as I
from .. import parameter as P
from .. import random


class StopBuilding(Exception):
    """Raised when the ``use_up_to`` variable has been made."""

    def __init__(self, variable):
        super().__init__(variable.name)
        self.variable = variable


class BuiltNetwork:
    """What ``returns_net=True`` gives without a .nnp file (as
    :class:`nnabla.utils.nnp_graph.NnpNetwork`): ``inputs``, ``outputs`` and ``variables``
    dicts, name -> :class:`nnabla.Variable`."""

    def __init__(self, inputs, outputs, variables):
        self.inputs, self.outputs, self.variables = inputs, outputs, variables


class _GlorotUniform:
    """Glorot uniform values (PF's default initialiser), drawn in float32 by a generator
    seeded from ``nnabla.random.prng`` (so ``nn.seed`` reproduces them): far faster than
    float64 normals, which matters for the 100M parameters of SENet-154. Called only when
    the parameter does not exist yet."""

    def __init__(self, fan_in, fan_out):
        self.limit = np.float32(np.sqrt(6.0 / (fan_in + fan_out)))

    def __call__(self, shape):
        rng = np.random.default_rng(random.prng.randint(2 ** 31))
        values = rng.random(shape, dtype=np.float32)
        values *= 2 * self.limit
        values -= self.limit
        return values


class Builder:
    """Creates named layers; stops (:class:`StopBuilding`) at ``stop_at``.

    Args:
        training (bool): batch normalizations use batch statistics and parameters need
            gradients; dropouts are kept.
        stop_at (str): the variable to stop at (a ``use_up_to`` key's variable).
        global_pooling (tuple): (name of the final average pooling, force, check).
        prefix (str): the unit the layers are made in (``'VGG11/'``); variables and
            parameter scopes alike (``prefix`` and ``scope_prefix`` afterwards).
        reserved (iterable of str): full variable names :meth:`auto` never gives (those a
            model names explicitly, out of graph order).

    ``aux_outputs`` collects the outputs of auxiliary towers, which ``returns_net`` lists
    before the last variable.
    """

    def __init__(self, training, stop_at, global_pooling=(None, False, True), prefix="",
                 reserved=()):
        self.training = training
        self.stop_at = stop_at
        self.pool_name, self.force_global, self.check_global = global_pooling
        self.prefix = self.scope_prefix = prefix
        self.variables = OrderedDict()
        self.reserved = set(reserved)
        self.aux_outputs = []
        self._counters = {}

    # -- names ---------------------------------------------------------------------
    def _names(self, name, rep):
        """(variable name, parameter scope) of layer ``name`` in repeat ``rep``."""
        if rep is None:
            return self.prefix + name, self.scope_prefix + name
        rid, i = rep
        return f"{self.prefix}{name}_{rid}[{i}]", f"{self.scope_prefix}{name}[{i}]"

    @contextmanager
    def unit(self, name, rep=None):
        """Layers made inside are those of unit (sub-network) ``name``: variables
        ``<unit>/<layer>``, parameters ``<unit>/<layer>/...``; layer numbers restart."""
        saved = self.prefix, self.scope_prefix
        vname, scope = self._names(name, rep)
        self.prefix, self.scope_prefix = vname + "/", scope + "/"
        try:
            yield
        finally:
            self.prefix, self.scope_prefix = saved

    def auto(self, kind):
        """The next free layer name of ``kind`` in the current unit, in Neural Network
        Console's style (``Convolution``, ``Convolution_2``, ...), skipping the names in
        ``reserved`` (those the ``use_up_to`` keys give to particular layers)."""
        number = self._counters.get((self.prefix, kind), 0)
        while True:
            number += 1
            name = kind if number == 1 else f"{kind}_{number}"
            if self.prefix + name not in self.reserved:
                break
        self._counters[(self.prefix, kind)] = number
        return name

    def mark(self):
        """The numbering state, for :meth:`rewind`: every copy of a repeat block has
        the same layer names."""
        return dict(self._counters)

    def rewind(self, mark):
        self._counters = dict(mark)

    def out(self, name, v, rep=None):
        """Name ``v`` as layer ``name``'s output; stop there if asked."""
        vname = self._names(name, rep)[0]
        v.name = vname
        self.variables[vname] = v
        if vname == self.stop_at:
            raise StopBuilding(v)
        return v

    def param(self, scope, name, shape, init):
        with P.parameter_scope(scope):
            v = P.get_parameter_or_create(name, shape, init, need_grad=self.training)
        v.need_grad = self.training
        self.variables[f"{scope}/{name}"] = v
        return v

    # -- layers ----------------------------------------------------------------------
    def conv(self, name, x, maps, kernel, pad=(0, 0), stride=(1, 1), group=1,
             with_bias=False, rep=None):
        _, scope = self._names(name, rep)
        inmaps = x.shape[1]
        shape = (maps, inmaps // group) + tuple(kernel)
        k = int(np.prod(kernel))
        w = self.param(scope, "conv/W", shape,
                       _GlorotUniform(inmaps // group * k, maps * k // group))
        b = self.param(scope, "conv/b", (maps,), I.ConstantInitializer(0)) if with_bias \
            else None
        h = F.convolution(x, w, b, base_axis=1, pad=pad, stride=stride, group=group)
        return self.out(name, h, rep)

    def depthwise(self, name, x, kernel, pad=(0, 0), stride=(1, 1), with_bias=False,
                  rep=None):
        """Depthwise convolution (parameters ``depthwise_conv/W`` of shape
        ``(channels,) + kernel``, as PF.depthwise_convolution's)."""
        _, scope = self._names(name, rep)
        shape = (x.shape[1],) + tuple(kernel)
        k = int(np.prod(kernel))
        w = self.param(scope, "depthwise_conv/W", shape, _GlorotUniform(k, k))
        b = self.param(scope, "depthwise_conv/b", shape[:1], I.ConstantInitializer(0)) \
            if with_bias else None
        h = F.depthwise_convolution(x, w, b, base_axis=1, pad=pad, stride=stride)
        return self.out(name, h, rep)

    def bn(self, name, x, rep=None):
        _, scope = self._names(name, rep)
        shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        beta = self.param(scope, "bn/beta", shape, I.ConstantInitializer(0))
        gamma = self.param(scope, "bn/gamma", shape, I.ConstantInitializer(1))
        mean = self.param(scope, "bn/mean", shape, I.ConstantInitializer(0))
        var = self.param(scope, "bn/var", shape, I.ConstantInitializer(1))
        mean.need_grad = var.need_grad = False
        h = F.batch_normalization(x, beta, gamma, mean, var, axes=[1], decay_rate=0.9,
                                  eps=1e-4, batch_stat=self.training)
        return self.out(name, h, rep)

    def affine(self, name, x, n, rep=None):
        _, scope = self._names(name, rep)
        fan_in = int(np.prod(x.shape[1:]))
        w = self.param(scope, "affine/W", (fan_in, n), _GlorotUniform(fan_in, n))
        b = self.param(scope, "affine/b", (n,), I.ConstantInitializer(0))
        return self.out(name, F.affine(x, w, b), rep)

    def relu(self, name, x, rep=None):
        return self.out(name, F.relu(x, inplace=False), rep)

    def add2(self, name, a, b, rep=None):
        return self.out(name, F.add2(a, b), rep)

    def max_pool(self, name, x, kernel, stride, ignore_border=True, pad=(0, 0), rep=None):
        return self.out(name, F.max_pooling(x, kernel, stride, ignore_border, pad), rep)

    def concat(self, name, xs, rep=None):
        return self.out(name, F.concatenate(*xs, axis=1), rep)

    def sigmoid(self, name, x, rep=None):
        return self.out(name, F.sigmoid(x), rep)

    def mul2(self, name, a, b, rep=None):
        return self.out(name, F.mul2(a, b), rep)

    def channel_shuffle(self, name, x, groups, rep=None):
        """ShuffleNet's channel shuffle: channels (g, c/g) reordered to (c/g, g)."""
        n, c, height, width = x.shape
        h = F.reshape(x, (n, groups, c // groups, height, width))
        h = F.transpose(h, (0, 2, 1, 3, 4))
        return self.out(name, F.reshape(h, (n, c, height, width)), rep)

    def dropout(self, name, x, p=0.5, rep=None):
        if not self.training:
            return x
        return self.out(name, F.dropout(x, p), rep)

    def reshape(self, name, x, shape):
        return self.out(name, F.reshape(x, shape))

    def avg_pool(self, name, x, kernel, stride, ignore_border=False, pad=(0, 0),
                 including_pad=True, rep=None):
        """Average pooling; the model's final pooling obeys force/check_global_pooling."""
        if rep is None and self.prefix + name == self.pool_name:
            spatial = tuple(x.shape[2:])
            if self.force_global:
                kernel = stride = spatial
            elif self.check_global and (tuple(kernel) != spatial or tuple(stride) != spatial):
                raise ValueError(
                    f"Stride configuration of average pooling is not for global pooling. "
                    f"Given image shape is {list(spatial)}, whereas pooling window size is "
                    f"{list(kernel)} and its stride is {list(stride)}. "
                    f"Consider using force_global_pooling=True")
        h = F.average_pooling(x, kernel, stride, ignore_border, pad,
                              including_pad=including_pad)
        return self.out(name, h, rep)
