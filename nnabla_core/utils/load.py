"""Load networks and their training/inference settings from NNP files (``nnabla.utils.load``).

:func:`load` reads ``.nnp``, ``.nntxt``/``.prototxt``, ``.protobuf`` and ``.h5`` files,
registers their parameters in the current parameter scope, builds every network on this
engine and returns an info object as nnabla's: ``info.networks`` (name ->
:class:`~nnabla.utils._nnp_network.NetworkGraph`, whose ``variables[name].variable_instance``
are the graph's variables), ``info.executors``, ``info.optimizers``, ``info.monitors``,
``info.datasets``, ``info.training_config``, ``info.global_config`` and ``info.proto``.

Example:
    >>> import io, numpy as np, nnabla as nn, nnabla.parametric_functions as PF
    >>> from nnabla.utils.save import save
    >>> from nnabla.utils.load import load
    >>> nn.clear_parameters()
    >>> x = nn.Variable((2, 3))
    >>> y = PF.affine(x, 4, name="fc")
    >>> buffer = io.BytesIO()
    >>> save(buffer, {"networks": [{"name": "net", "batch_size": 2, "outputs": {"y": y},
    ...                              "names": {"x": x}}],
    ...               "executors": [{"name": "run", "network": "net"}]}, extension=".nnp")
    >>> _ = buffer.seek(0)
    >>> info = load(buffer, extension=".nnp", batch_size=3)
    >>> info.executors["run"].network.variables["y"].variable_instance.shape
    (3, 4)
    >>> nn.clear_parameters()
"""
from __future__ import annotations

import itertools
import os
import re
import tempfile
import types
from collections import OrderedDict

import numpy as np

from .. import functions as F
from .. import initializer as I
from .. import parameter as _parameter
from .. import solvers as S
from .._variable import Variable
from ..array_family import HOST_FAMILY  # the CPU extension is named after the host family
from ..context import Context, context_scope, get_current_context, set_default_context
from ..logger import logger
from .._spec.wire import SOLVER_FIELDS
from . import learning_rate_scheduler as L
from . import nnabla_pb2
from ._nnp_network import NetworkGraph
from ._nnp_reader import read_model
from ._nnp_schema import solver_arguments

__all__ = ["load", "base_load", "link_components", "restore_optimizer_state"]


def _old_style_context(proto):
    """nnabla's reading of a context written before ``backends`` existed: ``backend``
    ``'cpu|cuda'`` with ``compute_backend`` ``'default|cudnn'`` is the cudnn (or, with
    ``'default'`` only, the cuda) extension's context, the CPU one where that extension
    cannot run; the stored ``array_class`` is kept."""
    backends = [b.strip() for b in proto.backend.split("|")]
    compute = [b.strip() for b in proto.compute_backend.split("|")]
    if "cuda" in backends:
        if "cudnn" in compute:
            name = "cudnn"
        elif "default" in compute:
            name = "cuda"
        else:
            raise ValueError(f"nnabla.utils.load: global_config has compute_backend "
                             f"{proto.compute_backend!r}; expected 'default' or 'cudnn' in it")
        ctx = _usable(name, str(proto.device_id) or "0")
    elif HOST_FAMILY in backends or not proto.backend:
        ctx = _usable(HOST_FAMILY, "0")
    else:
        raise ValueError(f"nnabla.utils.load: global_config has backend {proto.backend!r}; "
                         f"expected 'cpu' or 'cpu|cuda'")
    ctx.array_class = str(proto.array_class)
    return ctx


def _usable(name, device_id):
    """The context of extension ``name``, or the CPU one (with a warning, as nnabla) when
    that extension cannot run here."""
    from ..ext_utils import get_extension_context

    try:
        ctx = get_extension_context(name, device_id=device_id)
        if name != HOST_FAMILY:
            with context_scope(ctx):
                F.relu(Variable((1,)))
        return ctx
    except (ImportError, ValueError, RuntimeError, NotImplementedError) as error:
        if name == HOST_FAMILY:
            raise
        logger.warning(f"nnabla.utils.load: the file's context needs {name!r}, which cannot "
                       f"run here ({error}); using the CPU")
        return get_extension_context(HOST_FAMILY)


def _context(proto):
    if not len(proto.backends):
        return _old_style_context(proto)
    ctx = Context()
    ctx.backend = list(proto.backends)
    ctx.array_class = str(proto.array_class)
    ctx.device_id = str(proto.device_id) or "0"
    return ctx


