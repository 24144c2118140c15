"""Shared pieces of the object-detection and semantic-segmentation models: loading a
published ``.nnp`` file (downloading it when missing), keeping only the part of its network
a ``use_up_to`` key asks for, and the layers of the ``pretrained=False`` builders, which
name variables as the published files do (``<Function>_Output``, the first function of a
type unsuffixed, then ``_2``, ``_3`` ...) and parameters as nnabla-examples' scripts."""
from __future__ import annotations

import os
from collections import OrderedDict

from .. import functions as F
from .. import initializer as I
from .. import parameter as P
from ..logger import logger
from ._builder import BuiltNetwork, StopBuilding
from .utils import get_model_home, get_model_url_base, pretrained_from_env

__all__ = ["load_published", "keep_ancestors", "NamedLayers", "BuiltNetwork", "StopBuilding"]


def load_published(owner, category, rel_name, rel_url, pretrained):
    """Set ``owner.pretrained`` and ``owner.nnp`` (an ``NnpLoader``, or None when not
    pretrained) for ``<model home>/<category>/<rel_name>``, downloaded from
    ``<url base><category>/<rel_url>`` when missing.

    Raises:
        nnabla.utils.download.DownloadError: offline without the file (naming the URL and
            the path where the file can be put).
    """
    owner.pretrained = pretrained_from_env() if pretrained is None else bool(pretrained)
    owner.nnp = None
    if not owner.pretrained:
        return
    from ..utils.download import download
    from ..utils.nnp_graph import NnpLoader

    path = os.path.join(get_model_home(), category, rel_name)
    url = get_model_url_base() + f"{category}/{rel_url}"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        logger.info(f"Downloading {rel_name} from {url}")
    download(url, path, open_file=False, allow_overwrite=False)
    print(f"Loading {path}.")
    owner.nnp = NnpLoader(path)


def network_proto(nnp, name):
    """The network message ``name`` of a loaded file."""
    if name not in nnp.network_dict:
        raise ValueError(f"the model file has no network {name!r}; it has "
                         f"{nnp.get_network_names()}")
    return nnp.network_dict[name]


def variable_shape(proto, name):
    """The shape the file declares for variable ``name``."""
    for v in proto.variable:
        if v.name == name:
            return tuple(v.shape.dim)
    raise ValueError(f"the model file's network {proto.name!r} has no variable {name!r}")


def keep_ancestors(proto, target, callback):
    """Make ``callback`` drop every function of network ``proto`` that does not contribute
    to variable ``target``, so ``target`` is the network's only output.

    Returns:
        list of str: the names of the dropped functions.
    """
    producer = {o: f for f in proto.function for o in f.output}
    if target not in producer and target not in {v.name for v in proto.variable}:
        raise ValueError(f"the model file's network {proto.name!r} has no variable "
                         f"{target!r}")
    needed, stack = set(), [target]
    while stack:
        f = producer.get(stack.pop())
        if f is None or f.name in needed:
            continue
        needed.add(f.name)
        stack.extend(f.input)
    dropped = [f.name for f in proto.function if f.name not in needed]
    if dropped:
        callback.drop_function(*dropped)
    callback.use_up_to(target)
    return dropped


class NamedLayers:
    """Layers with nnabla's parametric-function parameter names, naming each function's
    output as the published files do, and stopping (:class:`StopBuilding`) at ``stop_at``.

    Args:
        training (bool): parameters need gradients, batch normalizations use batch
            statistics.
        stop_at (str): the variable to stop at.
    """

    def __init__(self, training, stop_at):
        self.training, self.stop_at = training, stop_at
        self.counts = {}
        self.variables = OrderedDict()

    def out(self, v, type_name, name=None):
        """Name ``v`` (made by a function of ``type_name``) and stop if asked."""
        k = self.counts.get(type_name, 0) + 1
        self.counts[type_name] = k
        v.name = name or (f"{type_name}_Output" if k == 1 else f"{type_name}_{k}_Output")
        self.variables[v.name] = v
        if v.name == self.stop_at:
            raise StopBuilding(v)
        return v

    def param(self, scope, name, shape, init, need_grad=None):
        if scope:
            with P.parameter_scope(scope):
                v = P.get_parameter_or_create(name, shape, init)
        else:
            v = P.get_parameter_or_create(name, shape, init)
        v.need_grad = self.training if need_grad is None else need_grad
        self.variables[f"{scope}/{name}" if scope else name] = v
        return v

    # -- layers ----------------------------------------------------------------------------
    def conv(self, scope, x, maps, kernel, pad=(0, 0), stride=(1, 1), dilation=(1, 1),
             with_bias=False):
        inmaps = x.shape[1]
        w = self.param(scope, "conv/W", (maps, inmaps) + tuple(kernel),
                       I.UniformInitializer(I.calc_uniform_lim_glorot(inmaps, maps,
                                                                      tuple(kernel))))
        b = self.param(scope, "conv/b", (maps,), I.ConstantInitializer(0)) \
            if with_bias else None
        h = F.convolution(x, w, b, base_axis=1, pad=pad, stride=stride, dilation=dilation)
        return self.out(h, "Convolution")

    def depthwise(self, scope, x, kernel, pad, stride=(1, 1), dilation=(1, 1)):
        c = x.shape[1]
        w = self.param(scope, "depthwise_conv/W", (c,) + tuple(kernel),
                       I.UniformInitializer(I.calc_uniform_lim_glorot(c, c, tuple(kernel))))
        h = F.depthwise_convolution(x, w, None, base_axis=1, pad=pad, stride=stride,
                                    dilation=dilation)
        return self.out(h, "DepthwiseConvolution")

    def bn(self, scope, x, eps=1e-5):
        shape = (1, x.shape[1], 1, 1)
        beta = self.param(scope, "bn/beta", shape, I.ConstantInitializer(0))
        gamma = self.param(scope, "bn/gamma", shape, I.ConstantInitializer(1))
        mean = self.param(scope, "bn/mean", shape, I.ConstantInitializer(0), False)
        var = self.param(scope, "bn/var", shape, I.ConstantInitializer(1), False)
        h = F.batch_normalization(x, beta, gamma, mean, var, axes=[1], decay_rate=0.9,
                                  eps=eps, batch_stat=self.training)
        return self.out(h, "BatchNormalization")

    def relu(self, x):
        return self.out(F.relu(x), "ReLU")

    def leaky_relu(self, x):
        return self.out(F.leaky_relu(x, 0.1), "LeakyReLU")
