"""The interface shared by the object-detection models
(``nnabla.models.object_detection.base``)."""
from __future__ import annotations

import os

from .._keyed import KeyedModel
from .._published import load_published, network_proto, variable_shape


class ObjectDetection(KeyedModel):
    """Base class of the object-detection models: the published file of
    ``object_detection/<name>.nnp``, the default input shape, category names and the
    checks of ``__call__``'s input."""

    _network_name = "runtime"
    _nnp_input = "x"

    @property
    def input_shape(self):
        """The default input shape ``(channels, height, width)``."""
        return self._input_shape()

    def _input_shape(self):
        raise NotImplementedError(f"{type(self).__name__}: input size is not implemented")

    def _load_nnp(self, rel_name, rel_url, pretrained=None):
        """Load ``object_detection/<rel_name>`` from the model home, downloading it from
        ``<url base>object_detection/<rel_url>`` when missing; nothing when not
        pretrained (``pretrained=False`` or ``NNABLA_MODELS_PRETRAINED=0``)."""
        load_published(self, "object_detection", rel_name, rel_url, pretrained)

    def get_category_names(self):
        """The names of the dataset's categories, in output order."""
        if not hasattr(self, "_category_names"):
            path = os.path.join(os.path.dirname(__file__), f"{self._dataset_name}.names")
            with open(path) as fd:
                self._category_names = fd.read().splitlines()
        return self._category_names


    def get_nnp_input_size(self):
        """``(height, width)`` of the input the published file was made for."""
        proto = network_proto(self.nnp, self._network_name)
        return variable_shape(proto, self._nnp_input)[2:]

    def __call__(self, input_var=None, use_from=None, use_up_to="detection", training=False,
                 returns_net=False, verbose=0):
        """Create the network on ``input_var``.

        Args:
            input_var (nnabla.Variable, optional): NCHW RGB input (default: a new variable
                of shape ``(1,) + input_shape``).
            use_from: reserved; must be None.
            use_up_to (str): the key of the last variable (see the class's keys).
            training (bool): batch statistics in batch normalizations and trainable
                parameters.
            returns_net (bool): return the network (``inputs``, ``outputs``,
                ``variables``) instead of its last variable.
            verbose (int): verbosity of the network passes.

        Returns:
            nnabla.Variable, or the network when ``returns_net``.
        """
        raise NotImplementedError(f"{type(self).__name__}.__call__")