def _default_context(proto, context):
    if context:
        from ..ext_utils import get_extension_context

        name, _, device = context.partition(":")
        return get_extension_context(name, device_id=device or "0")
    if proto.HasField("global_config"):
        return _context(proto.global_config.default_context)
    return get_current_context()


def _training_config(proto):
    config = types.SimpleNamespace()
    t = proto.training_config
    config.max_epoch, config.iter_per_epoch = t.max_epoch, t.iter_per_epoch
    config.save_best = t.save_best
    config.monitor_interval = t.monitor_interval if t.monitor_interval > 0 else 10
    return config


def _create_dataset(d, index, prepare):
    """A dataset of the file with its ``data_iterator`` factory, as nnabla prepares it: with
    a ``cache_dir`` and ``create_cache_explicitly``, the cache is created now (if absent or
    ``overwrite_cache``) and read; with a cache directory already holding data, that is
    read; otherwise the CSV is (caching into ``cache_dir`` when given)."""
    dataset = types.SimpleNamespace(uri=d.uri, cache_dir=d.cache_dir, proto=d,
                                    normalize=not d.no_image_normalization)
    dataset.data_iterator = None
    if not prepare:
        return dataset
    from . import data_iterator as D
    from .communicator_util import current_communicator, single_or_rankzero

    comm = current_communicator()
    rng = np.random.RandomState(index)      # one stream per dataset, the same on every rank
    cache_dir = d.cache_dir or None
    memory_cache = comm.size == 1 if comm else True
    if cache_dir and (d.create_cache_explicitly or comm):
        if not os.path.exists(os.path.join(cache_dir, "cache_index.csv")) or d.overwrite_cache:
            if single_or_rankzero():
                _create_cache(d, cache_dir, rng)
            if comm:
                comm.barrier()
        rng = np.random.RandomState(index)
        dataset.data_iterator = lambda: D.data_iterator_cache(
            cache_dir, d.batch_size, d.shuffle, rng=rng, normalize=dataset.normalize,
            with_memory_cache=memory_cache)
    elif (not cache_dir or d.overwrite_cache or not os.path.isdir(cache_dir)
          or not os.listdir(cache_dir)):
        if cache_dir:
            os.makedirs(cache_dir, exist_ok=True)
        dataset.data_iterator = lambda: D.data_iterator_csv_dataset(
            d.uri, d.batch_size, d.shuffle, rng=rng, normalize=dataset.normalize,
            cache_dir=cache_dir)
    else:
        dataset.data_iterator = lambda: D.data_iterator_cache(
            cache_dir, d.batch_size, d.shuffle, rng=rng, normalize=dataset.normalize,
            with_memory_cache=memory_cache)
    return dataset


def _create_cache(d, cache_dir, rng):
    from .create_cache import CreateCache
    from .data_iterator import data_iterator_csv_dataset

    logger.log(99, f'Creating cache data for "{d.uri}"')
    os.makedirs(cache_dir, exist_ok=True)
    if os.path.exists(d.uri):
        CreateCache(d.uri, rng=rng, shuffle=d.shuffle).create(cache_dir, normalize=False)
    else:                       # a remote CSV: reading it once through a cache writes one
        with data_iterator_csv_dataset(d.uri, d.batch_size, d.shuffle, rng=rng,
                                       normalize=False, cache_dir=cache_dir,
                                       with_memory_cache=False):
            pass


def _solver(solver_proto):
    kind = "Sgd" if solver_proto.type == "SGD" else solver_proto.type
    if kind not in SOLVER_FIELDS:
        raise ValueError(f"nnabla.utils.load: solver type {solver_proto.type!r} is not "
                         f"supported")
    param = getattr(solver_proto, SOLVER_FIELDS[kind][0])
    args = [getattr(param, name) for name, _ in solver_arguments(kind)]
    solver = getattr(S, kind)(*args)
    return solver, float(args[0])


