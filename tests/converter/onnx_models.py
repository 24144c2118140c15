"""ResNet- and MobileNet-style ONNX models written with onnx.helper (random weights)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


class _Model:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def weight(self, shape, scale=0.3, positive=False):
        self.count += 1
        name = f"w{self.count}"
        value = self.rng.uniform(0.5, 1.5, shape) if positive else \
            self.rng.randn(*shape) * scale
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def node(self, op, inputs, **attrs):
        self.count += 1
        out = f"t{self.count}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=f"n{self.count}", **attrs))
        return out

    def conv_bn(self, x, cin, cout, k=3, stride=1, group=1, act="Relu"):
        w = self.weight((cout, cin // group, k, k))
        h = self.node("Conv", [x, w], kernel_shape=[k, k], pads=[k // 2] * 4,
                      strides=[stride, stride], group=group)
        h = self.node("BatchNormalization",
                      [h, self.weight((cout,), positive=True), self.weight((cout,)),
                       self.weight((cout,)), self.weight((cout,), positive=True)],
                      epsilon=1e-5)
        if act == "Relu":
            return self.node("Relu", [h])
        if act == "Relu6":
            return self.node("Clip", [h, self._scalar(0.0), self._scalar(6.0)])
        return h

    def _scalar(self, value):
        self.count += 1
        name = f"c{self.count}"
        self.inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
        return name

    def head(self, h, channels, classes):
        h = self.node("GlobalAveragePool", [h])
        h = self.node("Flatten", [h], axis=1)
        h = self.node("Gemm", [h, self.weight((classes, channels)), self.weight((classes,))],
                      transB=1)
        return self.node("Softmax", [h], axis=1)

    def build(self, name, x_shape, out, out_shape):
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, out_shape)],
            initializer=self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def resnet_like(batch=2):
    m = _Model(0)
    h = m.conv_bn("x", 3, 8)
    h = m.node("MaxPool", [h], kernel_shape=[2, 2], strides=[2, 2])
    for cin, cout, stride in ((8, 8, 1), (8, 16, 2)):
        y = m.conv_bn(h, cin, cout, stride=stride)
        y = m.conv_bn(y, cout, cout, act=None)
        skip = h if (cin, stride) == (cout, 1) else m.conv_bn(h, cin, cout, k=1,
                                                              stride=stride, act=None)
        h = m.node("Relu", [m.node("Add", [y, skip])])
    out = m.head(h, 16, 5)
    return m.build("resnet_like", [batch, 3, 16, 16], out, [batch, 5])


def mobilenet_like(batch=2):
    m = _Model(1)
    h = m.conv_bn("x", 3, 8, stride=2, act="Relu6")
    for cin, cout, stride in ((8, 16, 1), (16, 16, 2)):
        h = m.conv_bn(h, cin, cin, stride=stride, group=cin, act="Relu6")     # depthwise
        h = m.conv_bn(h, cin, cout, k=1, act="Relu6")                         # pointwise
    out = m.head(h, 16, 4)
    return m.build("mobilenet_like", [batch, 3, 16, 16], out, [batch, 4])
