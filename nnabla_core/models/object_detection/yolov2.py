"""YOLO v2 (``nnabla.models.object_detection.YoloV2``)."""
from __future__ import annotations

import numpy as np

from ... import functions as F
from ... import parameter as P
from ...utils.nnp_graph import NnpNetworkPass
from .._published import BuiltNetwork, NamedLayers, StopBuilding, keep_ancestors, network_proto
from .base import ObjectDetection

# Darknet-19's feature layers: (output channels, kernel size, followed by max pooling)
_DARKNET19 = ((32, 3, True), (64, 3, True),
              (128, 3, False), (64, 1, False), (128, 3, True),
              (256, 3, False), (128, 1, False), (256, 3, True),
              (512, 3, False), (256, 1, False), (512, 3, False), (256, 1, False),
              (512, 3, True),
              (1024, 3, False), (512, 1, False), (1024, 3, False), (512, 1, False),
              (1024, 3, False))
# The anchors (width, height in grid cells) of the published models, from Darknet's
# yolo-voc.cfg and yolo.cfg (nnabla-examples' object-detection/yolov2).
ANCHORS = {
    "voc": ((1.3221, 1.73145), (3.19275, 4.00944), (5.05587, 8.09892), (9.47112, 4.84053),
            (11.2364, 10.0071)),
    "coco": ((0.57273, 0.677385), (1.87446, 2.06253), (3.33843, 5.47434),
             (7.88282, 3.52778), (9.77052, 9.16828)),
}
_NUM_CLASSES = {"voc": 20, "coco": 80}