def _scheduler(s, init_lr):
    kind = s.lr_scheduler_type
    scheduler = L.ExponentialScheduler(init_lr, 1.0, 1)
    if kind == "Polynomial" and s.polynomial_scheduler_param.power != 0.0:
        p = s.polynomial_scheduler_param
        scheduler = L.PolynomialScheduler(init_lr, p.max_iter, p.power)
    elif kind == "Cosine":
        scheduler = L.CosineScheduler(init_lr, s.cosine_scheduler_param.max_iter)
    elif kind == "Exponential" and s.exponential_scheduler_param.gamma != 1.0:
        p = s.exponential_scheduler_param
        scheduler = L.ExponentialScheduler(init_lr, p.gamma, max(p.iter_interval, 1))
    elif kind == "Step":
        p = s.step_scheduler_param
        if p.gamma != 1.0 and len(p.iter_steps):
            scheduler = L.StepScheduler(init_lr, p.gamma, list(p.iter_steps))
    elif kind == "" and (s.lr_decay_interval != 0 or s.lr_decay != 0.0):
        scheduler = L.ExponentialScheduler(init_lr, s.lr_decay if s.lr_decay > 0.0 else 1.0,
                                           max(s.lr_decay_interval, 1))
    elif kind not in ("", "Polynomial", "Exponential"):
        raise ValueError(f"nnabla.utils.load: learning rate scheduler {kind!r} is not "
                         f"supported")
    if s.lr_warmup_scheduler_type == "Linear" and s.linear_warmup_scheduler_param.warmup_iter:
        scheduler = L.LinearWarmupScheduler(scheduler,
                                            s.linear_warmup_scheduler_param.warmup_iter)
    return scheduler


def _checkpoints(members):
    """Solver states stored beside the networks (``*.optimizer`` members), by optimizer
    name: ``('.protobuf', Optimizer message)`` or ``('.h5', bytes)``, as nnabla keys them
    (an ``.h5`` member is ``<name>_<Solver>_optimizer.h5.optimizer``)."""
    found = OrderedDict()
    for member, data in members.items():
        stem = member[:-len(".optimizer")]
        if stem.endswith(".protobuf"):
            for message in nnabla_pb2.NNablaProtoBuf.FromString(data).optimizer:
                found[message.name] = (".protobuf", message)
        elif stem.endswith(".h5"):
            found["_".join(stem.split("_")[:-2])] = (".h5", data)
    return found


def restore_optimizer_state(optimizer):
    """Set ``optimizer.solver``'s states from the file: those in its ``Optimizer`` message,
    then those of its stored checkpoint (``optimizer.solver_checkpoint``), if any.

    The solver's parameters must be set first (the states are keyed by their names).
    """
    if len(optimizer.proto.solver.states):
        optimizer.solver.set_states_from_protobuf(optimizer.proto)
    checkpoint = getattr(optimizer, "solver_checkpoint", None)
    if checkpoint is None:
        return
    ext, payload = checkpoint
    if ext == ".protobuf":
        optimizer.solver.set_states_from_protobuf(payload)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "states.h5")
        with open(path, "wb") as stream:
            stream.write(payload)
        optimizer.solver.load_states(path)


def _create_optimizer(o, checkpoints):
    optimizer = types.SimpleNamespace(proto=o, name=o.name, order=o.order, network=None)
    if o.name in checkpoints:
        optimizer.solver_checkpoint = checkpoints[o.name]
    optimizer.start_iter, optimizer.end_iter = max(o.start_iter, 0), max(o.end_iter, 0)
    optimizer.update_interval = o.update_interval if o.update_interval > 0 else 1
    optimizer.solver, init_lr = _solver(o.solver)
    optimizer.weight_decay = o.solver.weight_decay
    optimizer.lr_decay = o.solver.lr_decay if o.solver.lr_decay > 0.0 else 1.0
    optimizer.lr_decay_interval = max(o.solver.lr_decay_interval, 1)
    optimizer.scheduler = _scheduler(o.solver, init_lr)
    optimizer.comm = None
    return optimizer


def _generator(proto):
    if proto.type == "Normal":
        return I.NormalInitializer(sigma=proto.multiplier)
    if proto.type == "Uniform":
        return I.UniformInitializer(lim=(-proto.multiplier, proto.multiplier))
    if proto.type == "Range":
        return I.RangeInitializer(start=0, step=proto.multiplier)
    if proto.type == "Constant":
        return I.ConstantInitializer(value=proto.multiplier)
    raise ValueError(f"nnabla.utils.load: generator type {proto.type!r} is not supported")


def _matching(pattern, names):
    """Names matching a variable name, where ``{...}`` in it stands for ``[index]``."""
    if pattern in names:
        return [pattern]
    regex = re.compile(re.sub(r"{[^}]*}", r"\\[\\d+\\]", pattern))
    found = [n for n in names if regex.match(n)]
    if not found:
        raise ValueError(f"nnabla.utils.load: variable {pattern!r} is not found")
    return found


