"""Save networks, their execution settings and parameters (``nnabla.utils.save``).

:func:`save` writes ``contents`` (a dict, described below) as an ``.nnp`` archive
(``nnp_version.txt``, ``network.nntxt``, ``parameter.h5`` or ``parameter.protobuf``, as
nnabla 1.39 lays it out), as protobuf text (``.nntxt``/``.prototxt``) or as binary protobuf
(``.protobuf``). :func:`create_proto` gives the ``NNablaProtoBuf`` message alone.

``contents`` keys (all optional):

* ``'networks'``: list of ``{'name', 'batch_size', 'outputs': {name: Variable},
  'names': {name: Variable}}``; the graph behind ``outputs`` is stored.
* ``'executors'``: list of ``{'name', 'network', 'data': [names], 'output': [names],
  'remp': {name: data name}, 'generator_variables': [names], 'no_image_normalization',
  'num_evaluations', 'repeat_evaluation_type', 'need_back_propagation'}``.
* ``'optimizers'``: list of ``{'name', 'solver', 'network', 'dataset', 'weight_decay',
  'lr_decay', 'lr_decay_interval', 'update_interval', 'data_variables', 'loss_variables',
  'generator_variables'}``.
* ``'monitors'``: list of ``{'name', 'network', 'dataset', 'data_variables',
  'monitor_variables', 'generator_variables'}``.
* ``'datasets'``: list of ``{'name', 'uri', 'cache_dir', 'variables', 'shuffle',
  'batch_size', 'no_image_normalization'}``.
* ``'training_config'``: ``{'max_epoch', 'iter_per_epoch', 'save_best'}``;
  ``'global_config'``: ``{'default_context': nn.Context}``.

Example:
    >>> import io, nnabla as nn, nnabla.parametric_functions as PF
    >>> from nnabla.utils.save import save
    >>> nn.clear_parameters()
    >>> x = nn.Variable((4, 3))
    >>> y = PF.affine(x, 2, name="fc")
    >>> contents = {"networks": [{"name": "net", "batch_size": 4, "outputs": {"y": y},
    ...                           "names": {"x": x}}],
    ...             "executors": [{"name": "runtime", "network": "net",
    ...                            "data": ["x"], "output": ["y"]}]}
    >>> buffer = io.StringIO()
    >>> save(buffer, contents, extension=".nntxt")
    >>> "type: \\"Affine\\"" in buffer.getvalue()
    True
    >>> nn.clear_parameters()
"""
from __future__ import annotations

import os
import tempfile

from .. import parameter as _parameter
from .._spec.wire import SOLVER_FIELDS
from . import _nnp_archive, _nnp_parameters, nnabla_pb2
from ._nnp_schema import solver_arguments
from ._nnp_writer import network_proto
from .nnp_format import nnp_version

__all__ = ["create_proto", "save"]


class _Built:
    """The messages built so far, for references between sections."""

    def __init__(self):
        self.networks, self.datasets = {}, {}


def _network_ports(network):
    """Buffer inputs and outputs of a ``Network`` message, as nnabla computes them."""
    parents, readers = set(), set()
    for f in network.function:
        parents.update(f.output)
        readers.update(f.input)
    buffers = [v.name for v in network.variable if v.type == "Buffer"]
    inputs = [n for n in buffers if n not in parents and n in readers]
    outputs = [n for n in buffers if n in parents and n not in readers]
    params = [v.name for v in network.variable if v.type == "Parameter"]
    return inputs, outputs, params, set(buffers) | set(params)


def _create_network(net, variable_batch_size):
    names = dict(net.get("names", {}))
    names.update(net["outputs"])
    params = _parameter.get_parameters(grad_only=False)
    proto = network_proto(net["name"], list(net["outputs"].values()), names, params,
                          variable_batch_size=variable_batch_size)
    proto.batch_size = int(net["batch_size"])
    return proto


def _dataset_names(names, known, section, strict):
    if isinstance(names, (list, tuple)):
        for name in names:
            if name not in known:
                raise ValueError(f"nnabla.utils.save: {section} names dataset {name!r}, which "
                                 f"'datasets' does not define")
        return list(names)
    if isinstance(names, str) and (names in known or not strict):
        return [names] if names in known else []
    return []


def _solver_type(solver):
    return str(solver.name).removesuffix("Cuda")


