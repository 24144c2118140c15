"""``nnabla_cli compare_with_cpu``: one training step of two NNP files, function by function.

``-c`` is run in its own context (its global config, e.g. a GPU) and ``-c2`` (the same
network, CPU context) on the CPU, from the same parameters and the same first batch. Each
function's outputs, each input gradient and each updated parameter are compared by
``norm_diff = std(a - b) / max(std(a), std(b))`` and written to
``<outdir>/compare_with_cpu.csv``: header ``1-Correl``, ``optimizer '<name>' with network
'<network>'``; rows ``forward_function (<function>, <variable>)``, ``backward_function
(<function>, <variable>)``, ``update (<solver>, <parameter>)``.
"""
from __future__ import annotations

import csv
import os
from collections import OrderedDict
from contextlib import ExitStack
from types import SimpleNamespace

import numpy as np

from ... import parameter as _parameter
from .. import load as _load
from .profile import add_result
from .utility import configure_progress, let_data_to_variable, logger, progress


def calc_norm_diff(data1, data2):
    """``(norm_diff, std1, std2, diff_std)`` of two arrays."""
    std1, std2 = np.std(np.ravel(data1)), np.std(np.ravel(data2))
    std = max(std1, std2)
    diff_std = np.std(np.ravel(data1) - np.ravel(data2))
    return (diff_std / std if std > 0 else 0), std1, std2, diff_std


def _record(o, data, generated):
    """Set the batch, run forward and backward; per-function outputs and input grads."""
    for v, d in o.dataset_assign.items():
        let_data_to_variable(v.variable_instance, data[d], data_name=d, variable_name=v.name)
    for v, generator in o.generator_assign.items():
        if v.name not in generated:
            generated[v.name] = generator(v.variable_instance.shape)
        let_data_to_variable(v.variable_instance, generated[v.name], variable_name=v.name)
    forward, backward = [], []

    def after_forward(f):
        forward.append((f.name, [(v.name, np.array(v.d)) for v in f.outputs]))

    def after_backward(f):
        backward.append((f.name, [(v.name, np.array(v.g)) for v in f.inputs if v.need_grad]))
    o.solver.zero_grad()
    o.target.forward(clear_no_need_grad=False, function_post_hook=after_forward)
    o.target.backward(grad=1.0 / o.loss_variables[0].variable_instance.size,
                      function_post_hook=after_backward)
    if o.weight_decay > 0:
        o.solver.weight_decay(o.weight_decay)
    o.solver.update()
    return forward, backward


def _compare(kind, pairs, result_dict):
    for (fname, values), (_, values_cpu) in pairs:
        for (vname, a), (_, b) in zip(values, values_cpu):
            name = f"{kind} ({fname}, {vname})"
            norm_diff, std1, std2, diff_std = calc_norm_diff(a, b)
            logger.log(99, "%s, %f, %f, %f, %f" % (name, norm_diff, std1, std2, diff_std))
            result_dict[name] = norm_diff


def compare_optimizer(config, parameters, config_cpu, parameters_cpu, result_array):
    """Compare each optimizer's step; returns the extended table."""
    for opt, opt_cpu in zip(config.optimizers.values(), config_cpu.optimizers.values()):
        o, o_cpu = opt.optimizer, opt_cpu.optimizer
        title = f"optimizer '{o.name}' with network '{o.network.name}'"
        result_dict = OrderedDict()
        logger.log(99, "Comparing " + title + " ...")
        logger.log(99, "process(func, variable), norm_diff, current_context_std, cpu_std, "
                       "diff_std")
        for p, p_cpu in zip(parameters.values(), parameters_cpu.values()):
            p_cpu.d = p.d
        di = opt.data_iterator
        data = dict(zip(di.variables, di.next()))
        generated = {}
        forward, backward = _record(o, data, generated)
        forward_cpu, backward_cpu = _record(o_cpu, data, generated)
        _compare("forward_function", zip(forward, forward_cpu), result_dict)
        _compare("backward_function", zip(backward, backward_cpu), result_dict)
        rates = zip(o.parameter_learning_rate_multipliers.items(),
                    o_cpu.parameter_learning_rate_multipliers.items())
        for (v, rate), (v_cpu, _) in rates:
            if rate > 0:
                _compare("update", [((o.solver.name, [(v.name, v.variable_instance.d)]),
                                     (o.solver.name, [(v.name, v_cpu.variable_instance.d)]))],
                         result_dict)
        result_array = add_result(title, result_dict, result_array)
    return result_array


def _load_in_scope(path, scope_name):
    with _parameter.parameter_scope(scope_name):
        info = _load.load([path])
        parameters = _parameter.get_parameters(grad_only=False)
    config = SimpleNamespace(global_config=info.global_config)
    config.optimizers = OrderedDict((n, SimpleNamespace(optimizer=o, data_iterator=None))
                                    for n, o in info.optimizers.items())
    return config, parameters


def compare_with_cpu_command(args):
    """Compare ``args.config`` with ``args.config2`` into ``compare_with_cpu.csv``."""
    os.makedirs(args.outdir, exist_ok=True)
    configure_progress(os.path.join(args.outdir, "progress.txt"))
    config, parameters = _load_in_scope(args.config, "current")
    config_cpu, parameters_cpu = _load_in_scope(args.config2, "reference")
    result_array = [["1-Correl"]]
    with ExitStack() as stack:
        for c in (config, config_cpu):
            for o in c.optimizers.values():
                factory = next(iter(o.optimizer.data_iterators.values()))
                o.data_iterator = stack.enter_context(factory())
        result_array = compare_optimizer(config, parameters, config_cpu, parameters_cpu,
                                         result_array)
    with open(os.path.join(args.outdir, "compare_with_cpu.csv"), "w", newline="") as stream:
        csv.writer(stream, lineterminator="\n").writerows(result_array)
    logger.log(99, "Compare with CPU Completed.")
    progress(None)
    return True


def add_compare_with_cpu_command(subparsers):
    """Register ``compare_with_cpu``."""
    p = subparsers.add_parser("compare_with_cpu", help="Compare performance between two nntxt.")
    p.add_argument("-c", "--config", help="path to nntxt", required=True)
    p.add_argument("-c2", "--config2", help="path to cpu nntxt", required=True)
    p.add_argument("-o", "--outdir", help="output directory", required=True)
    p.set_defaults(func=compare_with_cpu_command)
