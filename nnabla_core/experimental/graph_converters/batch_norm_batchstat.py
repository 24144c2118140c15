"""Setting ``batch_stat=False`` in every batch normalization."""
from __future__ import annotations

from .graph_converter import FunctionModifier

__all__ = ["BatchNormBatchStatModifier"]


class BatchNormBatchStatModifier(FunctionModifier):
    """Rebuild ``BatchNormalization``, ``FusedBatchNormalization`` and
    ``SyncBatchNormalization`` with ``batch_stat=False`` (running statistics).

    Example:
        >>> import nnabla as nn, nnabla.parametric_functions as PF
        >>> import nnabla.experimental.graph_converters as GC
        >>> nn.clear_parameters()
        >>> y = PF.batch_normalization(nn.Variable((2, 3)), batch_stat=True)
        >>> yy = GC.GraphConverter([GC.BatchNormBatchStatModifier()]).convert(y)
        >>> yy.parent.info.args['batch_stat']
        False
    """

    _fct_set = ("BatchNormalization", "FusedBatchNormalization", "SyncBatchNormalization")

    def connect(self, fname, inputs, args):
        """``fname`` on ``inputs`` with ``args`` and ``batch_stat=False``."""
        args = dict(args)
        args["batch_stat"] = False
        return self._call_function(fname, inputs, args)

    def modify(self, f, inputs):
        if f.info.type_name not in self._fct_set:
            return None
        return self.connect(f.info.type_name, inputs, f.info.args)
