"""``nnabla_cli train``: run the training configuration stored in an NNP file.

The file's optimizers are trained for ``training_config.max_epoch`` epochs of
``iter_per_epoch`` iterations on their CSV (or cache) datasets; after each epoch the
monitors are evaluated (every ``monitor_interval`` epochs, and in the first five) and the
output folder gets, as nnabla writes them:

* ``monitoring_report.yml``: per epoch (from 0) the mean training cost and each monitor's
  mean error::

      0:
        cost: 0.53
        valid_error: 0.12

* ``results.nnp``: the parameters of the best epoch (lowest ``valid_error`` when
  ``save_best``, else the latest evaluated), with the network configuration;
* ``results_current_<epoch>.nnp``: checkpoints (every 10 epochs or 180 s, and at the end),
  with solver states every ``[CHECKPOINT] optimizer_interval`` epochs; ``-r`` resumes from
  the latest one;
* ``network.nntxt`` (the configuration) and ``progress.txt``.
"""
from __future__ import annotations

import glob
import os
import time
from collections import OrderedDict
from contextlib import ExitStack
from types import SimpleNamespace

import numpy as np

from ...config import nnabla_config
from .. import callback
from .. import load as _load
from .._nnp_archive import read_archive, to_text, write_archive
from .._nnp_parameters import h5_bytes, proto_with_parameters
from ..nnp_format import nnp_version
from .utility import (configure_progress, current_communicator, let_data_to_variable,
                      load_train_state, logger, nnp_param_format, optimizer_state_members,
                      progress, progress_bar, single_or_rankzero, str_to_num)

_RESERVED = ("%iter", "%max_iter", "%epoch", "%epochf", "%max_epoch", "%progress")


def _optimizer_checkpoint_interval():
    try:
        return int(nnabla_config.get("CHECKPOINT", "optimizer_interval"))
    except Exception:
        return 5


def _reserved_value(name, iteration, training_config):
    per_epoch, max_epoch = training_config.iter_per_epoch, training_config.max_epoch
    values = {"%iter": iteration, "%max_iter": max_epoch * per_epoch,
              "%epoch": iteration // per_epoch, "%epochf": iteration / per_epoch,
              "%max_epoch": max_epoch, "%progress": iteration / per_epoch / max_epoch}
    if name not in values:
        raise ValueError(f"nnabla_cli train: unknown reserved variable {name!r}; expected one "
                         f"of {', '.join(_RESERVED)}")
    return values[name]


def _batch(iterators, cache):
    data = OrderedDict()
    for di in iterators:
        if id(di) not in cache:
            cache[id(di)] = di.next()
        data.update(zip(di.variables, cache[id(di)]))
    return data


def _assign(owner, data, iteration, config):
    for var, data_name in owner.dataset_assign.items():
        if data_name in data:
            let_data_to_variable(var.variable_instance, data[data_name], data_name=data_name,
                                 variable_name=var.name)
        elif data_name.startswith("%"):
            var.variable_instance.data.fill(
                _reserved_value(data_name, iteration, config.training_config))
        else:
            raise ValueError(f"nnabla_cli train: variable {data_name!r} is not in the "
                             f"datasets of {owner.name!r} (they have {list(data)})")
    for var, generator in owner.generator_assign.items():
        let_data_to_variable(var.variable_instance, generator(var.variable_instance.shape),
                             variable_name=var.name)


def _mean_loss(variables):
    return float(sum(np.mean(v.variable_instance.d) for v in variables))


def _all_reduce_sum(value):
    comm = current_communicator()
    if comm is None:
        return value
    import nnabla as nn

    array = nn.NdArray.from_numpy_array(np.array([value], dtype=np.float64))
    comm.all_reduce([array], division=False, inplace=True)
    return float(array.data[0])


def _step(o, iteration, config):
    """One iteration of optimizer ``o``: forward, backward, update; returns the loss."""
    comm = current_communicator()
    o.target.forward(clear_no_need_grad=True)
    if iteration % o.update_interval == 0:
        o.solver.zero_grad()
    loss = _mean_loss(o.loss_variables)
    o.target.backward(grad=1.0 / o.loss_variables[0].variable_instance.size,
                      clear_buffer=True)
    if iteration % o.update_interval == o.update_interval - 1:
        if comm is not None:
            comm.all_reduce([p.grad for p in o.parameters.values()], division=True,
                            inplace=False)
        if o.weight_decay > 0:
            o.solver.weight_decay(o.weight_decay)
        if o.scheduler is not None:
            o.solver.set_learning_rate(o.scheduler.get_learning_rate(iteration))
        o.solver.update()
    return loss


