"""Executors of a proto graph (the ``Executor`` messages it is saved with)."""
from __future__ import annotations


class ProtoExecutor:
    """An executor of a proto graph (the ``Executor`` message, and output renames)."""

    def __init__(self, proto):
        self.proto, self.renaming, self.network_name = proto, None, None

    @staticmethod
    def from_proto(proto):
        return ProtoExecutor(proto)

    @staticmethod
    def create_from_dict(executor, network):
        """From nnabla's executor dict (``name``, ``network``, ``data``, ``output`` as a
        list of names or a dict name -> proto variable, ``remp`` ...)."""
        from ..utils import nnabla_pb2

        remap = executor.get("remp", {})
        e = ProtoExecutor(nnabla_pb2.Executor(name=executor["name"],
                                              network_name=executor["network"]))
        e.network_name = executor.get("network")
        outputs = executor.get("output", {})
        if isinstance(outputs, dict):
            e.renaming = {v.name: n for n, v in outputs.items()}
        e.proto.no_image_normalization = executor.get("no_image_normalization", False)
        e.proto.num_evaluations = executor.get("num_evaluations", 0)
        e.proto.repeat_evaluation_type = executor.get("repeat_evaluation_type", "")
        e.proto.need_back_propagation = executor.get("need_back_propagation", False)
        for name in executor.get("data", []):
            e.proto.data_variable.add(variable_name=name, data_name=remap.get(name, name))
        for name in outputs:
            e.proto.output_variable.add(variable_name=name, data_name=remap.get(name, name))
        for name in executor.get("generator_variables", []):
            e.proto.generator_variable.add(variable_name=name, type="Constant", multiplier=0)
        for name in network.parameters:
            e.proto.parameter_variable.add(variable_name=name)
        return e

    def get_network_renaming(self):
        return self.network_name, self.renaming

    def as_proto(self):
        return self.proto