class YoloV2(ObjectDetection):
    """YOLO v2 object detector on Darknet-19 (Redmon and Farhadi, YOLO9000: Better,
    Faster, Stronger, https://arxiv.org/abs/1612.08242), trained on PASCAL VOC
    (``'voc'``, 20 categories) or MS COCO (``'coco'``, 80 categories).

    The input is an RGB image with values in [0, 255] (the network divides by 255),
    letterboxed to a multiple of 32 (see :mod:`nnabla.models.object_detection.utils`);
    the default is 416 x 416.

    Keys of ``use_up_to``:

    * ``'detection'`` (default): the detections after post-processing (sigmoid and
      softmax, boxes in image-relative coordinates, non-maximum suppression), shape
      ``(batch, 5 * H/32 * W/32, 5 + categories)``: ``x, y, w, h``, objectness, category
      probabilities.
    * ``'convdetect'``: the detection convolution's output before post-processing,
      ``(batch, 5 * (5 + categories), H/32, W/32)``.
    * ``'lastconv'``: the convolution + leaky ReLU before the detection convolution,
      ``(batch, 1024, H/32, W/32)``.

    Args:
        dataset (str): ``'voc'`` or ``'coco'``.
        pretrained (bool, optional): load nnabla's published file
            (``object_detection/yolov2-<dataset>.nnp``, downloaded when missing); False
            builds the same network with fresh parameters (named as the file's:
            ``c1/conv/W`` ... ``c21``, ``detection/conv/W``, ``biases``). Default: the
            environment variable ``NNABLA_MODELS_PRETRAINED`` (``0`` means False), else
            True.

    Example:
        >>> import nnabla as nn
        >>> from nnabla.models.object_detection import YoloV2
        >>> nn.clear_parameters()
        >>> model = YoloV2('voc', pretrained=False)
        >>> model(nn.Variable((1, 3, 416, 416)), use_up_to='convdetect').shape
        (1, 125, 13, 13)
        >>> nn.clear_parameters()
    """

    _KEY_VARIABLE = {
        "detection": "y",
        "convdetect": "Reshape_3_Output",
        "lastconv": "Reshape_3_Output",
        "Arange": "Arange_Output",
        "Arange2": "Arange_2_Output",
    }
    # the variables the keys stand for (the file's names)
    _KEY_TARGET = {"detection": "y", "convdetect": "Convolution_23_Output",
                   "lastconv": "LeakyReLU_22_Output"}
    _CALL_KEYS = ("detection", "convdetect", "lastconv")

    def __init__(self, dataset="voc", pretrained=None):
        if dataset not in _NUM_CLASSES:
            raise ValueError(f'YoloV2: dataset must be chosen from ["voc", "coco"]. Given '
                             f"{dataset!r}.")
        self._dataset_name = dataset
        name = f"yolov2-{dataset}.nnp"
        self._load_nnp(name, name, pretrained)

    def _input_shape(self):
        return (3, 416, 416)

    @property
    def num_classes(self):
        """Number of categories (20 for VOC, 80 for COCO)."""
        return _NUM_CLASSES[self._dataset_name]

    @property
    def anchors(self):
        """The five anchors ``(width, height)`` in grid cells, shape ``(5, 2)``."""
        return np.array(ANCHORS[self._dataset_name])

    def __call__(self, input_var=None, use_from=None, use_up_to="detection", training=False,
                 returns_net=False, verbose=0):
        if use_from is not None:
            raise ValueError("use_from should not be set because it is for forward "
                             "compatibility.")
        if use_up_to not in self._CALL_KEYS:
            raise ValueError(f'The key "{use_up_to}" is not present in YoloV2. Available '
                             f"keys are {list(self._CALL_KEYS)}.")
        input_var = self.get_input_var(input_var)
        h, w = input_var.shape[2:]
        if h % 32 or w % 32:
            raise ValueError(f"YoloV2: the input's height and width must be multiples of 32. "
                             f"Given {h} x {w}.")
        if self.nnp is None:
            return self._call_architecture(input_var, use_up_to, training, returns_net)
        return self._call_nnp(input_var, use_up_to, training, returns_net, verbose)

    # -- the published file -----------------------------------------------------------------
    def _call_nnp(self, input_var, use_up_to, training, returns_net, verbose):
        proto = network_proto(self.nnp, self._network_name)
        functions = {f.name: f for f in proto.function}
        b, (h, w) = input_var.shape[0], input_var.shape[2:]
        gh, gw = h // 32, w // 32
        n_out = functions["Reshape_3"].reshape_param.shape.dim[2]   # 5 + categories
        callback = NnpNetworkPass(verbose)
        callback.set_variable(self._nnp_input, input_var)
        callback.set_batch_normalization_batch_stat_all(training)
        # The file's reshapes, slices and coordinate grids hold the shapes of the input it
        # was made for; set them for this input.
        shapes = {
            "Reshape": (b, 16, 2 * gh, 2, 2 * gw, 2),     # Darknet's reorg layer ...
            "Reshape_2": (b, 256, gh, gw),                  # ... including its index bug
            "Reshape_3": (b, 5, n_out, gh, gw),
            "Reshape_4": (1, 1, 1, gw), "Reshape_5": (b, 5, 1, gh, gw),
            "Reshape_6": (1, 1, gh, 1), "Reshape_7": (b, 5, 1, gh, gw),
            "Reshape_8": (b, 5 * gh * gw, n_out),
        }
        stops = {"Slice": 2, "Slice_2": 4, "Slice_3": 5, "Slice_4": n_out}

        def set_reshape(f):
            f.proto.reshape_param.shape.dim[:] = shapes[f.name]
            return f

        def set_slice(f):
            f.proto.slice_param.stop[:] = [b, 5, stops[f.name], gh, gw]
            return f

        def set_arange(f):
            f.proto.arange_param.stop = gw if f.name == "Arange" else gh
            return f

        def set_scale(f):
            f.proto.mul_scalar_param.val = 1.0 / (gw if f.name == "MulScalar_2" else gh)
            return f

        for name in shapes:
            callback.on_generate_function_by_name(name)(set_reshape)
        for name in stops:
            callback.on_generate_function_by_name(name)(set_slice)
        for name in ("Arange", "Arange_2"):
            callback.on_generate_function_by_name(name)(set_arange)
        for name in ("MulScalar_2", "MulScalar_3"):
            callback.on_generate_function_by_name(name)(set_scale)
        self._set_biases(functions, gh, gw)
        if use_up_to == "convdetect":
            keep_ancestors(proto, functions["Reshape_3"].input[0], callback)
        elif use_up_to == "lastconv":
            keep_ancestors(proto, functions["Convolution_23"].input[0], callback)
        else:
            callback.use_up_to("y")
        if not training:
            callback.fix_parameters()
        net = self.nnp.get_network(self._network_name, batch_size=b, callback=callback)
        if returns_net:
            return net
        return list(net.outputs.values())[0]

    def _set_biases(self, functions, gh, gw):
        """Scale the file's anchors (held in grid units of the file's input size) to the
        grid of this input."""
        name = functions["Mul2"].input[1]
        with P.parameter_scope("", self.nnp._params):
            biases = P.get_parameter(name)
            if not hasattr(self, "_file_biases"):
                self._file_biases = np.array(biases.d)
            fh, fw = self.get_nnp_input_size()
            scale = np.array([fw // 32 / gw, fh // 32 / gh]).reshape(1, 1, 2, 1, 1)
            biases.d = self._file_biases * scale

    # -- pretrained=False -------------------------------------------------------------------
    def _call_architecture(self, input_var, use_up_to, training, returns_net):
        target = self._KEY_TARGET[use_up_to]
        layers = NamedLayers(training, target)
        try:
            last = self._architecture(layers, input_var)
        except StopBuilding as stop:
            last = stop.variable
        if not returns_net:
            return last
        return BuiltNetwork({self._nnp_input: input_var}, {last.name: last}, layers.variables)

    def _architecture(self, n, x):
        """Build in the order of the published file (so the functions' numbers match)."""
        def conv_bn(scope, h, maps, kernel):
            pad = (1, 1) if kernel == 3 else (0, 0)
            h = n.conv(scope, h, maps, (kernel, kernel), pad)
            return n.leaky_relu(n.bn(scope, h))

        h = n.out(F.mul_scalar(x, 1.0 / 255), "MulScalar")
        for i, (maps, kernel, pool) in enumerate(_DARKNET19[:13]):
            h = conv_bn(f"c{i + 1}", h, maps, kernel)
            if pool and i < 12:
                h = n.out(F.max_pooling(h, (2, 2), (2, 2)), "MaxPooling")
        c13 = h
        # passthrough: c13_14 and Darknet's reorg (with its indexing bug)
        r = conv_bn("c13_14", c13, 64, 1)
        b, c, hh, ww = r.shape
        r = n.out(F.reshape(r, (b, c // 4, hh, 2, ww, 2)), "Reshape")
        r = n.out(F.transpose(r, (0, 3, 5, 1, 2, 4)), "Transpose")
        r = n.out(F.reshape(r, (b, 4 * c, hh // 2, ww // 2)), "Reshape")
        h = n.out(F.max_pooling(c13, (2, 2), (2, 2)), "MaxPooling")
        for i, (maps, kernel, _) in enumerate(_DARKNET19[13:], start=14):
            h = conv_bn(f"c{i}", h, maps, kernel)
        h = conv_bn("c18_19", h, 1024, 3)
        h = conv_bn("c18_20", h, 1024, 3)
        h = n.out(F.concatenate(r, h, axis=1), "Concatenate")
        h = conv_bn("c21", h, 1024, 3)
        h = n.conv("detection", h, 5 * (5 + self.num_classes), (1, 1), with_bias=True)
        return self._activate(n, h)

    def _activate(self, n, h):
        """Boxes, objectness and category probabilities from the detection layer."""
        b, _, gh, gw = h.shape
        k = 5 + self.num_classes
        y = n.out(F.reshape(h, (b, 5, k, gh, gw)), "Reshape")

        def part(start, stop):
            return n.out(F.slice(y, (0, 0, start, 0, 0), (b, 5, stop, gh, gw)), "Slice")

        t_xy = n.out(F.sigmoid(part(0, 2)), "Sigmoid")
        t_x, t_y = F.split(t_xy, axis=2)
        n.out(t_x, "Split")
        t_y.name = "Split_Output_1"
        coords = []
        for t, size, shape in ((t_x, gw, (1, 1, 1, gw)), (t_y, gh, (1, 1, gh, 1))):
            grid = n.out(F.arange(0, size), "Arange")
            grid = n.out(F.reshape(grid, shape), "Reshape")
            t = n.out(F.add2(t, grid), "Add2")
            t = n.out(F.mul_scalar(t, 1.0 / size), "MulScalar")
            coords.append(n.out(F.reshape(t, (b, 5, 1, gh, gw)), "Reshape"))
        t_wh = n.out(F.exp(part(2, 4)), "Exp")
        anchors = self.anchors / np.array([gw, gh])
        biases = n.param("", "biases", (1, 5, 2, 1, 1), anchors.reshape(1, 5, 2, 1, 1))
        biases.d = anchors.reshape(1, 5, 2, 1, 1)
        t_wh = n.out(F.mul2(t_wh, biases), "Mul2")
        t_o = n.out(F.sigmoid(part(4, 5)), "Sigmoid")
        t_p = n.out(F.softmax(part(5, k), axis=2), "Softmax")
        y = n.out(F.concatenate(coords[0], coords[1], t_wh, t_o, t_p, axis=2), "Concatenate")
        y = n.out(F.transpose(y, (0, 1, 3, 4, 2)), "Transpose")
        y = n.out(F.reshape(y, (b, 5 * gh * gw, k)), "Reshape")
        return n.out(F.nms_detection2d(y, 0.5, 0.45, True), "NmsDetection2d", name="y")
