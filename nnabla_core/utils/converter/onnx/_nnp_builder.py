"""Building an NNP network function by function, with shapes inferred from the spec."""
from __future__ import annotations

import numpy as np

from ... import _nnp_functions, nnabla_pb2


class NnpBuilder:
    """An NNP network under construction: variables (with concrete shapes), functions,
    parameters (from constants)."""

    def __init__(self, name, batch_size):
        self.proto = nnabla_pb2.NNablaProtoBuf()
        self.network = self.proto.network.add(name=name, batch_size=batch_size)
        self.shapes, self.kinds = {}, {}
        self._function_names, self._taken = {}, set()

    def unique(self, hint):
        name, i = hint, 0
        while name in self._taken:
            i += 1
            name = f"{hint}_{i}"
        self._taken.add(name)
        return name

    def variable(self, name, shape, kind="Buffer"):
        if name in self.shapes:
            return name
        self._taken.add(name)
        self.shapes[name], self.kinds[name] = tuple(int(d) for d in shape), kind
        v = self.network.variable.add(name=name, type=kind)
        v.shape.dim.extend(self.shapes[name])
        return name

    def parameter(self, name, values):
        """A Parameter variable holding ``values`` (float32)."""
        values = np.asarray(values, dtype=np.float32)
        name = self.variable(name if name not in self.shapes else self.unique(name),
                             values.shape, "Parameter")
        p = self.proto.parameter.add(variable_name=name, need_grad=False)
        p.shape.dim.extend(values.shape)
        p.data.extend(values.ravel().tolist())
        return name

    def add(self, kind, inputs, outputs=None, n_outputs=1, **args):
        """Function ``kind`` on ``inputs`` (names; None for an absent optional input) with
        arguments ``args`` (the others take the spec's defaults). ``outputs`` names the
        outputs (new names when None). Returns the output name(s)."""
        from ...._spec import REQUIRED, SPECS
        from ...._spec.binding import bind_args, infer

        spec = SPECS[kind]
        shapes = [None if i is None else self.shapes[i] for i in inputs]
        resolved, out_shapes = infer(spec, shapes, bind_args(spec, args), n_outputs)
        if outputs is None:
            outputs = [self.unique(f"{kind}_out") for _ in out_shapes]
        elif isinstance(outputs, str):
            outputs = [outputs]
        for name, shape in zip(outputs, out_shapes):
            self.variable(name, shape)
        f = self.network.function.add(name=self.unique(kind), type=kind)
        f.input.extend(i for i in inputs if i is not None)
        f.output.extend(outputs)
        full = {a.name: resolved.get(a.name, a.default) for a in spec.args}
        _nnp_functions.write_arguments(f, kind, {k: v for k, v in full.items()
                                                 if v is not REQUIRED})
        return outputs[0] if len(outputs) == 1 else outputs
