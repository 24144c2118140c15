"""Reading and writing solver states: nnabla's HDF5 layout and its protobuf message.

HDF5 layout (as nnabla writes it): one group per parameter key (a key with ``/``
makes nested groups), holding a scalar integer dataset ``t`` and one float dataset
per state (``mean``, ``var``, ...). The group's attribute ``index`` keeps the order
of parameters, each dataset's ``index`` the order of its states.

Files are written to a temporary file in the target's folder, flushed, and renamed
over the target, so a failure never leaves a half-written file. Reading refuses
links, external storage and virtual datasets, and checks every key, state name and
shape (through a callback of the solver) before any array is read.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from ._atomic import write_path_atomically

T_LIMIT = 2**32 - 1  # nnabla stores the step count as uint32


def save_h5(path, states):
    """Write ``states`` (key -> SolverState) to ``path`` in nnabla's HDF5 layout."""
    import h5py

    def write(tmp):
        with h5py.File(tmp, "w") as f:
            for i, (key, state) in enumerate(states.items()):
                group = f.create_group(key)
                group.attrs["index"] = i
                group.create_dataset("t", data=np.int64(state.t))
                for j, (name, var) in enumerate(state.pstate.items()):
                    dataset = group.create_dataset(name, data=var.data.get_data("r"))
                    dataset.attrs["index"] = j

    write_path_atomically(path, write)


def _walk(group, api, prefix=""):
    """Yield ``(path, dataset)`` for every dataset below ``group``, refusing links."""
    import h5py

    for name in group:
        link = group.get(name, getlink=True)
        if not isinstance(link, h5py.HardLink):  # bad file content, not a bad argument type
            raise ValueError(  # noqa: TRY004
                f"{api}: '{prefix}{name}' is a {type(link).__name__}; "
                "solver state files may only hold groups and datasets")
        obj = group[name]
        if isinstance(obj, h5py.Group):
            yield from _walk(obj, api, prefix + name + "/")
        else:
            yield prefix + name, obj


def _check_dataset(path, dataset, api):
    if dataset.external or dataset.is_virtual:
        raise ValueError(f"{api}: dataset '{path}' uses external or virtual storage; refused")
    if dataset.dtype.kind not in "fiub":
        raise ValueError(f"{api}: dataset '{path}' has dtype {dataset.dtype}; expected numbers")


def _layout(f, api):
    """Map each parameter key to ``(order, {leaf name: dataset})``."""
    entries = {}
    for path, dataset in _walk(f, api):
        _check_dataset(path, dataset, api)
        key, _, leaf = path.rpartition("/")
        if not key:
            raise ValueError(f"{api}: dataset '{path}' lies outside a parameter group")
        if key not in entries:
            order = dataset.parent.attrs.get("index", None)
            entries[key] = (int(order) if order is not None else float("inf"), {})
        entries[key][1][leaf] = dataset
    return entries


def _read_t(key, datasets, api):
    t_set = datasets.pop("t", None)
    if t_set is None or t_set.shape != () or t_set.dtype.kind not in "iu":
        raise ValueError(f"{api}: parameter '{key}' has no scalar integer dataset 't'")
    t = int(t_set[()])
    if not 0 <= t <= T_LIMIT:
        raise ValueError(f"{api}: parameter '{key}' has step count t={t}; "
                         f"expected 0 <= t <= {T_LIMIT}")
    return t


def load_h5(path, check, make_state):
    """Read the states stored at ``path``.

    Args:
        path (str): an HDF5 file written by :func:`save_h5` or by nnabla.
        check (callable): ``check(key, {state name: shape})`` raises ``ValueError``
            when the solver cannot take that state; called before any array is read.
        make_state (callable): ``make_state(t, {state name: numpy array})`` builds a
            SolverState.

    Returns:
        OrderedDict: key -> SolverState, in the order the file records.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: not an HDF5 file, truncated, or not a valid state file.
    """
    import h5py

    api = "Solver.load_states"
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{api}: no such file: '{path}'")
    try:
        with h5py.File(path, "r") as f:
            entries = _layout(f, api)
            ordered = sorted(entries.items(), key=lambda kv: (kv[1][0], kv[0]))
            times = {key: _read_t(key, sets, api) for key, (_, sets) in ordered}
            for key, (_, sets) in ordered:
                check(key, {name: tuple(ds.shape) for name, ds in sets.items()})
            return OrderedDict(
                (key, make_state(times[key], {n: ds[...] for n, ds in sets.items()}))
                for key, (_, sets) in ordered)
    except (OSError, KeyError, RuntimeError, TypeError) as e:
        raise ValueError(f"{api}: '{path}' is not a readable solver state file ({e})") from e


def _nnabla_pb2(api):
    try:
        from nnabla.utils import nnabla_pb2
    except ImportError as e:
        raise NotImplementedError(f"{api}: the protobuf format needs nnabla.utils.nnabla_pb2, "
                                  f"which is not available ({e})") from e
    return nnabla_pb2


def states_to_protobuf(optimizer, states):
    """Fill ``optimizer.solver.states`` (an nnabla ``Optimizer`` message) from ``states``."""
    for key, state in states.items():
        proto = optimizer.solver.states[key]
        proto.t = int(state.t)
        for name, var in state.pstate.items():
            parameter = proto.state_parameter[name]
            parameter.shape.dim.extend(var.shape)
            parameter.data.extend(np.ravel(var.data.get_data("r")).tolist())


def states_from_protobuf(optimizer, make_state):
    """Read ``optimizer.solver.states`` into an OrderedDict key -> SolverState."""
    states = OrderedDict()
    for key, proto in optimizer.solver.states.items():
        arrays = {}
        for name, parameter in proto.state_parameter.items():
            shape = tuple(parameter.shape.dim)
            if int(np.prod(shape)) != len(parameter.data):
                raise ValueError(f"Solver.load_states: state '{key}/{name}' has "
                                 f"{len(parameter.data)} values for shape {shape}")
            arrays[name] = np.asarray(parameter.data, np.float32).reshape(shape)
        states[key] = make_state(proto.t, arrays)
    return states


def save_protobuf(path, states):
    """Write ``states`` as a serialized nnabla ``Optimizer`` message."""
    optimizer = _nnabla_pb2("Solver.save_states").Optimizer()
    states_to_protobuf(optimizer, states)
    payload = optimizer.SerializeToString()

    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(payload)

    write_path_atomically(path, write)


def load_protobuf(path, make_state, text=False):
    """Read a binary (or, with ``text``, text-format) ``Optimizer`` message from ``path``."""
    api = "Solver.load_states"
    optimizer = _nnabla_pb2(api).Optimizer()
    from google.protobuf import message, text_format

    try:
        if text:
            with open(path, encoding="utf-8") as f:
                text_format.Merge(f.read(), optimizer)
        else:
            with open(path, "rb") as f:
                optimizer.MergeFromString(f.read())
    except (message.DecodeError, text_format.ParseError, UnicodeDecodeError) as e:
        raise ValueError(f"{api}: '{path}' is not a valid solver state file ({e})") from e
    return states_from_protobuf(optimizer, make_state)
