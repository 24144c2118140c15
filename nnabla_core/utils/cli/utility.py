"""Helpers shared by the ``nnabla_cli`` subcommands (``nnabla.utils.cli.utility``).

Progress (the state file and console bars) is :mod:`nnabla.utils.progress`'s; the
communicator of ``nnabla_cli -m`` is :mod:`nnabla.utils.communicator_util`'s (re-exported
here under nnabla's names).
"""
from __future__ import annotations

import os
import re
import tempfile
from collections import OrderedDict

import numpy as np

from ...logger import logger
from ...config import nnabla_config
from ..communicator_util import (current_communicator, set_communicator,  # noqa: F401
                                 single_or_rankzero)
from ..progress import configure_progress, progress, progress_bar, show_progress  # noqa: F401


def is_float(x):
    """Whether the string ``x`` is a number."""
    try:
        float(x)
        return True
    except ValueError:
        return False


_SUFFIXES = {"K": 1000, "k": 1024, "M": 1000 ** 2, "m": 1024 ** 2, "G": 1000 ** 3,
             "g": 1024 ** 3, "T": 1000 ** 4, "t": 1024 ** 4, "P": 1000 ** 5, "p": 1024 ** 5}


def str_to_num(text):
    """Parse ``12345``, ``NUMeNUM`` (a power, as nnabla reads it) or ``NUM[KkMmGgTtPp]``
    (upper case: powers of 1000, lower case: of 1024); -1 when it is none of these.

    Example:
        >>> str_to_num("2k"), str_to_num("3M"), str_to_num("2e3"), str_to_num("x")
        (2048, 3000000, 8, -1)
    """
    m = re.match(r"(^[1-9][0-9]*$|^([1-9][0-9]*(\.[0-9]+)?)((e)([0-9]+)|[KkMmGgTtPp]))$",
                 text)
    if not m:
        return -1
    if not m.group(4):
        return int(m.group(1))
    if m.group(5):
        return int(float(m.group(2)) ** int(m.group(6)))
    return int(float(m.group(2)) * _SUFFIXES[m.group(4)])


def compute_full_path(root_path, file_path):
    """``root_path/file_path`` with either slash and ``/./`` normalised."""
    full_path = os.path.join(root_path, file_path)
    full_path = full_path.replace("\\", os.path.sep).replace("/", os.path.sep)
    return full_path.replace(os.path.sep + "." + os.path.sep, os.path.sep)


def let_data_to_variable(variable, data, ctx=None, data_name=None, variable_name=None):
    """Copy a batch into ``variable`` (in its dtype) and mark it ``need_grad=False``.

    Raises:
        ValueError: when the shapes differ (naming the data and the variable).
    """
    data = np.asarray(data)
    if tuple(variable.shape) != data.shape:
        if data.size != variable.size:
            raise ValueError(f"Shape does not match between data "
                             f"{data_name or ''!r} {data.shape} and variable "
                             f"{variable_name or ''!r} {tuple(variable.shape)}")
        data = data.reshape(variable.shape)
    variable.d = data
    variable.need_grad = False


def nnp_param_format():
    """Format of the parameter member of saved ``.nnp`` files (``[MISC] nnp_param_format``)."""
    return nnabla_config.get("MISC", "nnp_param_format", fallback=".h5")


def optimizer_state_members(optimizers, ext=".h5"):
    """``(member name, bytes)`` of the solver states of ``optimizers`` (name -> optimizer
    with ``solver``), named ``<name>_<Solver>_optimizer.h5.optimizer`` as nnabla's."""
    from ..save import _solver_state_members

    contents = {"optimizers": [{"name": o.name, "solver": o.solver}
                               for o in optimizers.values()]}
    return _solver_state_members(contents, ext)


def save_optimizer_states(filebase, ext, train_config):
    """Write the solver states of ``train_config.optimizers`` (name -> object with an
    ``optimizer`` holding ``name`` and ``solver``) next to ``filebase``, as nnabla's
    checkpoints do, and return the paths written: one
    ``<filebase>_optimizer.protobuf.optimizer`` holding every optimizer for ``ext ==
    '.protobuf'``, else one ``<filebase>_<name>_<Solver>_optimizer.h5.optimizer`` each."""
    from ..._atomic import write_atomically

    optimizers = OrderedDict((k, o.optimizer) for k, o in train_config.optimizers.items())
    files = [(f"{filebase}_{member}", data) for member, data in
             optimizer_state_members(optimizers, ".protobuf" if ext == ".protobuf" else ".h5")]
    for path, data in files:
        write_atomically(path, lambda stream, data=data: stream.write(data))
    return [path for path, _ in files]


def _restore_solver_states(members, optimizers, where):
    by_name = {o.name: o for o in optimizers.values()}
    for member, data in members.items():
        stem = member[:-len(".optimizer")]
        if stem.endswith(".protobuf"):
            from .. import nnabla_pb2

            proto = nnabla_pb2.NNablaProtoBuf.FromString(data)
            for message in proto.optimizer:
                if message.name in by_name:
                    by_name[message.name].solver.set_states_from_protobuf(message)
            continue
        matched = [o for name, o in by_name.items() if stem.startswith(name + "_")]
        if not matched:
            logger.warning(f"{where}: solver states {member!r} match no optimizer; ignored")
            continue
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "states" + os.path.splitext(stem)[1])
            with open(path, "wb") as stream:
                stream.write(data)
            max(matched, key=lambda o: len(o.name)).solver.load_states(path)


def load_train_state(filename, info):
    """Load parameters (into the current scope) and solver states from a training result.

    Args:
        filename (str): an ``.nnp`` written by ``nnabla_cli train`` (or a parameter file).
        info: the object :func:`nnabla.utils.load.load` returned; its optimizers' solvers
            receive the stored states.
    """
    from .._nnp_reader import read_model

    _, states = read_model(filename, parameter_only=True)
    _restore_solver_states(states, getattr(info, "optimizers", OrderedDict()), filename)
    logger.info(f"Load training resume states: {filename}")


def create_communicator():
    """Create and initialise the MPI communicator for ``nnabla_cli -m``.

    Raises:
        ImportError: when the context's backend has no MPI transport installed.
    """
    import nnabla.communicators as C
    from nnabla.context import get_current_context

    comm = C.MultiProcessDataParallelCommunicator(get_current_context())
    comm.init()
    set_communicator(comm)
    return comm
