"""Building a model's architecture directly (``pretrained=False``), with the variable and
parameter names of nnabla's published ``.nnp`` files (Neural Network Console naming:
layer ``Convolution_3`` has parameters ``Convolution_3/conv/W``; inside a repeat block
``RepeatStart_4`` the i-th copy's output is ``Convolution_27_RepeatStart_4[i]`` and its
parameters ``Convolution_27[i]/conv/W``)."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .. import functions as F
from .. import initializer as I
from .. import parameter as P


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


def _glorot(shape, fan_in, fan_out):
    std = np.sqrt(2.0 / (fan_in + fan_out))
    return I.NormalInitializer(std)(shape)


class Builder:
    """Creates named layers; stops (:class:`StopBuilding`) at ``stop_at``.

    Args:
        training (bool): batch normalizations use batch statistics and parameters need
            gradients; dropouts are kept.
        stop_at (str): the variable to stop at (a ``use_up_to`` key's variable).
        global_pooling (tuple): (name of the final average pooling, force, check).
    """

    def __init__(self, training, stop_at, global_pooling=(None, False, True), prefix=""):
        self.training = training
        self.stop_at = stop_at
        self.pool_name, self.force_global, self.check_global = global_pooling
        self.prefix = prefix
        self.variables = OrderedDict()

    # -- names ---------------------------------------------------------------------
    def _names(self, name, rep):
        """(variable name, parameter scope) of layer ``name`` in repeat ``rep``."""
        if rep is None:
            return self.prefix + name, self.prefix + name
        rid, i = rep
        return f"{self.prefix}{name}_{rid}[{i}]", f"{self.prefix}{name}[{i}]"

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
                       _glorot(shape, inmaps // group * k, maps * k // group))
        b = self.param(scope, "conv/b", (maps,), I.ConstantInitializer(0)) if with_bias \
            else None
        h = F.convolution(x, w, b, base_axis=1, pad=pad, stride=stride, group=group)
        return self.out(name, h, rep)

    def depthwise(self, name, x, kernel, pad=(0, 0), stride=(1, 1), rep=None):
        return self.conv(name, x, x.shape[1], kernel, pad, stride, group=x.shape[1],
                         rep=rep)

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
        w = self.param(scope, "affine/W", (fan_in, n), _glorot((fan_in, n), fan_in, n))
        b = self.param(scope, "affine/b", (n,), I.ConstantInitializer(0))
        return self.out(name, F.affine(x, w, b), rep)

    def relu(self, name, x, rep=None):
        return self.out(name, F.relu(x, inplace=False), rep)

    def add2(self, name, a, b, rep=None):
        return self.out(name, F.add2(a, b), rep)

    def max_pool(self, name, x, kernel, stride, ignore_border=True, pad=(0, 0)):
        return self.out(name, F.max_pooling(x, kernel, stride, ignore_border, pad))

    def dropout(self, name, x, p=0.5):
        if not self.training:
            return x
        return self.out(name, F.dropout(x, p))

    def reshape(self, name, x, shape):
        return self.out(name, F.reshape(x, shape))

    def avg_pool(self, name, x, kernel, stride, ignore_border=False, pad=(0, 0)):
        """Average pooling; the model's final pooling obeys force/check_global_pooling."""
        if self.prefix + name == self.pool_name:
            spatial = tuple(x.shape[2:])
            if self.force_global:
                kernel = stride = spatial
            elif self.check_global and (tuple(kernel) != spatial or tuple(stride) != spatial):
                raise ValueError(
                    f"Stride configuration of average pooling is not for global pooling. "
                    f"Given image shape is {list(spatial)}, whereas pooling window size is "
                    f"{list(kernel)} and its stride is {list(stride)}. "
                    f"Consider using force_global_pooling=True")
        return self.out(name, F.average_pooling(x, kernel, stride, ignore_border, pad))
