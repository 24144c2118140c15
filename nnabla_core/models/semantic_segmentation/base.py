"""The interface shared by the semantic-segmentation models
(``nnabla.models.semantic_segmentation.base``)."""
from __future__ import annotations

import os

from .._keyed import KeyedModel
from .._published import load_published


class SemanticSegmentation(KeyedModel):
    """Base class of the semantic-segmentation models: the published file of
    ``semantic_segmentation/<name>.nnp``, the default input shape, category names and the
    checks of ``__call__``'s input."""

    _network_name = "runtime"
    _nnp_input = "x"

    @property
    def input_shape(self):
        """The default input shape ``(channels, height, width)``."""
        return self._input_shape()

    @property
    def category_names(self):
        """The names of the PASCAL VOC categories, as nnabla lists them (the 20 object
        categories of ``object_detection/voc.names``; the model's output channel 0 is the
        background, so channel ``i`` is ``category_names[i - 1]``)."""
        if not hasattr(self, "_category_names"):
            path = os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                "object_detection", "voc.names")
            with open(path) as fd:
                self._category_names = fd.read().splitlines()
        return self._category_names

    def _input_shape(self):
        raise NotImplementedError(f"{type(self).__name__}: input size is not implemented")

    def _load_nnp(self, rel_name, rel_url, pretrained=None):
        """Load ``semantic_segmentation/<rel_name>`` from the model home, downloading it
        from ``<url base>semantic_segmentation/<rel_url>`` when missing; nothing when not
        pretrained (``pretrained=False`` or ``NNABLA_MODELS_PRETRAINED=0``)."""
        load_published(self, "semantic_segmentation", rel_name, rel_url, pretrained)


    def __call__(self, input_var=None, use_from=None, use_up_to="segmentation",
                 training=False, returns_net=False, verbose=0):
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
