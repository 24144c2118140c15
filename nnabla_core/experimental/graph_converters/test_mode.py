"""Converting a training graph for inference."""
from __future__ import annotations

from .batch_norm_batchstat import BatchNormBatchStatModifier
from .remove_function import RemoveFunctionModifier

__all__ = ["TestModeModifier"]


class TestModeModifier:
    """``[BatchNormBatchStatModifier(), RemoveFunctionModifier(rm_funcs)]``: batch
    normalizations use running statistics and the functions ``rm_funcs`` (e.g.
    ``'Dropout'``) are removed.

    Args:
        rm_funcs (list of str): function types to remove.

    Returns:
        list of two modifiers (a :class:`GraphConverter` flattens it).

    Example:
        >>> import nnabla.experimental.graph_converters as GC
        >>> [type(m).__name__ for m in GC.TestModeModifier(rm_funcs=['Dropout'])]
        ['BatchNormBatchStatModifier', 'RemoveFunctionModifier']
    """

    __test__ = False  # not a pytest test class

    def __new__(cls, rm_funcs=[]):
        return [BatchNormBatchStatModifier(), RemoveFunctionModifier(rm_funcs=rm_funcs)]