def _create_optimizer(built, spec, save_solver_in_proto):
    o = nnabla_pb2.Optimizer(name=spec["name"])
    network = built.networks.get(spec.get("network")) if built.networks else None
    o.network_name = network.name if network is not None else "None"
    o.dataset_name.extend(_dataset_names(spec.get("dataset", []), built.datasets,
                                         f"optimizer {spec['name']!r}", strict=False))
    solver = spec["solver"]
    o.solver.type = _solver_type(solver)
    if o.solver.type in SOLVER_FIELDS:
        field = getattr(o.solver, SOLVER_FIELDS[o.solver.type][0])
        field.SetInParent()
        for arg, _ in solver_arguments(o.solver.type):
            if arg in solver.info:
                setattr(field, arg, solver.info[arg])
    o.solver.weight_decay = spec.get("weight_decay", 0)
    o.solver.lr_decay = spec.get("lr_decay", 0)
    o.solver.lr_decay_interval = spec.get("lr_decay_interval", 0)
    o.update_interval = spec.get("update_interval", 0)
    for var_name, data_name in spec.get("data_variables", {}).items():
        o.data_variable.add(variable_name=var_name, data_name=data_name)
    if network is not None:
        _, outputs, params, _ = _network_ports(network)
        for loss in spec.get("loss_variables", outputs):
            o.loss_variable.add(variable_name=loss)
    else:
        params = list(_parameter.get_parameters(grad_only=False))
    trained = set(solver.get_parameters())
    for param in params:
        o.parameter_variable.add(variable_name=param,
                                 learning_rate_multiplier=1.0 if param in trained else 0.0)
    for name in spec.get("generator_variables", []):
        o.generator_variable.add(variable_name=name, type="Constant", multiplier=0)
    if save_solver_in_proto:
        solver.set_states_to_protobuf(o)
    return o


def _create_monitor(built, spec):
    if spec["network"] not in built.networks:
        raise ValueError(f"nnabla.utils.save: monitor {spec['name']!r} uses network "
                         f"{spec['network']!r}, which 'networks' does not define")
    m = nnabla_pb2.Monitor(name=spec["name"], network_name=spec["network"])
    m.dataset_name.extend(_dataset_names(spec.get("dataset", []), built.datasets,
                                         f"monitor {spec['name']!r}", strict=True))
    if not m.dataset_name:
        raise ValueError(f"nnabla.utils.save: monitor {spec['name']!r} names no dataset that "
                         f"'datasets' defines")
    for var_name, data_name in spec.get("data_variables", {}).items():
        m.data_variable.add(variable_name=var_name, data_name=data_name)
    _, outputs, _, _ = _network_ports(built.networks[spec["network"]])
    for name in spec.get("monitor_variables", outputs):
        m.monitor_variable.add(variable_name=name, type="Error")
    for name in spec.get("generator_variables", []):
        m.generator_variable.add(variable_name=name, type="Constant", multiplier=0)
    return m


def _create_executor(built, spec):
    network = built.networks.get(spec["network"])
    if network is None:
        raise ValueError(f"nnabla.utils.save: executor {spec['name']!r} uses network "
                         f"{spec['network']!r}, which 'networks' does not define")
    inputs, outputs, params, declared = _network_ports(network)
    remap = spec.get("remp", {})
    e = nnabla_pb2.Executor(name=spec["name"], network_name=network.name)
    for key in ("no_image_normalization", "num_evaluations", "repeat_evaluation_type",
                "need_back_propagation"):
        if spec.get(key) is not None:
            setattr(e, key, spec[key])
    for section, names, default in (("data", e.data_variable, inputs),
                                    ("output", e.output_variable, outputs)):
        for name in spec.get(section, default):
            if name not in declared:
                raise ValueError(f"nnabla.utils.save: executor {spec['name']!r} lists "
                                 f"{section} variable {name!r}, which network "
                                 f"{network.name!r} does not have")
            names.add(variable_name=name, data_name=remap.get(name, name))
    for param in params:
        e.parameter_variable.add(variable_name=param)
    for name in spec.get("generator_variables", []):
        e.generator_variable.add(variable_name=name, type="Constant", multiplier=0)
    return e


def _create_dataset(spec):
    d = nnabla_pb2.Dataset(name=spec["name"], uri=spec["uri"],
                           shuffle=bool(spec.get("shuffle", False)),
                           batch_size=int(spec.get("batch_size", 0)),
                           no_image_normalization=bool(spec.get("no_image_normalization",
                                                                False)))
    if spec.get("cache_dir") is not None:
        d.cache_dir = spec["cache_dir"]
    d.variable.extend(spec.get("variables", []))
    return d


def create_proto(contents, include_params=False, variable_batch_size=True,
                 save_solver_in_proto=False):
    """The ``NNablaProtoBuf`` message of ``contents`` (see the module docstring).

    Args:
        contents (dict): networks, executors, optimizers, monitors, datasets, configs.
        include_params (bool): add every parameter of the current scope.
        variable_batch_size (bool): store the batch dimension as ``-1``.
        save_solver_in_proto (bool): store each optimizer's solver states in it.

    Returns:
        nnabla_pb2.NNablaProtoBuf
    """
    proto, built = nnabla_pb2.NNablaProtoBuf(), _Built()
    if "global_config" in contents:
        ctx = contents["global_config"]["default_context"]
        context = proto.global_config.default_context
        context.backends.extend(ctx.backend)
        context.array_class = ctx.array_class
        context.device_id = str(ctx.device_id)
    if "training_config" in contents:
        config = contents["training_config"]
        proto.training_config.max_epoch = int(config["max_epoch"])
        proto.training_config.iter_per_epoch = int(config["iter_per_epoch"])
        proto.training_config.save_best = bool(config["save_best"])
    for net in contents.get("networks", []):
        built.networks[net["name"]] = _create_network(net, variable_batch_size)
        proto.network.append(built.networks[net["name"]])
    for spec in contents.get("datasets", []):
        built.datasets[spec["name"]] = _create_dataset(spec)
        proto.dataset.append(built.datasets[spec["name"]])
    for spec in contents.get("optimizers", []):
        proto.optimizer.append(_create_optimizer(built, spec, save_solver_in_proto))
    for spec in contents.get("monitors", []):
        proto.monitor.append(_create_monitor(built, spec))
    for spec in contents.get("executors", []):
        proto.executor.append(_create_executor(built, spec))
    if include_params:
        _nnp_parameters.proto_with_parameters(_parameter.get_parameters(grad_only=False),
                                              proto)
    return proto


