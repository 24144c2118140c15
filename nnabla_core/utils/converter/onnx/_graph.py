"""A small builder of ONNX graphs: unique names, constants, nodes."""
from __future__ import annotations

import numpy as np


class OnnxGraph:
    """Collects nodes and initializers; ``shapes`` holds the known tensor shapes."""

    def __init__(self, onnx, opset):
        self.onnx, self.helper, self.opset = onnx, onnx.helper, opset
        self.nodes, self.initializers, self.shapes = [], [], {}
        self._taken = set()

    def name(self, hint):
        """A tensor name not used yet, from ``hint``."""
        name, i = hint, 0
        while name in self._taken:
            i += 1
            name = f"{hint}_{i}"
        self._taken.add(name)
        return name

    def reserve(self, name):
        self._taken.add(name)

    def const(self, hint, value, dtype=np.float32):
        """An initializer holding ``value``; returns its name."""
        name = self.name(hint)
        array = np.asarray(value, dtype=dtype)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        self.shapes[name] = tuple(array.shape)
        return name

    def ints(self, hint, values):
        return self.const(hint, list(values), np.int64)

    def add(self, op, inputs, outputs=None, hint=None, shape=None, **attrs):
        """Add node ``op``; ``outputs`` (names) default to one new name. Returns the
        output name (or the list of them for several)."""
        if outputs is None:
            outputs = [self.name(hint or f"{op}_out")]
        elif isinstance(outputs, str):
            outputs = [outputs]
        self.nodes.append(self.helper.make_node(op, list(inputs), list(outputs), **attrs))
        if shape is not None and len(outputs) == 1:
            self.shapes[outputs[0]] = tuple(shape)
        return outputs[0] if len(outputs) == 1 else list(outputs)

    def reshape(self, x, shape, output=None):
        return self.add("Reshape", [x, self.ints("shape", shape)], output, shape=shape)