def _update(iteration, config, cost):
    loaded, first = {}, True
    for opt in config.optimizers.values():
        o = opt.optimizer
        if (o.start_iter == 0 or iteration + 1 >= o.start_iter) and \
                (o.end_iter == 0 or iteration + 1 <= o.end_iter):
            _assign(o, _batch(opt.data_iterators, loaded), iteration, config)
            loss = _step(o, iteration, config)
            if first:
                first = False
                cost.sum_epoch += _all_reduce_sum(loss)
                comm = current_communicator()
                cost.num_iteration += comm.size if comm else 1
                cost.last = loss


def _evaluate(args, config, report, best_error, epoch):
    error_str, valid_error = [], 0.0
    comm = current_communicator()
    for name, mon in config.monitors.items():
        m = mon.monitor
        size = max(di.size for di in mon.data_iterators)
        batch_size = max(di.batch_size for di in mon.data_iterators)
        total, count = 0.0, 0
        for _ in range(max(size // batch_size, 1)):
            _assign(m, _batch(mon.data_iterators, {}), 0, config)
            m.target.forward(clear_no_need_grad=True, clear_buffer=True)
            total += _all_reduce_sum(_mean_loss(m.monitor_variables))
            count += comm.size if comm else 1
            if single_or_rankzero():
                progress(f'Evaluating "{name}" : error={total / count:0.6f}',
                         mon.data_iterators[0].position / size)
        error = total / count if count else 0.0
        if np.isnan(error) or np.isinf(error):
            logger.log(99, "Validation error is Nan")
            error = 0.0
        report.append(f"  {name}: {error}\n")
        callback.update_status((["monitoring_report", epoch, name], error))
        callback.update_status((["last", name], error))
        error_str.append(f"{name}={error:.6f}")
        if name == "valid_error":
            valid_error = error
    if single_or_rankzero() and (not config.training_config.save_best or best_error is None
                                 or valid_error <= best_error):
        best_error = valid_error
        callback.update_status(("best.valid_error", best_error))
        callback.update_status(("best.epoch", epoch))
        _save_parameters(args, "best", epoch, config, True)
    return best_error, " {" + ", ".join(error_str) + "}" if error_str else ""


def _save_parameters(args, suffix, epoch, config, force=False):
    """Write ``results[_<suffix>_<epoch>].nnp`` (configuration, parameters, solver states)."""
    import nnabla as nn

    record = config.saved.setdefault(suffix, {"epoch": 0, "time": 0.0})
    now = time.time()
    base = os.path.join(args.outdir, f"results_{suffix}_{epoch}")
    candidate = callback.result_base(base, suffix, args.outdir)
    if candidate is not None:
        base = candidate
    elif suffix is None or suffix == "best":
        base = os.path.join(args.outdir, "results")
    filename = base + ".nnp"
    due = now - record["time"] > 180.0 or epoch - record["epoch"] > 10
    if not (force or (not os.path.exists(filename) and due)):
        return
    params = nn.get_parameters(grad_only=False)
    ext = nnp_param_format()
    data = h5_bytes(params) if ext == ".h5" else \
        proto_with_parameters(params).SerializeToString()
    members = [("nnp_version.txt", f"{nnp_version()}\n"),
               (config.config_member, config.config_text), (f"parameter{ext}", data)]
    if config.optimizers and epoch % _optimizer_checkpoint_interval() == 0:
        members += optimizer_state_members(
            OrderedDict((k, o.optimizer) for k, o in config.optimizers.items()))
    for old in glob.glob(os.path.join(args.outdir, f"results_{suffix}_*.nnp")):
        if os.path.abspath(old) != os.path.abspath(filename):
            os.unlink(old)
    write_archive(filename, members)
    record.update(epoch=epoch, time=now)
    callback.save_train_snapshot()


def _resume_point(args, config):
    best_error, best_epoch = callback.get_best_from_status(args)
    found = {}
    for path in glob.glob(os.path.join(args.outdir, "results_current_*.nnp")):
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem.rsplit("_", 1)[1].isdigit():
            found[int(stem.rsplit("_", 1)[1])] = path
    if not found:
        return 0, best_epoch, best_error
    last_epoch = max(found)
    logger.log(99, f"Load parameter from [{os.path.basename(found[last_epoch])}]")
    info = SimpleNamespace(optimizers=OrderedDict(
        (k, o.optimizer) for k, o in config.optimizers.items()))
    load_train_state(found[last_epoch], info)
    return last_epoch, best_epoch, best_error


def _write_report(args, epoch, cost_avg, report):
    path = os.path.join(args.outdir, "monitoring_report.yml")
    with open(path, "a") as stream:
        stream.write(f"{epoch - 1}:\n  cost: {cost_avg}\n")
        stream.writelines(report)


def _end_of_epoch(args, config, state, epoch):
    cost = state.cost
    cost_avg = cost.sum_epoch / cost.num_iteration if cost.num_iteration else 0
    cost.sum_epoch, cost.num_iteration = 0.0, 0
    report, error_str = [], ""
    if epoch % config.training_config.monitor_interval == 0 or epoch <= 5:
        state.best_error, error_str = _evaluate(args, config, report, state.best_error, epoch)
    if single_or_rankzero():
        _write_report(args, epoch, cost_avg, report)
        callback.update_status((["monitoring_report", epoch, "cost"], cost_avg))
        _save_parameters(args, "current", epoch, config)
        callback.update_status(("epoch.current", epoch))
        callback.update_status()
        elapsed = time.time() - state.start
        logger.log(99, f"epoch {epoch} of {config.training_config.max_epoch} "
                       f"cost={cost_avg:.6f} {error_str} time=({elapsed:.1f}s "
                       f"/{state.estimate:.1f}s) ")
        if not callback.check_training_time(args, config, state, epoch, state.last_epoch):
            _save_parameters(args, "current", epoch, config, True)
            return False
    return True


def _train(args, config):
    """Run the iterations; returns ``(completed, interrupted)``."""
    t = config.training_config
    state = SimpleNamespace(best_error=None, last_epoch=0, estimate=0.0, start=time.time(),
                            cost=SimpleNamespace(sum_epoch=0.0, num_iteration=0, last=0.0))
    if args.resume:
        state.last_epoch, best_epoch, state.best_error = _resume_point(args, config)
        if best_epoch is not None:
            logger.log(99, f"Best error {state.best_error} recorded at epoch {best_epoch} in "
                           f"previous training.")
        logger.log(99, f"Resume from epoch {state.last_epoch + 1}")
    callback.update_status(("epoch.max", t.max_epoch))
    max_iteration = t.max_epoch * t.iter_per_epoch
    first = state.last_epoch * t.iter_per_epoch
    if single_or_rankzero():
        logger.log(99, f"Training epoch {state.last_epoch + 1} of {t.max_epoch} begin")
    epoch = state.last_epoch
    bar = progress_bar(max_iteration - first, "Training")
    with bar:
        for iteration in range(first, max_iteration):
            _update(iteration, config, state.cost)
            if np.isnan(state.cost.sum_epoch) or np.isinf(state.cost.sum_epoch):
                logger.log(99, "Cost is Nan")
                return False, False
            done = iteration + 1 - first
            state.estimate = (time.time() - state.start) * (max_iteration - first) / done
            callback.update_time_train(prediction=state.estimate)
            if 0 < config.timelimit < state.estimate:
                logger.log(99, f"Expected training time ({state.estimate:.3f}s) will exceed "
                               f"time limit ({config.timelimit}s).")
                return False, False
            bar.set_postfix_str(f"cost={state.cost.last:0.6f}")
            bar.update(1)
            if single_or_rankzero():
                progress(f"Training : cost={state.cost.last:0.6f}",
                         (iteration % t.iter_per_epoch) / t.iter_per_epoch)
            if (iteration + 1) % t.iter_per_epoch == 0:
                epoch = iteration // t.iter_per_epoch + 1
                if not _end_of_epoch(args, config, state, epoch):
                    return False, True
    if single_or_rankzero() and max_iteration > first:
        _save_parameters(args, "current", epoch, config, True)
    return True, False


def _config_member(path):
    """``(member name, text)`` of the network configuration stored with the results."""
    ext = os.path.splitext(path)[1].lower()
    if ext in (".nntxt", ".prototxt"):
        with open(path) as stream:
            return os.path.basename(path), stream.read()
    if ext == ".nnp":
        for name, data in read_archive(path):
            if os.path.splitext(name)[1] in (".nntxt", ".prototxt"):
                return name, data.decode("utf-8") if isinstance(data, bytes) else data
    from .._nnp_reader import read_model

    return "network.nntxt", to_text(read_model(path, exclude_parameter=True)[0])


def _make_config(args, info):
    comm = current_communicator()
    config = SimpleNamespace(timelimit=callback.get_timelimit(args), saved={},
                             global_config=info.global_config,
                             training_config=info.training_config)
    config.optimizers = OrderedDict((n, SimpleNamespace(optimizer=o, data_iterators=[]))
                                    for n, o in info.optimizers.items())
    config.monitors = OrderedDict((n, SimpleNamespace(monitor=m, data_iterators=[]))
                                  for n, m in info.monitors.items())
    if comm is not None:
        config.training_config.iter_per_epoch //= comm.size
    config.config_member, config.config_text = _config_member(args.config)
    return config


def _open_iterators(stack, config):
    """One iterator per dataset, shared by the optimizers and monitors that use it."""
    comm = current_communicator()
    rng = np.random.RandomState(comm.rank if comm else 0)
    opened = {}
    for owners, key in ((config.optimizers, "optimizer"), (config.monitors, "monitor")):
        for entry in owners.values():
            for factory in getattr(entry, key).data_iterators.values():
                if id(factory) not in opened:
                    instance = stack.enter_context(factory())
                    if comm is not None and comm.size > 1:
                        instance = instance.slice(rng, comm.size, comm.rank)
                    opened[id(factory)] = instance
                entry.data_iterators.append(opened[id(factory)])


def _check_ooc(args):
    for name in ("ooc_gpu_memory_size", "ooc_window_length"):
        value = getattr(args, name)
        if value is not None:
            number = str_to_num(value)
            if number < 0:
                logger.log(99, f"Fatal error. invalid {name} [{value}].")
                return False
            setattr(args, name, number)
    if args.enable_ooc:
        logger.log(99, "OOC (out-of-core training) needs a CUDA backend; it is ignored here.")
    return True


def train_command(args):
    """Train the configuration ``args.config`` into ``args.outdir`` (see the module)."""
    if not _check_ooc(args):
        return False
    callback.update_status(args)
    os.makedirs(args.outdir, exist_ok=True)
    if single_or_rankzero():
        configure_progress(os.path.join(args.outdir, "progress.txt"))
    info = _load.load([args.config], prepare_data_iterator=True, exclude_parameter=True,
                      context=args.context)
    if any(not d.uri.strip() for d in info.datasets.values()):
        logger.log(99, "Fatal error. Dataset URI is empty.")
        return False
    if not hasattr(info, "training_config"):
        raise ValueError(f"nnabla_cli train: {args.config!r} has no training_config")
    if args.param:
        load_train_state(args.param, info)
    config = _make_config(args, info)
    if single_or_rankzero():
        config.config_path = os.path.join(args.outdir, config.config_member)
        with open(config.config_path, "w") as stream:
            stream.write(config.config_text)
    t = config.training_config
    if t.max_epoch * t.iter_per_epoch > 0:
        with ExitStack() as stack:
            _open_iterators(stack, config)
            result, restart = _train(args, config)
    else:
        logger.log(99, "0 epoch learning. (Just save parameter.)")
        if single_or_rankzero():
            _save_parameters(args, None, 0, config, True)
        result, restart = True, False
    if single_or_rankzero() and not restart:
        logger.log(99, "Training Completed." if result else "Training Incompleted.")
        callback.update_status("finished" if result else "failed")
    if single_or_rankzero():
        progress(None)
    return True


def add_train_command(subparsers):
    """Register ``train``."""
    p = subparsers.add_parser("train", help="Training with NNP.")
    p.add_argument("-r", "--resume", help="Resume from last saved parameter",
                   action="store_true")
    p.add_argument("-c", "--config", help="Path to nntxt", required=True)
    p.add_argument("-p", "--param", help="Path to parameter file", required=False)
    p.add_argument("-o", "--outdir", help="Output directory", required=True)
    p.add_argument("-O", "--enable-ooc", help="Enable Out Of Core training",
                   action="store_true")
    p.add_argument("-m", "--ooc-gpu-memory-size", default=None,
                   help="OOC gpu memory size (INTEGER or NUMeNUM or NUM[KkMmGgTtPp])")
    p.add_argument("-C", "--context", default=None,
                   help="Force exec context (cpu or cudnn[:DEVID])")
    p.add_argument("-w", "--ooc-window-length", default=None,
                   help="OOC window length (INTEGER or NUMeNUM or NUM[KkMmGgTtPp])")
    callback.add_train_command_arg(p)
    p.set_defaults(func=train_command)
