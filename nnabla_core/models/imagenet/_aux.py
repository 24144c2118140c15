"""Models with auxiliary classifier towers (GoogLeNet, InceptionV3): nnabla 1.39's
``with_aux_tower`` argument, for published files and built architectures alike."""
from __future__ import annotations

from .base import ImageNetBase


class AuxTowerModel(ImageNetBase):
    """An :class:`ImageNetBase` whose training network has auxiliary classifiers.

    A subclass names the ``use_up_to`` keys of its auxiliary classifiers (``_AUX_KEYS``)
    and of the points where the towers branch off (``_BRANCH_KEYS``), and the functions of
    the published file to drop with the towers (``_AUX_DROP``, the loss only) or without
    them (``_BRANCH_DROP``, the whole tower).
    """

    _nnp_network = "Train"
    _with_aux_tower = False

    def __call__(self, input_var=None, use_from=None, use_up_to="classifier", training=False,
                 force_global_pooling=False, check_global_pooling=True, returns_net=False,
                 verbose=0, with_aux_tower=False):
        """Create the network, as :meth:`ImageNetBase.__call__`.

        Args:
            with_aux_tower (bool): also create the auxiliary towers (training only); the
                result is then the list of the towers' outputs (without their classifier
                layers, which nnabla drops with the losses) and the ``use_up_to`` variable
                (or the network, with ``returns_net``).

        Raises:
            ValueError: ``with_aux_tower=True`` with ``training=False``.
        """
        if with_aux_tower and not training:
            raise ValueError(f"{type(self).__name__}: with_aux_tower=True needs "
                             f"training=True (the auxiliary towers are for training only)")
        self._with_aux_tower = with_aux_tower
        try:
            result = super().__call__(input_var, use_from, use_up_to, training,
                                      force_global_pooling, check_global_pooling,
                                      returns_net or with_aux_tower, verbose)
        finally:
            self._with_aux_tower = False
        if with_aux_tower and not returns_net:
            return list(result.outputs.values())
        return result

    def _configure_nnp(self, callback, input_var, training):
        super()._configure_nnp(callback, input_var, training)
        keys, drops = ((self._AUX_KEYS, self._AUX_DROP) if self._with_aux_tower
                       else (self._BRANCH_KEYS, self._BRANCH_DROP))
        for key in keys:
            callback.use_up_to(self._KEY_VARIABLE[key])
        for names in drops:
            callback.drop_function(*names)

    def _builds_aux_tower(self, b):
        """Whether the built architecture has the towers: asked for, or the
        ``use_up_to`` variable is in one."""
        return self._with_aux_tower or b.stop_at in {
            self._KEY_VARIABLE[k] for k in self._AUX_KEYS + self._BRANCH_KEYS}
