"""``nnabla_cli profile``: time each training step of an NNP file's optimizers.

Writes ``<outdir>/profile.csv``: the first row is ``time in ms`` then one column per
optimizer (``optimizer '<name>' with network '<network>'``); each further row is a
measurement (``load_dataset``, ``let_data (<data> to <variable>)``, ``forward_function
(<function> : <function>)``, ``backward_function (...)``, ``forward_all``, ``backward_all``,
``backward_all(wo param zero_grad)``, ``weight_decay (<solver>)``, ``update (<solver>)``,
``monitor_loss``) with the mean time in milliseconds (``%f``). Each is run once to warm up,
then repeatedly for at least ``min_time`` seconds and ``min_count`` runs (nnabla: 1 s, 100).

``backward_all`` runs with ``clear_buffer=True``, which frees the intermediate data the next
backward reads. nnabla times repeated backward passes over those freed (garbage) buffers; our
engine refuses to read cleared data, so an untimed ``forward(clear_no_need_grad=True)`` runs
before each timed backward.
"""
from __future__ import annotations

import csv
import os
import time
from collections import OrderedDict
from contextlib import ExitStack
from functools import partial
from types import SimpleNamespace

import numpy as np

from .. import callback
from .. import load as _load
from .utility import configure_progress, let_data_to_variable, logger, progress

MIN_TIME, MIN_COUNT = 1.0, 100


def profile(config, name, func, result_dict, synchronize, prepare=None):
    """Time ``func`` (ms per call) into ``result_dict[name]``.

    ``prepare``, when given, runs before each call of ``func`` and is not timed.
    """
    prepare = prepare or (lambda: None)
    prepare()
    func()
    synchronize()
    start_0, total, count = time.time(), 0.0, 0
    while time.time() < start_0 + config.min_time or count < config.min_count:
        prepare()
        synchronize()
        start = time.time()
        func()
        synchronize()
        total += time.time() - start
        count += 1
    result_dict[name] = total * 1000 / count
    logger.log(99, "%s %f(ms)" % (name, result_dict[name]))
    return result_dict


def add_result(title, result_dict, result_array):
    """Add a column ``title`` to the table ``result_array`` (rows keyed by name)."""
    names = [line[0] for line in result_array]
    for k in result_dict:
        if k not in names:
            names.append(k)
            result_array.append([k] + [""] * (len(result_array[0]) - 1))
    result_array[0].append(title)
    for k, v in result_dict.items():
        result_array[names.index(k)].append("%f" % v)
    return result_array


def _load_dataset(iterators):
    data = OrderedDict()
    for di in iterators:
        data.update(zip(di.variables, di.next()))
    return data


def _profile_functions(config, o, result_dict, synchronize):
    forward_sequence, backward_sequence = [], []
    o.target.forward(clear_no_need_grad=True, function_pre_hook=forward_sequence.append)
    o.target.backward(clear_buffer=False, function_pre_hook=backward_sequence.append)
    for func in forward_sequence:
        if func.name != "Sink":
            profile(config, f"forward_function ({func.name} : {func.name})",
                    partial(func.forward, func.inputs, func.outputs), result_dict, synchronize)
    profile(config, "prepare_backward", lambda: None, result_dict, synchronize)
    for func in backward_sequence:
        if func.name != "Sink":
            profile(config, f"backward_function ({func.name} : {func.name})",
                    partial(func.backward, func.inputs, func.outputs), result_dict, synchronize)