def _variable(network, name, section):
    var = network.variables.get(name) or network.parameters.get(name)
    if var is None:
        raise ValueError(f"nnabla.utils.load: {section} names variable {name!r}, which network "
                         f"{network.name!r} does not have")
    return var


def _assignments(network, section, data_variables, generator_variables):
    data = OrderedDict((_variable(network, d.variable_name, section), d.data_name)
                       for d in data_variables)
    generators = OrderedDict((_variable(network, g.variable_name, section), _generator(g))
                             for g in generator_variables)
    return data, generators


def _multipliers(network, parameter_variables):
    found = OrderedDict()
    names = list(itertools.chain(network.parameters, network.variables))
    for p in parameter_variables:
        for name in _matching(p.variable_name, names):
            found[_variable(network, name, "parameter_variable")] = p.learning_rate_multiplier
    return found


def _network(networks, name, section):
    if name not in networks:
        raise ValueError(f"nnabla.utils.load: {section} uses network {name!r}, which the file "
                         f"does not define")
    return networks[name]


def _sink(variables, **kwargs):
    instances = [v.variable_instance for v in variables]
    return instances[0] if len(instances) == 1 else F.sink(*instances, **kwargs)


def _link_optimizer(optimizer, networks, datasets):
    o = optimizer.proto
    optimizer.network = network = _network(networks, o.network_name, f"optimizer {o.name!r}")
    optimizer.data_iterators = OrderedDict((d, datasets[d].data_iterator)
                                           for d in o.dataset_name if d in datasets)
    optimizer.dataset_assign, optimizer.generator_assign = _assignments(
        network, f"optimizer {o.name!r}", o.data_variable, o.generator_variable)
    optimizer.loss_variables = [_variable(network, v.variable_name, f"optimizer {o.name!r}")
                                for v in o.loss_variable]
    optimizer.parameter_learning_rate_multipliers = _multipliers(network, o.parameter_variable)
    params = OrderedDict()
    for var, rate in optimizer.parameter_learning_rate_multipliers.items():
        if rate > 0.0:
            params[var.name] = var.variable_instance
        else:
            var.variable_instance.need_grad = False
    optimizer.solver.set_parameters(params)
    optimizer.parameters = OrderedDict(sorted(params.items()))
    restore_optimizer_state(optimizer)
    for var in optimizer.loss_variables:
        var.variable_instance.grad.fill(1.0 / var.variable_instance.size)
    optimizer.target = _sink(optimizer.loss_variables, one_input_grad=False)


def _link_monitor(monitor, networks, datasets):
    m = monitor.proto
    monitor.network = network = _network(networks, m.network_name, f"monitor {m.name!r}")
    monitor.data_iterators = OrderedDict((d, datasets[d].data_iterator)
                                         for d in m.dataset_name if d in datasets)
    monitor.dataset_assign, monitor.generator_assign = _assignments(
        network, f"monitor {m.name!r}", m.data_variable, m.generator_variable)
    monitor.monitor_variables = [_variable(network, v.variable_name, f"monitor {m.name!r}")
                                 for v in m.monitor_variable]
    monitor.target = _sink(monitor.monitor_variables)


def _link_executor(executor, networks):
    e = executor.proto
    executor.network = network = _network(networks, e.network_name, f"executor {e.name!r}")
    executor.dataset_assign, executor.generator_assign = _assignments(
        network, f"executor {e.name!r}", e.data_variable, e.generator_variable)
    executor.output_assign = OrderedDict(
        (_variable(network, o.variable_name, f"executor {e.name!r}"), [o.type, o.data_name])
        for o in e.output_variable)
    executor.parameters = OrderedDict()
    names = list(itertools.chain(network.parameters, network.variables))
    for p in e.parameter_variable:
        for name in _matching(p.variable_name, names):
            executor.parameters[_variable(network, name, "parameter_variable")] = name
    executor.forward_target = _sink(list(executor.output_assign))
    if executor.need_back_propagation:
        executor.loss_variables = [_variable(network, v.variable_name, f"executor {e.name!r}")
                                   for v in e.loss_variable]
        executor.parameter_learning_rate_multipliers = _multipliers(network,
                                                                    e.parameter_variable)
        executor.backward_target = _sink(executor.loss_variables)


