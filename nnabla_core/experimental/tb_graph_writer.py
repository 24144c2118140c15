"""Show nnabla graphs, scalars and histograms in TensorBoard
(``nnabla.experimental.tb_graph_writer``), through the tensorboardX package.

Example:
    >>> import nnabla as nn, nnabla.functions as F, nnabla.parametric_functions as PF
    >>> from nnabla.experimental.tb_graph_writer import TBGraphWriter
    >>> nn.clear_parameters()
    >>> x = nn.Variable((2, 3, 4, 4))
    >>> with nn.parameter_scope("c1"):
    ...     h = F.relu(PF.convolution(x, 8, (3, 3), pad=(1, 1)))
    >>> y = PF.affine(h, 10, name="f1")
    >>> import tempfile
    >>> with TBGraphWriter(log_dir=tempfile.mkdtemp()) as tb:
    ...     tb.from_variable(y, output_name="y")
    ...     tb.add_scalar("loss", 0.5, 0)

Then ``tensorboard --logdir=<log_dir>`` shows the graph (GRAPHS tab) and the curves.
"""
from __future__ import annotations

try:
    import tensorboardX.proto.event_pb2 as event_pb2
    from tensorboardX import SummaryWriter
    from tensorboardX.proto.attr_value_pb2 import AttrValue
    from tensorboardX.proto.graph_pb2 import GraphDef
    from tensorboardX.proto.node_def_pb2 import NodeDef
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboardX.proto.types_pb2 import DT_FLOAT
    from tensorboardX.proto.versions_pb2 import VersionDef
except ImportError as error:   # pragma: no cover - depends on the environment
    raise ModuleNotFoundError(
        "nnabla.experimental.tb_graph_writer needs the package tensorboardX "
        "(pip install tensorboardX, or the 'tensorboard' extra of nnabla); it could not be "
        "imported: " + str(error), name="tensorboardX") from error

from ..parameter import get_parameters

__all__ = ["TBGraphWriter"]


def _variable_node(name, shape, inputs):
    dims = TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])
    return NodeDef(name=name, op="Variable", input=list(inputs),
                   attr={"shape": AttrValue(shape=dims), "dtype": AttrValue(type=DT_FLOAT)})


def _function_node(name, op, inputs, args):
    text = ",".join(f"{k}={v}" for k, v in args.items()).encode("utf-8")
    return NodeDef(name=name, op=op, input=list(inputs),
                   attr={"parameters": AttrValue(s=text)})


class _Names:
    """Unique node names: ``base``, then ``base_1``, ``base_2`` ..."""

    def __init__(self):
        self.used = set()

    def __call__(self, base):
        name, n = base, 0
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name


class TBGraphWriter(SummaryWriter):
    """A tensorboardX ``SummaryWriter`` that also writes nnabla graphs.

    Everything of ``SummaryWriter`` is available (``add_scalar``, ``add_histogram``,
    ``add_image`` ..., use as a context manager); :meth:`from_variable` adds the graph
    that computes a variable. Parameters appear under their scoped names, and functions
    in the scope of their first parameter (``c1/Convolution``), so TensorBoard groups
    layers.

    Args:
        log_dir (str): folder of the event files (``tensorboard --logdir=<log_dir>``).
        comment (str): suffix of the default folder name (as tensorboardX).
        **kwargs: further ``SummaryWriter`` arguments.

    Raises:
        ImportError: on import, when tensorboardX is not installed (naming the package).
    """

    def __init__(self, log_dir="log_out", comment="", **kwargs):
        super().__init__(log_dir, comment, **kwargs)

    def _add_graph_def(self, nodes):
        graph = GraphDef(node=nodes, versions=VersionDef(producer=22))
        event = event_pb2.Event(graph_def=graph.SerializeToString())
        writer = getattr(self, "file_writer", None) or self._get_file_writer()
        writer.add_event(event)

    def from_variable(self, leaf, output_name="output"):
        """Write the graph computing ``leaf``.

        Args:
            leaf (nnabla.Variable): the graph's output (e.g. a network's loss).
            output_name (str): the node name of ``leaf``.
        """
        param_names = {v: k for k, v in get_parameters(grad_only=False).items()}
        functions = []
        leaf.visit(functions.append)
        names = _Names()
        var_nodes = {}      # variable -> node name
        nodes = []

        def variable(v, producer=None):
            key = v     # variables compare and hash by graph node
            if key in var_nodes:
                return var_nodes[key]
            if key in param_names:
                name = names(param_names[key])
            elif v == leaf:
                name = names(output_name)
            elif producer is None:
                name = names("Input")
            else:
                name = names(f"{producer}/output")
            var_nodes[key] = name
            nodes.append(_variable_node(name, v.shape, [producer] if producer else []))
            return name

        for f in functions:
            inputs = [variable(v) for v in f.inputs]
            scope = next((param_names[v].rsplit("/", 1)[0] for v in f.inputs
                          if v in param_names and "/" in param_names[v]), "")
            fname = names(f"{scope}/{f.info.type_name}" if scope else f.info.type_name)
            nodes.append(_function_node(fname, f.info.type_name, inputs, f.info.args))
            for v in f.outputs:
                variable(v, fname)
        if leaf.parent is None:
            variable(leaf)
        self._add_graph_def(nodes)

    def from_graph_def(self, graph_def):
        """Write a network of :mod:`nnabla.core.graph_def` (a ``ProtoNetwork``, or a
        ``ProtoGraph`` whose default network is written).

        Args:
            graph_def: e.g. ``nnabla.graph_def.load("model.nnp")`` or
                ``nnabla.graph_def.create_graph_from_variable("net", y)``.
        """
        network = graph_def.default_graph() if hasattr(graph_def, "default_graph") \
            else graph_def
        nodes, producers = [], {}
        for fname, f in network.functions.items():
            for o in f.outputs:
                producers[o] = fname
        for name, v in list(network.parameters.items()) + list(network.variables.items()):
            nodes.append(_variable_node(name, v.shape,
                                        [producers[name]] if name in producers else []))
        for fname, f in network.functions.items():
            args = {}
            proto = getattr(f, "proto", None)
            if proto is not None:
                from google.protobuf import text_format
                for field, value in proto.ListFields():
                    if field.name.endswith("_param"):
                        args = {"param": text_format.MessageToString(
                            value, as_one_line=True)}
            nodes.append(_function_node(fname, f.type, f.inputs, args))
        self._add_graph_def(nodes)