def profile_optimizer(config, result_array, synchronize):
    """Profile every optimizer of ``config``; returns the extended table."""
    for opt in config.optimizers.values():
        o = opt.optimizer
        title = f"optimizer '{o.name}' with network '{o.network.name}'"
        result_dict = OrderedDict()
        logger.log(99, "Profiling " + title + " ...")
        for name, p in o.parameters.items():
            if name[-2:] in ("/W", "/b"):
                p.data.zero()
        profile(config, "load_dataset", lambda: _load_dataset(opt.data_iterators), result_dict,
                synchronize)
        data = _load_dataset(opt.data_iterators)
        for v, d in o.dataset_assign.items():
            if d not in data:
                raise ValueError(f'nnabla_cli profile: data "{d}" is not found in dataset.')
            profile(config, f"let_data ({d} to {v.name})",
                    partial(let_data_to_variable, v.variable_instance, data[d], None, d, v.name),
                    result_dict, synchronize)
        for v, generator in o.generator_assign.items():
            profile(config, f"generate_data ({v.name})",
                    lambda: let_data_to_variable(v.variable_instance,
                                                 generator(v.variable_instance.shape)),
                    result_dict, synchronize)
        _profile_functions(config, o, result_dict, synchronize)
        def forward_all():
            o.target.forward(clear_no_need_grad=True)
        profile(config, "forward_all", forward_all, result_dict, synchronize)
        profile(config, "backward_all", lambda: o.target.backward(clear_buffer=True),
                result_dict, synchronize, prepare=forward_all)

        def backward_without_zero_grad():
            for name, p in o.parameters.items():
                if name[-2:] in ("/W", "/b"):
                    p.grad.zero()
            o.target.backward(clear_buffer=True)
        profile(config, "backward_all(wo param zero_grad)", backward_without_zero_grad,
                result_dict, synchronize, prepare=forward_all)
        if o.weight_decay > 0:
            profile(config, f"weight_decay ({o.solver.name})",
                    lambda: o.solver.weight_decay(o.weight_decay), result_dict, synchronize)
        profile(config, f"update ({o.solver.name})", o.solver.update, result_dict, synchronize)
        profile(config, "monitor_loss",
                lambda: [np.mean(v.variable_instance.d) for v in o.loss_variables],
                result_dict, synchronize)
        result_array = add_result(title, result_dict, result_array)
    return result_array


def _synchronizer(ctx):
    try:
        from ...ext_utils import import_extension_module

        module = import_extension_module(ctx.backend[0].split(":")[0])
    except (ImportError, ValueError):
        return lambda: None
    sync = getattr(module, "synchronize", None) or getattr(module, "device_synchronize", None)
    if sync is None:
        return lambda: None
    return lambda: sync(device_id=ctx.device_id)


def profile_command(args):
    """Profile ``args.config`` into ``args.outdir/profile.csv``."""
    callback.update_status(args)
    os.makedirs(args.outdir, exist_ok=True)
    configure_progress(os.path.join(args.outdir, "progress.txt"))
    info = _load.load(args.config)
    config = SimpleNamespace(global_config=info.global_config, min_time=MIN_TIME,
                             min_count=MIN_COUNT)
    config.optimizers = OrderedDict((n, SimpleNamespace(optimizer=o, data_iterators=[]))
                                    for n, o in info.optimizers.items())
    synchronize = _synchronizer(info.global_config.default_context)
    result_array = [["time in ms"]]
    callback.update_status("processing", True)
    with ExitStack() as stack:
        opened = {}
        for o in config.optimizers.values():
            for factory in o.optimizer.data_iterators.values():
                if id(factory) not in opened:
                    opened[id(factory)] = stack.enter_context(factory())
                o.data_iterators.append(opened[id(factory)])
        result_array = profile_optimizer(config, result_array, synchronize)
    with open(os.path.join(args.outdir, "profile.csv"), "w", newline="") as stream:
        csv.writer(stream, lineterminator="\n").writerows(result_array)
    logger.log(99, "Profile Completed.")
    progress(None)
    callback.update_status("finished")
    return True


def add_profile_command(subparsers):
    """Register ``profile``."""
    p = subparsers.add_parser("profile", help="Profiling performance with NNP.")
    p.add_argument("-c", "--config", help="path to nntxt", required=True)
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.set_defaults(func=profile_command)
