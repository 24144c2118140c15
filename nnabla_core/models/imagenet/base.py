"""The interface shared by the ImageNet models (``nnabla.models.imagenet.base``)."""
from __future__ import annotations

import os

from ...logger import logger
from ...utils.nnp_graph import NnpNetworkPass
from .._builder import Builder, BuiltNetwork, StopBuilding
from .._keyed import KeyedModel
from ..utils import get_model_home, get_model_url_base_from_env, pretrained_from_env

# Where nnabla's maintainers publish the ImageNet files since August 2025 (after 1.39, which
# read them from nnabla.org's pretrained-models folder).
IMAGENET_RECORD = "https://zenodo.org/records/16962677/files/"


class ImageNetBase(KeyedModel):
    """Base class of the ImageNet models.

    A subclass names its published file (``_published``: the stem of
    ``imagenet/<stem>.nnp``, downloaded from ``imagenet/<stem>/<stem>.nnp``), its input size
    (``_input_size``), the variables its ``use_up_to`` keys name (``_KEY_VARIABLE``), how
    the file's network is adapted (``_configure_nnp``) and, for ``pretrained=False``, its
    architecture (``_architecture``).
    """

    _published = None
    _input_size = (3, 224, 224)
    _nnp_input = "InputX"
    _augmentation = "ImageAugmentationX"
    _pool_name = "AveragePooling"
    _dropouts = ()
    _nnp_network = "Training"

    @property
    def category_names(self):
        """The names of the 1000 ImageNet classes, in output order."""
        if not hasattr(self, "_category_names"):
            path = os.path.join(os.path.dirname(__file__), "category_names.txt")
            with open(path) as fd:
                self._category_names = fd.read().splitlines()
        return self._category_names

    def __init__(self, pretrained=None):
        self._load_nnp(self._published, pretrained)

    @property
    def input_shape(self):
        """The default input shape ``(channels, height, width)``."""
        return self._input_size

    def _load_nnp(self, stem, pretrained=None, rel_name=None):
        """Load ``imagenet/<stem>.nnp`` (or ``imagenet/<rel_name>``) from the model home,
        downloading it when missing: from ``$NNABLA_MODELS_URL_BASE/imagenet/<stem>/<stem>.nnp``
        when that variable is set (nnabla 1.39's layout), else from the Zenodo record where
        nnabla's maintainers publish the files since 2025. Nothing with ``pretrained=False``
        (or ``NNABLA_MODELS_PRETRAINED=0``)."""
        rel_name = rel_name or f"{stem}.nnp"
        self._rel_name = rel_name
        self.pretrained = pretrained_from_env() if pretrained is None else bool(pretrained)
        self.nnp = None
        if not self.pretrained:
            return
        from ...utils.download import download
        from ...utils.nnp_graph import NnpLoader

        path_nnp = os.path.join(get_model_home(), "imagenet", rel_name)
        base = get_model_url_base_from_env()
        url = (IMAGENET_RECORD + f"{stem}.nnp" if base is None
               else base.rstrip("/") + f"/imagenet/{stem}/{stem}.nnp")
        os.makedirs(os.path.dirname(path_nnp), exist_ok=True)
        if not os.path.exists(path_nnp):
            logger.info(f"Downloading {rel_name} from {url}")
        download(url, path_nnp, open_file=False, allow_overwrite=False)
        print(f"Loading {path_nnp}.")
        self.nnp = NnpLoader(path_nnp)


    def configure_global_average_pooling(self, callback, force_global_pooling,
                                         check_global_pooling, name, by_type=False):
        """Make pooling ``name`` global, or check that it is."""
        if force_global_pooling:
            callback.force_average_pooling_global(name, by_type=by_type)
        elif check_global_pooling:
            callback.check_average_pooling_global(name, by_type=by_type)

    def _format_dict(self):
        return {}

    def __call__(self, input_var=None, use_from=None, use_up_to="classifier", training=False,
                 force_global_pooling=False, check_global_pooling=True, returns_net=False,
                 verbose=0):
        """Create the network on ``input_var``.

        Args:
            input_var (nnabla.Variable, optional): NCHW input (default: a new variable of
                shape ``(1,) + input_shape``).
            use_from: reserved; must be None.
            use_up_to (str): the key of the last variable (see the class's keys).
            training (bool): batch statistics in batch normalizations, trainable
                parameters, dropouts kept.
            force_global_pooling (bool): make the final average pooling global whatever
                the input size.
            check_global_pooling (bool): raise ValueError when the final average pooling
                is not global for this input size.
            returns_net (bool): return the network (``inputs``, ``outputs``,
                ``variables``) instead of its last variable.
            verbose (int): verbosity of the network passes.

        Returns:
            nnabla.Variable, or the network when ``returns_net``.
        """
        if use_from is not None:
            raise ValueError("use_from should not be set because it is for forward "
                             "compatibility.")
        input_var = self.get_input_var(input_var)
        key_variable = self._key_variable(use_up_to, **self._format_dict())
        if self.nnp is None:
            return self._call_architecture(input_var, key_variable, training,
                                           force_global_pooling, check_global_pooling,
                                           returns_net)
        callback = NnpNetworkPass(verbose)
        self._configure_nnp(callback, input_var, training)
        if self._pool_name is not None:
            self.configure_global_average_pooling(
                callback, force_global_pooling, check_global_pooling,
                self._pool_name.format(**self._format_dict()))
        callback.set_batch_normalization_batch_stat_all(training)
        callback.use_up_to(key_variable)
        if not training:
            for name in self._dropouts:
                callback.remove_and_rewire(name.format(**self._format_dict()))
            callback.fix_parameters()
        net = self.nnp.get_network(self._nnp_network, batch_size=input_var.shape[0],
                                   callback=callback)
        if returns_net:
            return net
        return list(net.outputs.values())[0]

    def _configure_nnp(self, callback, input_var, training):
        callback.remove_and_rewire(self._augmentation)
        callback.set_variable(self._nnp_input, input_var)

    def _call_architecture(self, input_var, key_variable, training, force_global_pooling,
                           check_global_pooling, returns_net):
        pool = self._pool_name and self._pool_name.format(**self._format_dict())
        builder = Builder(training, key_variable,
                          (pool, force_global_pooling, check_global_pooling))
        try:
            last = self._architecture(builder, input_var)
        except StopBuilding as stop:
            last = stop.variable
        if last.name != key_variable:
            raise RuntimeError(f"{type(self).__name__}: the architecture did not make "
                               f"variable {key_variable!r}")
        if not returns_net:
            return last
        outputs = {v.name: v for v in builder.aux_outputs + [last]}
        return BuiltNetwork({self._nnp_input: input_var}, outputs, builder.variables)

    def _architecture(self, builder, x):
        raise NotImplementedError(
            f"{type(self).__name__}: pretrained=False (NNABLA_MODELS_PRETRAINED=0) is not "
            f"available for this model yet; its architecture is built from the published "
            f".nnp file only")
