"""Graph converters (``nnabla.experimental.graph_converters``): rewrite a computation graph
with a list of modifiers, e.g. fold batch normalizations or change the tensor layout.

Example:
    >>> import nnabla.experimental.graph_converters as GC
    >>> gc = GC.GraphConverter([GC.BatchNormalizationFoldingModifier()])
"""
from .batch_norm_batchstat import BatchNormBatchStatModifier
from .batch_normalization_folding import (
    AddBiasModifier,
    BatchNormalizationFoldingModifier,
    BatchNormalizationFoldingModifierInner,
    BatchNormalizationFoldingOppositeModifierInner,
)
from .batch_normalization_self_folding import BatchNormalizationSelfFoldingModifier
from .channel_first import ChannelFirstModifier
from .channel_last import ChannelLastModifier
from .fused_batch_normalization import FusedBatchNormalizationModifier
from .graph_converter import FunctionModifier, GraphConverter
from .identity import IdentityModifier
from .no_grad import NoGradModifier
from .prune import PruningModifier
from .quantize import QuantizeNonQNNToRecordingModifier, QuantizeRecordingToTrainingModifier
from .remove_function import RemoveFunctionModifier
from .test_mode import TestModeModifier
from .unfused_batch_normalization import UnfusedBatchNormalizationModifier

__all__ = [
    "AddBiasModifier", "BatchNormBatchStatModifier", "BatchNormalizationFoldingModifier",
    "BatchNormalizationFoldingModifierInner", "BatchNormalizationFoldingOppositeModifierInner",
    "BatchNormalizationSelfFoldingModifier", "ChannelFirstModifier", "ChannelLastModifier",
    "FunctionModifier", "FusedBatchNormalizationModifier", "GraphConverter",
    "IdentityModifier", "NoGradModifier", "PruningModifier", "QuantizeNonQNNToRecordingModifier",
    "QuantizeRecordingToTrainingModifier", "RemoveFunctionModifier",
    "TestModeModifier", "UnfusedBatchNormalizationModifier",
]