def _solver_state_members(contents, solver_state_format):
    """``(member name, bytes)`` of the optimizers' solver states, as nnabla 1.39 stores them:
    ``<name>_<Solver>_optimizer.h5.optimizer`` per optimizer, or one
    ``optimizer.protobuf.optimizer`` (an NNablaProtoBuf with one Optimizer message each:
    name, solver type and states)."""
    if "optimizers" not in contents:
        raise KeyError("nnabla.utils.save: include_solver_state=True needs 'optimizers' in "
                       "contents")
    if solver_state_format not in (".h5", ".protobuf"):
        raise ValueError(f"nnabla.utils.save: solver_state_format must be '.h5' or "
                         f"'.protobuf'; given {solver_state_format!r}")
    if solver_state_format == ".protobuf":
        merged = nnabla_pb2.NNablaProtoBuf()
        for spec in contents["optimizers"]:
            optimizer = merged.optimizer.add()
            optimizer.name = spec["name"]
            optimizer.solver.type = _solver_type(spec["solver"])
            spec["solver"].set_states_to_protobuf(optimizer)
        return [("optimizer.protobuf.optimizer", merged.SerializeToString())]
    members = []
    with tempfile.TemporaryDirectory() as folder:
        for spec in contents["optimizers"]:
            solver = spec["solver"]
            path = os.path.join(folder, "states.h5")
            solver.save_states(path)
            with open(path, "rb") as stream:
                members.append((f"{spec['name']}_{_solver_type(solver)}_optimizer.h5.optimizer",
                                stream.read()))
    return members


def save(filename, contents, include_params=False, variable_batch_size=True, extension=".nnp",
         parameters=None, parameter_format=".h5", include_solver_state=False,
         solver_state_format=".h5"):
    """Save networks and their settings (and parameters) to a file, atomically.

    Args:
        filename (str, os.PathLike or file object): destination; its extension picks the
            format: ``.nnp`` (archive with the network text and the parameters),
            ``.nntxt``/``.prototxt`` (protobuf text) or ``.protobuf`` (binary).
        contents (dict): what to store (see the module docstring).
        include_params (bool): store parameters inside ``.nntxt``/``.protobuf`` (an
            ``.nnp`` always holds them as a separate member).
        variable_batch_size (bool): store the batch dimension as ``-1`` so the network
            loads at any batch size.
        extension (str): format of a file object (or of a path without extension).
        parameters (dict, optional): name -> Variable to store in an ``.nnp`` instead of
            every parameter of the current scope.
        parameter_format (str): ``'.h5'`` or ``'.protobuf'``: the ``.nnp`` parameter member.
        include_solver_state (bool): store each optimizer's solver states (an ``.nnp``
            member per optimizer, or inside the proto for the other formats).
        solver_state_format (str): ``'.h5'`` or ``'.protobuf'`` for those members.

    Raises:
        ValueError: for an unknown format or inconsistent contents (an executor naming a
            network or variable that does not exist ...).
    """
    ext = _nnp_archive.extension_of(filename, extension)
    if ext not in (".nnp", ".protobuf") + _nnp_archive.TEXT_EXTENSIONS:
        raise ValueError(f"nnabla.utils.save: unsupported extension {ext!r}; expected .nnp, "
                         f".nntxt, .prototxt or .protobuf")
    include_params = False if ext == ".nnp" else include_params
    proto = create_proto(contents, include_params, variable_batch_size,
                         include_solver_state and ext != ".nnp")
    if ext == ".protobuf":
        _nnp_archive.write_target(filename, proto.SerializeToString(), binary=True)
        return
    text = _nnp_archive.to_text(proto)
    if ext != ".nnp":
        _nnp_archive.write_target(filename, text, binary=False)
        return
    params = parameters if parameters is not None else _parameter.get_parameters(
        grad_only=False)
    if parameter_format == ".h5":
        param_member = ("parameter.h5", _nnp_parameters.h5_bytes(params))
    else:
        param_member = ("parameter.protobuf",
                        _nnp_parameters.proto_with_parameters(params).SerializeToString())
    members = [("nnp_version.txt", f"{nnp_version()}\n"), ("network.nntxt", text),
               param_member]
    if include_solver_state:
        members += _solver_state_members(contents, solver_state_format)
    _nnp_archive.write_archive(filename, members)

