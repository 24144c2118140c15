"""DeepLab v3+ (``nnabla.models.semantic_segmentation.DeepLabV3plus``)."""
from __future__ import annotations

from ... import functions as F
from ...utils.nnp_graph import NnpNetworkPass
from .._published import BuiltNetwork, NamedLayers, StopBuilding
from .base import SemanticSegmentation

_FILES = {("voc", 16): "DeepLabV3-voc-os-16.nnp", ("voc", 8): "DeepLabV3-voc-os-8.nnp",
          ("voc-coco", 16): "DeepLabV3-voc-coco-os-16.nnp",
          ("voc-coco", 8): "DeepLabV3-voc-coco-os-8.nnp"}


def _halve(size, times):
    for _ in range(times):
        size = (size - 1) // 2 + 1
    return size


class DeepLabV3plus(SemanticSegmentation):
    """DeepLab v3+ with an Xception-65 backbone (Chen et al., Rethinking Atrous Convolution
    for Semantic Image Segmentation, https://arxiv.org/abs/1706.05587, and Encoder-Decoder
    with Atrous Separable Convolution, https://arxiv.org/abs/1802.02611), segmenting the 20
    PASCAL VOC categories and the background (21 output channels).

    The input is an RGB image scaled to [-1, 1] and padded to the input size (see
    :mod:`nnabla.models.semantic_segmentation.utils`); the default is 513 x 513.

    Keys of ``use_up_to``:

    * ``'segmentation'`` (default): the per-pixel scores, ``(batch, 21, H, W)``.
    * ``'lastconv'``: the last batch normalization of the decoder, ``(batch, 256, H', W')``
      with ``H' = ceil(H / 4)``.
    * ``'lastconv+relu'``: ``'lastconv'`` followed by ReLU.

    Args:
        dataset (str): ``'voc'`` (trained on PASCAL VOC) or ``'voc-coco'`` (pretrained on
            MS COCO, then PASCAL VOC).
        output_stride (int): 16 (atrous rates 6, 12, 18 in the pyramid pooling) or 8
            (rates 12, 24, 36).
        pretrained (bool, optional): load nnabla's published file
            (``semantic_segmentation/DeepLabV3-<dataset>-os-<output_stride>.nnp``,
            downloaded when missing); False builds the same network with fresh parameters
            (named as the file's: ``xception_65/entry_flow/1/conv/W`` ...). Default: the
            environment variable ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else
            True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.semantic_segmentation import DeepLabV3plus
        >>> nn.clear_parameters()
        >>> model = DeepLabV3plus('voc', pretrained=False)
        >>> model(nn.Variable((1, 3, 65, 65))).shape
        (1, 21, 65, 65)
        >>> nn.clear_parameters()
    """

    _KEY_VARIABLE = {
        "segmentation": "y",
        "lastconv": "BatchNormalization_146_Output",
        "lastconv+relu": "ReLU_82_Output",
    }

    def __init__(self, dataset="voc", output_stride=16, pretrained=None):
        if dataset not in ("voc", "voc-coco"):
            raise ValueError(f'DeepLabV3plus: dataset must be chosen from ["voc", "voc-coco"]. '
                             f"Given {dataset!r}.")
        if output_stride not in (16, 8):
            raise ValueError(f"DeepLabV3plus: output_stride must be chosen from [16, 8]. "
                             f"Given {output_stride!r}.")
        self._dataset_name = dataset
        self._output_stride = output_stride
        name = _FILES[dataset, output_stride]
        self._load_nnp(name, name, pretrained)

    def _input_shape(self):
        return (3, 513, 513)

    def __call__(self, input_var=None, use_from=None, use_up_to="segmentation",
                 training=False, returns_net=False, verbose=0):
        if use_from is not None:
            raise ValueError("use_from should not be set because it is for forward "
                             "compatibility.")
        input_var = self.get_input_var(input_var)
        key_variable = self._key_variable(use_up_to)
        if self.nnp is None:
            return self._call_architecture(input_var, key_variable, training, returns_net)
        h, w = input_var.shape[2:]
        callback = NnpNetworkPass(verbose)
        callback.set_variable(self._nnp_input, input_var)
        # The file's image pooling and upsamplings hold the sizes of the input it was made
        # for; set them for this input.
        sizes = {"Interpolate": [_halve(h, 4), _halve(w, 4)],
                 "Interpolate_2": [_halve(h, 2), _halve(w, 2)],
                 "Interpolate_3": [h, w]}

        @callback.on_generate_function_by_name("AveragePooling")
        def global_pooling(f):
            size = [_halve(h, 4), _halve(w, 4)]
            f.proto.average_pooling_param.kernel.dim[:] = size
            f.proto.average_pooling_param.stride.dim[:] = size
            return f

        def output_size(f):
            f.proto.interpolate_param.output_size[:] = sizes[f.name]
            return f

        for name in sizes:
            callback.on_generate_function_by_name(name)(output_size)
        callback.set_batch_normalization_batch_stat_all(training)
        callback.use_up_to(key_variable)
        if not training:
            callback.fix_parameters()
        net = self.nnp.get_network(self._network_name, batch_size=input_var.shape[0],
                                   callback=callback)
        if returns_net:
            return net
        return list(net.outputs.values())[0]

    # -- pretrained=False -------------------------------------------------------------------
    def _call_architecture(self, input_var, key_variable, training, returns_net):
        layers = NamedLayers(training, key_variable)
        try:
            last = self._architecture(layers, input_var)
        except StopBuilding as stop:
            last = stop.variable
        if not returns_net:
            return last
        return BuiltNetwork({self._nnp_input: input_var}, {last.name: last}, layers.variables)

    def _architecture(self, n, x):
        """nnabla-examples' network, built in the order of the published file."""
        low_level, h = self._xception_65(n, x)
        rates = (6, 12, 18) if self._output_stride == 16 else (12, 24, 36)
        h = self._aspp(n, h, rates)
        h = n.relu(n.bn("concat_projection", n.conv("concat_projection", h, 256, (1, 1))))
        up = n.out(F.interpolate(h, output_size=low_level.shape[2:], mode="linear"),
                   "Interpolate")
        p = "decoder/feature_projection0"
        low = n.relu(n.bn(p, n.conv(p, low_level, 48, (1, 1))))
        h = n.out(F.concatenate(up, low, axis=1), "Concatenate")
        for i in range(2):
            h = self._separable(n, f"decoder/decoder_conv{i}", h, 256, last_block=True,
                                eps=1e-5)
        h = n.conv("decoder/logits/affine", h, 21, (1, 1), with_bias=True)
        return n.out(F.interpolate(h, output_size=x.shape[2:], mode="linear"), "Interpolate",
                     name="y")

    def _aspp(self, n, x, rates):
        # image-level features first: they are the concatenation's first input
        s = "image_pooling"
        size = x.shape[2:]
        h = n.out(F.average_pooling(x, size, size), "AveragePooling")
        h = n.relu(n.bn(s, n.conv(s, h, 256, (1, 1))))
        pool = n.out(F.interpolate(h, output_size=size, mode="linear"), "Interpolate")
        branches = [n.relu(n.bn("aspp0", n.conv("aspp0", x, 256, (1, 1))))]
        for i, rate in enumerate(rates):
            branches.append(self._separable(n, f"aspp{i + 1}", x, 256, rate=rate, atrous=True,
                                            last_block=True, eps=1e-5))
        return n.out(F.concatenate(pool, *branches, axis=1), "Concatenate")

    def _separable(self, n, scope, x, maps, stride=False, atrous=False, rate=1, act=True,
                   last_block=False, eps=1e-3, end_point=None):
        """Depthwise 3x3 + BN (+ ReLU in the last blocks), pointwise 1x1 + BN (+ ReLU)."""
        d = f"{scope}/depthwise"
        if stride:
            h = n.depthwise(d, x, (3, 3), (1, 1), (2, 2))
        elif atrous:
            h = n.depthwise(d, x, (3, 3), (rate, rate), dilation=(rate, rate))
        else:
            h = n.depthwise(d, x, (3, 3), (1, 1))
        h = n.bn(d, h, eps)
        if last_block:
            h = n.relu(h)
        p = f"{scope}/pointwise"
        h = n.bn(p, n.conv(p, h, maps, (1, 1)), eps)
        if end_point is not None:
            end_point.append(h)
        return n.relu(h) if act else h

    def _unit(self, n, scope, x, depths, stride=False, atrous=False, rate=1, last_block=False,
              end_point=None):
        h = x if last_block else n.relu(x)
        for i, maps in enumerate(depths):
            h = self._separable(n, f"{scope}/separable_conv{i + 1}", h, maps,
                                stride=stride and i == 2, atrous=atrous, rate=rate,
                                act=i < 2, last_block=last_block,
                                end_point=end_point if i == 1 else None)
        return h

    def _shortcut(self, n, scope, x, maps, stride):
        s = f"{scope}/shortcut"
        h = n.conv(s, x, maps, (1, 1), stride=(2, 2) if stride else (1, 1))
        return n.bn(s, h, 1e-3)

    def _xception_65(self, n, x):
        """The backbone: (low-level features at stride 4, features at stride 16)."""
        e = "xception_65/entry_flow"
        h = n.relu(n.bn(f"{e}/1", n.conv(f"{e}/1", x, 32, (3, 3), (1, 1), (2, 2)), 1e-3))
        h = n.relu(n.bn(f"{e}/2", n.conv(f"{e}/2", h, 64, (3, 3), (1, 1)), 1e-3))
        end_point = []
        for i, maps in enumerate((128, 256, 728)):
            s = f"{e}/block{i + 1}/unit_1"
            u = self._unit(n, s, h, (maps,) * 3, stride=True,
                           end_point=end_point if i == 1 else None)
            h = n.out(F.add2(u, self._shortcut(n, s, h, maps, True)), "Add2")
        m = "xception_65/middle_flow/block1"
        for i in range(16):
            h = n.out(F.add2(self._unit(n, f"{m}/unit_{i + 1}", h, (728,) * 3), h), "Add2")
        x1 = "xception_65/exit_flow/block1/unit_1"
        u = self._unit(n, x1, h, (728, 1024, 1024), atrous=True)
        h = n.out(F.add2(u, self._shortcut(n, x1, h, 1024, False)), "Add2")
        h = self._unit(n, "xception_65/exit_flow/block2/unit_1", h, (1536, 1536, 2048),
                       atrous=True, rate=2, last_block=True)
        return end_point[0], n.relu(h)