def _executor(e):
    return types.SimpleNamespace(
        proto=e, name=e.name, network=None,
        num_evaluations=e.num_evaluations if e.num_evaluations > 0 else 1,
        repeat_evaluation_type=e.repeat_evaluation_type,
        need_back_propagation=e.need_back_propagation,
        no_image_normalization=e.no_image_normalization)


def base_load(filenames, prepare_data_iterator=True, batch_size=None,
              exclude_parameter=False, parameter_only=False, extension=".nntxt",
              context=None):
    """Read files and build their networks, optimizers, monitors and executors without
    linking them (each one's ``network`` is None; :func:`link_components` links them).

    Takes the arguments of :func:`load`. Optimizers carry their stored solver states as
    ``solver_checkpoint`` for :func:`restore_optimizer_state`.
    """
    info = types.SimpleNamespace(prepare_data_iterator=prepare_data_iterator,
                                 batch_size=batch_size, exclude_parameter=exclude_parameter,
                                 parameter_only=parameter_only, renamed_variables={})
    info.parameter_scope = _parameter.get_current_parameter_scope()
    info.proto, info.optimizer_states_checkpoint = read_model(
        filenames, extension, info.parameter_scope, exclude_parameter, parameter_only)
    proto = info.proto
    info.default_context = _default_context(proto, context)
    info.global_config = types.SimpleNamespace(default_context=info.default_context)
    if proto.HasField("global_config") and not context:
        set_default_context(info.default_context)
    if proto.HasField("training_config"):
        info.training_config = _training_config(proto)
    info.datasets = OrderedDict((d.name, _create_dataset(d, i, prepare_data_iterator))
                                for i, d in enumerate(proto.dataset))
    info.networks = OrderedDict()
    rng = np.random.RandomState(0)
    for message in proto.network:
        network = NetworkGraph(message, batch_size=batch_size)
        network.build(batch_size=batch_size, rng=rng, allow_missing=exclude_parameter,
                      scope=info.parameter_scope)
        info.networks[message.name] = network
    from ..core.graph_def import _from_loaded
    info.proto_graph = _from_loaded(proto, info.networks, info.parameter_scope, batch_size)
    checkpoints = _checkpoints(info.optimizer_states_checkpoint)
    info.optimizers = OrderedDict((o.name, _create_optimizer(o, checkpoints))
                                  for o in proto.optimizer)
    info.monitors = OrderedDict((m.name, types.SimpleNamespace(proto=m, name=m.name,
                                                               network=None))
                                for m in proto.monitor)
    info.executors = OrderedDict((e.name, _executor(e)) for e in proto.executor)
    return info


def link_components(info):
    """Link the optimizers, monitors and executors of ``info`` (from :func:`base_load`) to
    their networks, datasets and variables; restores the optimizers' solver states."""
    for optimizer in info.optimizers.values():
        _link_optimizer(optimizer, info.networks, info.datasets)
    for monitor in info.monitors.values():
        _link_monitor(monitor, info.networks, info.datasets)
    for executor in info.executors.values():
        _link_executor(executor, info.networks)


def load(filenames, prepare_data_iterator=True, batch_size=None, exclude_parameter=False,
         parameter_only=False, extension=".nntxt", context=None):
    """Load networks, settings and parameters from files and build the networks.

    Args:
        filenames (str, file object or list of them): ``.nnp``, ``.nntxt``/``.prototxt``,
            ``.protobuf`` or ``.h5`` files, read in order (later ones add to earlier ones).
        prepare_data_iterator (bool): create each dataset's ``data_iterator`` factory.
        batch_size (int, optional): batch size of the built networks (default: each
            network's own).
        exclude_parameter (bool): read no parameter (the networks' parameters are then
            created from their initializers, or zeros).
        parameter_only (bool): read parameters only.
        extension (str): format of file objects.
        context (str, optional): ``'cpu'`` or ``'<extension>:<device id>'``; default: the
            file's global config, else the current context.

    Returns:
        An info object with ``proto``, ``networks``, ``executors``, ``optimizers``,
        ``monitors``, ``datasets``, ``global_config``, ``training_config`` (if stored),
        ``parameter_scope`` and ``batch_size``.

    Raises:
        FileNotFoundError: for a missing file.
        ValueError: for an invalid file (naming the file, member, network, function or
            variable) or inconsistent settings.
    """
    info = base_load(filenames, prepare_data_iterator, batch_size, exclude_parameter,
                     parameter_only, extension, context)
    link_components(info)
    return info
