"""The communicator interface: nnabla's user API over a small backend contract.

:class:`Communicator` validates every argument (types, shapes, groups, ranks, the order of
``init``) and then calls one protected method per operation. A backend plugin subclasses it
and implements those methods on its own arrays and transport; the core never moves a byte.

The backend contract (every method receives arguments already checked):

- ``_init()``: join the process group; set ``self._rank``, ``self._size``,
  ``self._local_rank`` and ``self._groups['world']``.
- ``_barrier()``, ``_abort()``.
- ``_new_group(name, ranks)``: collective over the world; create the sub-communicator.
- ``_all_reduce(arrays, division, inplace, group, scale)``: sum (and divide by the group's
  size) every ``NdArray`` of ``arrays`` over the group, in place; ``scale`` multiplies
  before the sum. ``inplace=False`` packs the arrays into one flat message.
- ``_reduce(arrays, dst, division, inplace, group)``: as ``_all_reduce``, result on ``dst``.
- ``_bcast(arrays, src, inplace, group)``.
- ``_all_gather(array, arrays, group)``: ``arrays[i]`` receives ``array`` of the group's
  ``i``-th rank.
- ``_reduce_scatter(arrays, array, division, group)``: ``array`` receives the sum over the
  group of ``arrays[i]``, ``i`` this process's position in the group.

Ranks (``dst``, ``src``, ``new_group``'s list) are ranks of the world communicator.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._nd_array import NdArray
from ..context import Context
from ._callback import AllReduceCallback

WORLD = "world"


class CommunicatorTimeoutError(RuntimeError):
    """A collective did not complete in time: a peer process is hung or dead."""


def _as_ndarrays(api, argument, data):
    """``data`` (an NdArray or a list/tuple of them) as a list; TypeError otherwise."""
    items = list(data) if isinstance(data, (list, tuple)) else [data]
    for i, item in enumerate(items):
        if not isinstance(item, NdArray):
            where = argument if not isinstance(data, (list, tuple)) else f"{argument}[{i}]"
            hint = " (pass its .data or .grad)" if hasattr(item, "_node") else ""
            raise TypeError(f"{api}: argument '{where}' is of type {type(item).__name__}; "
                            f"expected nnabla.NdArray{hint}")
    return items


class Communicator:
    """Communicator interface: exchanges data (e.g. gradients) between processes with
    MPI-like collectives; used for distributed training.

    Instances come from :func:`MultiProcessCommunicator` (one process per device, started
    with ``mpiexec``) or :func:`DataParallelCommunicator`, which pick the implementation of
    the context's backend. Call :meth:`init` before any collective.

    Args:
        ctx (nnabla.Context): the context whose backend implements this communicator.
    """

    #: Name reported by :attr:`name`; implementations override it.
    NAME = "Communicator"

    def __init__(self, ctx):
        if not isinstance(ctx, Context):
            raise TypeError(f"{type(self).__name__}: argument 'ctx' is of type "
                            f"{type(ctx).__name__}; expected nnabla.Context")
        self._ctx = ctx
        self._rank = 0
        self._local_rank = 0
        self._size = 1
        self._groups = {WORLD: [0]}
        self._contexts = []          # (Context, {name: Variable}) from add_context_and_parameters
        self._initialized = False

    # -- properties --------------------------------------------------------------------
    @property
    def name(self):
        """Communicator name."""
        return self.NAME

    @property
    def size(self):
        """Number of processes (or devices) of the world group."""
        return self._size

    @property
    def rank(self):
        """Rank of this process in the world group."""
        return self._rank

    @property
    def local_rank(self):
        """Rank of this process among the processes on its machine."""
        return self._local_rank

    # -- parameters --------------------------------------------------------------------
    def add_context_and_parameters(self, ctx_param_dict):
        """Add a context and its parameters (used by :meth:`allreduce`).

        Args:
            ctx_param_dict (tuple): ``(Context, dict)``, the dict mapping names (str) to
                :class:`~nnabla.Variable`.
        """
        api = f"{type(self).__name__}.add_context_and_parameters"
        if not isinstance(ctx_param_dict, tuple) or len(ctx_param_dict) != 2:
            raise TypeError(f"{api}: argument 'ctx_param_dict' must be a tuple of two "
                            f"elements (Context, dict of Variables); given "
                            f"{type(ctx_param_dict).__name__}")
        ctx, params = ctx_param_dict
        if not isinstance(ctx, Context):
            raise TypeError(f"{api}: the first element of 'ctx_param_dict' is of type "
                            f"{type(ctx).__name__}; expected nnabla.Context")
        if any(str(c) == str(ctx) for c, _ in self._contexts):
            raise ValueError(f"{api}: the same context was added already: {ctx}")
        for key, v in dict(params).items():
            if not hasattr(v, "grad") or not hasattr(v, "_node"):
                raise TypeError(f"{api}: parameter {key!r} is of type {type(v).__name__}; "
                                "expected nnabla.Variable")
        self._contexts.append((ctx, dict(params)))

    def clear_context_parameters(self):
        """Clear all registered contexts and parameters."""
        self._contexts = []

    # -- lifecycle ---------------------------------------------------------------------
    def init(self):
        """Initialize the communicator (join the processes started by ``mpiexec``).

        Must be called once, after the parameters communicated by :meth:`allreduce` were
        added with :meth:`add_context_and_parameters`, and before any collective.
        """
        if self._initialized:
            raise RuntimeError(f"{type(self).__name__}.init: the communicator was already "
                               "initialized")
        self._init()
        self._initialized = True

    def barrier(self):
        """Block until every process of the world group has reached this call."""
        self._check_initialized("barrier")
        self._barrier()

    def abort(self):
        """Terminate every process of the job (``MPI_Abort``)."""
        self._abort()

    # -- groups ------------------------------------------------------------------------
    def new_group(self, name_ranks):
        """Create a group; every process of the world must call it with the same arguments.

        Args:
            name_ranks (tuple): ``(name, ranks)``: the group's name (str) and the world
                ranks (list of int) it holds.

        Returns:
            str: the group's name.
        """
        api = f"{type(self).__name__}.new_group"
        self._check_initialized("new_group")
        if not isinstance(name_ranks, (tuple, list)) or len(name_ranks) != 2:
            raise TypeError(f"{api}: argument 'name_ranks' must be a tuple (name, ranks); "
                            f"given {name_ranks!r}")
        name, ranks = name_ranks
        if not isinstance(name, str):
            raise TypeError(f"{api}: the group name is of type {type(name).__name__}; "
                            "expected str")
        ranks = [int(r) for r in np.asarray(ranks).reshape(-1)]
        bad = [r for r in ranks if not 0 <= r < self._size]
        if not ranks or bad or len(set(ranks)) != len(ranks):
            raise ValueError(f"{api}: group {name!r} has ranks {ranks}; expected distinct "
                             f"ranks in [0, {self._size})")
        if name in self._groups:
            if self._groups[name] != ranks:
                raise ValueError(f"{api}: group {name!r} exists with ranks "
                                 f"{self._groups[name]}; given {ranks}")
            return name
        self._new_group(name, ranks)
        self._groups[name] = ranks
        return name

    def list_groups(self):
        """Returns: dict: group name (str) -> world ranks (list of int)."""
        return {name: list(ranks) for name, ranks in self._groups.items()}

    def find_group(self, group):
        """The world ranks of ``group`` (list of int); ``[]`` if there is no such group."""
        return list(self._groups.get(group, []))

    # -- collectives -------------------------------------------------------------------
    def allreduce(self, division=False, inplace=False):
        """Deprecated: use :meth:`all_reduce`. All-reduce the gradients of the parameters
        added with :meth:`add_context_and_parameters`.

        Args:
            division (bool): divide the sums by the number of processes.
            inplace (bool): reduce array by array instead of one packed array.
        """
        self._check_initialized("allreduce")
        grads = [v.grad for _, params in self._contexts for v in params.values()]
        if grads:
            self._all_reduce(grads, bool(division), bool(inplace), WORLD, 1.0)

    def all_reduce(self, data, division=False, inplace=False, group="world"):
        """Sum ``data`` over the processes of ``group``, in place.

        Args:
            data (NdArray or list of NdArray): arrays of the same shapes and dtypes on every
                process.
            division (bool): divide the sums by the number of processes of the group.
            inplace (bool): reduce array by array (less memory) instead of packing all
                arrays into one flat message (faster); the result is the same.
            group (str): name of the group.
        """
        arrays = self._collective("all_reduce", "data", data, group)
        self._all_reduce(arrays, bool(division), bool(inplace), group, 1.0)

    def reduce(self, data, dst, division=False, inplace=False, group="world"):
        """Sum ``data`` over the processes of ``group`` into the arrays of rank ``dst``.

        Args:
            data (NdArray or list of NdArray): arrays to sum.
            dst (int): world rank receiving the result (a member of ``group``).
            division (bool), inplace (bool), group (str): as for :meth:`all_reduce`.
        """
        arrays = self._collective("reduce", "data", data, group)
        self._reduce(arrays, self._member("reduce", "dst", dst, group), bool(division),
                     bool(inplace), group)

    def bcast(self, data, src, inplace=False, group="world"):
        """Copy the arrays of rank ``src`` to every process of ``group``.

        Args:
            data (NdArray or list of NdArray): arrays to send (on ``src``) or overwrite.
            src (int): world rank sending (a member of ``group``).
            inplace (bool), group (str): as for :meth:`all_reduce`.
        """
        arrays = self._collective("bcast", "data", data, group)
        self._bcast(arrays, self._member("bcast", "src", src, group), bool(inplace), group)

    def all_gather(self, ndarray, ndarray_list, group="world"):
        """Gather ``ndarray`` of every process of ``group`` into ``ndarray_list``.

        Args:
            ndarray (NdArray): this process's array.
            ndarray_list (list of NdArray): one array per process of the group, each of
                ``ndarray``'s shape; entry ``i`` receives the array of the ``i``-th rank.
            group (str): name of the group.
        """
        api = f"{type(self).__name__}.all_gather"
        array = self._collective("all_gather", "ndarray", ndarray, group)
        if len(array) != 1:
            raise TypeError(f"{api}: argument 'ndarray' must be one NdArray; given a list")
        arrays = self._per_member(api, "ndarray_list", ndarray_list, array[0], group)
        self._all_gather(array[0], arrays, group)

    def reduce_scatter(self, ndarray_list, ndarray, division=False, group="world"):
        """Sum ``ndarray_list`` over ``group``; this process keeps entry ``i`` of the sum in
        ``ndarray``, ``i`` its position in the group.

        Args:
            ndarray_list (list of NdArray): one array per process of the group.
            ndarray (NdArray): receives this process's part.
            division (bool): divide by the number of processes of the group.
            group (str): name of the group.
        """
        api = f"{type(self).__name__}.reduce_scatter"
        array = self._collective("reduce_scatter", "ndarray", ndarray, group)
        if len(array) != 1:
            raise TypeError(f"{api}: argument 'ndarray' must be one NdArray; given a list")
        arrays = self._per_member(api, "ndarray_list", ndarray_list, array[0], group)
        self._reduce_scatter(arrays, array[0], bool(division), group)

    def all_reduce_callback(self, data, pack_size, division=False, group="world",
                            scale_grad=1.0, keep_dtype=False):
        """A callback for ``loss.backward(communicator_callbacks=...)`` that all-reduces the
        gradients ``data`` while backward runs.

        As each function's backward finishes, the finished arrays of ``data`` join a bucket;
        a bucket holding ``pack_size`` values or more is all-reduced as one flat message;
        the rest when backward ends. Shared parameters (used by several functions) are
        refused. The result equals ``all_reduce(data, division)`` after backward.

        Args:
            data (NdArray or list of NdArray): the gradients to all-reduce.
            pack_size (int): number of values per packed message.
            division (bool): divide the sums by the number of processes of the group.
            group (str): name of the group.
            scale_grad (float): multiply the gradients by this factor before the sum
                (cancels a loss scale).
            keep_dtype (bool): reduce each array in its own dtype; otherwise each array is
                cast to the communicator's dtype (float16 for a ``half`` context, else
                float32) when its bucket is reduced, during backward (as nnabla; casting a
                narrowed array to another type raises there).

        Returns:
            CommunicatorBackwardCallback
        """
        api = f"{type(self).__name__}.all_reduce_callback"
        arrays = self._collective("all_reduce_callback", "data", data, group)
        if isinstance(pack_size, bool) or not isinstance(pack_size, numbers.Integral) \
                or pack_size <= 0:
            raise ValueError(f"{api}: argument 'pack_size' is {pack_size!r}; expected a "
                             "positive int")
        scale = 1.0 if scale_grad is None else float(scale_grad)
        dtype = None
        if not keep_dtype:
            dtype = np.float16 if self._ctx.backend[0].endswith(":half") else np.float32
        return AllReduceCallback(self, arrays, int(pack_size), bool(division), group, scale,
                                 dtype)

    # -- checks ------------------------------------------------------------------------
    def _check_initialized(self, op):
        if not self._initialized:
            raise RuntimeError(f"{type(self).__name__}.{op}: the communicator is not "
                               "initialized; call comm.init() first")

    def _collective(self, op, argument, data, group):
        self._check_initialized(op)
        if group not in self._groups:
            raise ValueError(f"{type(self).__name__}.{op}: argument 'group' is {group!r}; "
                             f"expected one of {sorted(self._groups)} (create groups with "
                             "new_group)")
        return _as_ndarrays(f"{type(self).__name__}.{op}", argument, data)

    def _member(self, op, argument, rank, group):
        ranks = self._groups[group]
        if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) \
                or int(rank) not in ranks:
            raise ValueError(f"{type(self).__name__}.{op}: argument '{argument}' is "
                             f"{rank!r}; expected a rank of group {group!r}: {ranks}")
        return int(rank)

    def _per_member(self, api, argument, data, like, group):
        arrays = _as_ndarrays(api, argument, data)
        n = len(self._groups[group])
        if len(arrays) != n:
            raise ValueError(f"{api}: argument '{argument}' has {len(arrays)} arrays; "
                             f"expected {n}, one per process of group {group!r}")
        for i, a in enumerate(arrays):
            if a.shape != like.shape:
                raise ValueError(f"{api}: argument '{argument}[{i}]' has shape {a.shape}; "
                                 f"expected {like.shape}, the shape of the local array")
        return arrays

    # -- the backend contract (see the module docstring) ------------------------------
    def _init(self):
        raise NotImplementedError(f"{type(self).__name__}: init is not implemented")

    def _barrier(self):
        raise NotImplementedError(f"{self.NAME}: barrier is not implemented")

    def _abort(self):
        raise NotImplementedError(f"{self.NAME}: abort is not implemented")

    def _new_group(self, name, ranks):
        raise NotImplementedError(f"{self.NAME}: new_group is not implemented")

    def _all_reduce(self, arrays, division, inplace, group, scale):
        raise NotImplementedError(f"{self.NAME}: all_reduce is not implemented")

    def _reduce(self, arrays, dst, division, inplace, group):
        raise NotImplementedError(f"{self.NAME}: reduce is not implemented")

    def _bcast(self, arrays, src, inplace, group):
        raise NotImplementedError(f"{self.NAME}: bcast is not implemented")

    def _all_gather(self, array, arrays, group):
        raise NotImplementedError(f"{self.NAME}: all_gather is not implemented")

    def _reduce_scatter(self, arrays, array, division, group):
        raise NotImplementedError(f"{self.NAME}: reduce_scatter is not implemented")

