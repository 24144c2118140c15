"""Variable: the user-facing handle of a graph node.

The graph keeps :class:`VarNode` objects; a :class:`Variable` wraps one. When
the last Python handle of a node created in auto-forward mode goes away and no
backward pass needs the node's data, the data is released at once (nnabla
v1.32's auto-forward memory behaviour).
"""
from __future__ import annotations

import gc
import math
import numbers
import weakref

import numpy as np

from . import _execute, _native_graph
from ._array import F32, SyncedArray
from .array_family import HOST
from . import _graph
from ._nd_array import NdArray, as_host_array
from ._state import STATE


class VarNode:
    """A node of the computation graph: data, grad, flags and the parent function."""

    __slots__ = ("data", "_grad", "parent", "need_grad", "persistent", "recompute", "name",
                 "owner", "needed", "auto", "refs", "stop", "__weakref__")

    def __init__(self, shape, need_grad=False, dtype=F32, data=None):
        self.data = SyncedArray(shape, dtype) if data is None else data
        self._grad = None        # created on first use: most nodes never see a gradient
        self.parent = None
        self.need_grad = need_grad
        self.persistent = False
        self.recompute = False
        self.name = ""
        self.owner = None
        self.needed = False      # some backward pass reads this node's data
        self.auto = False        # created in auto-forward mode (released with its handle)
        self.refs = ()           # weak references to its consumers (see _graph.link)
        self.stop = None         # need_grad set explicitly on an intermediate: not value

    @property
    def shape(self):
        return self.data.shape

    @property
    def grad(self):
        g = self._grad
        if g is None:
            g = self._grad = SyncedArray(self.data.shape, self.data.dtype
                                         if self.data.dtype.kind == "f" else F32)
        return g

    @grad.setter
    def grad(self, value):
        self._grad = value


def _share(data, node):
    """Record that ``node`` holds ``data`` too (its release then waits for every handle)."""
    sharers = [r for r in data.sharers or () if r() is not None]
    data.sharers = sharers + [weakref.ref(node)]


def _shared_with_another_handle(data, node):
    """Whether a live Variable other than ``node``'s holds ``data`` (get_unlinked_variable)."""
    for ref in data.sharers:
        other = ref()
        if other is not None and other is not node and other.owner is not None \
                and other.owner() is not None:
            return True
    return False


def variable_of(node):
    """The (unique while alive) Variable handle of ``node``."""
    ref = node.owner
    if ref is not None:
        v = ref()
        if v is not None:
            return v
    v = Variable.__new__(Variable)
    v._node = node
    node.owner = weakref.ref(v)
    return v


def _seed(root, grad):
    """The gradient backward starts from at ``root``, as a SyncedArray (any family)."""
    if grad is None:
        return root.grad
    shape = root.data.shape
    if isinstance(grad, NdArray):
        if grad.shape == shape:
            return grad._array
        grad = grad.data
    if np.ndim(grad) == 0 and not isinstance(grad, np.ndarray):
        return _execute.output_seed(shape, float(grad))
    arr = np.asarray(grad, dtype=np.float32)     # a user's host array
    if arr.shape != shape:
        try:
            arr = np.broadcast_to(arr, shape)
        except ValueError:
            raise ValueError(f"Variable.backward: argument 'grad' has shape {arr.shape}; "
                             f"expected {shape}") from None
    seed = _execute.output_seed(shape, 0)
    seed.set(np.array(arr, dtype=np.float32))
    return seed


def _shape_arg(shape, api):
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        return (int(shape),)
    try:
        dims = None if isinstance(shape, (str, bytes, dict, set, frozenset)) else tuple(shape)
    except TypeError:
        dims = None
    if dims is None or not all(isinstance(s, numbers.Integral) and not isinstance(s, bool)
                               for s in dims):
        raise TypeError(f"{api}: argument 'shape' must be a sequence of ints; "
                        f"given {shape!r}")
    shape = tuple(int(s) for s in dims)
    if any(s < 0 for s in shape):
        raise ValueError(f"{api}: argument 'shape' has a negative size: {shape}")
    return shape


def _release_uncommon(node):
    """Release the data of ``node``, an auto-forward intermediate whose last handle went away
    and which no backward reads (Variable.__del__, in C, calls this when the data is shared
    with other nodes, narrowed, or a window on another array)."""
    data = node.data
    if data.sharers is not None and _shared_with_another_handle(data, node):
        return
    if (data.narrowed is not None or data.__class__ is not SyncedArray) \
            and data.in_narrow_family():
        Variable.EXCEPTIONS_AT_DEALLOC.append(RuntimeError(
            "a Variable handle went away: releasing the memory of an array narrowed "
            "from (or narrowed into) another one is refused (NdArray.narrow)"))
        return
    if data.__class__ is SyncedArray:     # a window's memory is its root's
        data.clear()


class _RewireShapeError(ValueError, RuntimeError):
    """rewire_on between variables of different shapes (nnabla raises a RuntimeError)."""


class Variable:
    """A node of a computation graph holding data and gradient.

    Its operators, indexing and ``reshape`` run functions; :mod:`nnabla._operators`
    attaches them.

    Args:
        shape (tuple of int): shape of the variable.
        need_grad (bool): whether gradients flow into this variable.
    """

    __slots__ = ("_node", "__weakref__")

    def __init__(self, shape=(), need_grad=False):
        node = self._node = VarNode(_shape_arg(shape, "nn.Variable"), bool(need_grad))
        node.owner = weakref.ref(self)
        node.recompute = STATE.global_recompute       # nn.recompute() scopes, as nnabla

    # RuntimeErrors raised while a handle went away (nnabla's name; see below)
    EXCEPTIONS_AT_DEALLOC = []

    @staticmethod
    def _check_exception_at_dealloc():
        """Raise the first error recorded when a Variable handle went away (nnabla's API):
        releasing the memory of a narrowed array is refused, and ``__del__`` cannot raise.
        """
        if Variable.EXCEPTIONS_AT_DEALLOC:
            raise Variable.EXCEPTIONS_AT_DEALLOC.pop(0)

    # auto-forward: the last handle of an intermediate no backward reads releases its data
    # (in C, as it runs for every handle; arrays shared, narrowed or windows go through
    # _release_uncommon)
    __del__ = _native_graph.release_handle

    @staticmethod
    def from_numpy_array(data, grad=None, need_grad=None):
        """A Variable holding a copy of ``data`` (and ``grad`` if given).

        Raises:
            TypeError: ``data`` is None, or either array has a type nnabla cannot hold
                (complex, object).
            ValueError: ``grad`` has another shape than ``data``.
        """
        data = as_host_array(data, "Variable.from_numpy_array", "data")
        if grad is not None:
            grad = as_host_array(grad, "Variable.from_numpy_array", "grad")
            if grad.shape != data.shape:
                raise ValueError(f"Variable.from_numpy_array: argument 'grad' has shape "
                                 f"{grad.shape}; expected data's shape {data.shape}")
        v = Variable(data.shape, need_grad=bool(need_grad))
        v.d = data
        if grad is not None:
            v.g = grad
        return v

    # -- data and grad --------------------------------------------------------------------
    @property
    def data(self):
        node = self._node
        if not gc.is_tracked(node):     # an auto-forward node: others may now share its data,
            _native_graph.track(node)   # and get_number_of_references reads the referrers
        return NdArray._wrap(node.data)

    @data.setter
    def data(self, value):
        if not isinstance(value, NdArray):
            raise TypeError(f"Variable.data: expected NdArray; given {type(value).__name__}")
        if value.shape != self.shape:
            raise ValueError(f"Variable.data: NdArray of shape {value.shape} does not match "
                             f"the variable's shape {self.shape}")
        self._node.data = value._array

    @property
    def grad(self):
        return NdArray._wrap(self._node.grad)

    @grad.setter
    def grad(self, value):
        if not isinstance(value, NdArray):
            raise TypeError(f"Variable.grad: expected NdArray; given {type(value).__name__}")
        if value.shape != self.shape:
            raise ValueError(f"Variable.grad: NdArray of shape {value.shape} does not match "
                             f"the variable's shape {self.shape}")
        self._node.grad = value._array

    @property
    def d(self):
        """The data as a numpy array (a reference: writing into it changes the variable)."""
        a = self._node.data
        return a.cast(a.dtype, HOST)

    @d.setter
    def d(self, value):
        NdArray._wrap(self._node.data).data = value

    @property
    def g(self):
        """The gradient as a numpy array (a reference)."""
        a = self._node.grad
        return a.cast(a.dtype, HOST)

    @g.setter
    def g(self, value):
        NdArray._wrap(self._node.grad).data = value

    # -- shape ----------------------------------------------------------------------------
    @property
    def shape(self):
        return self._node.data.shape

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def size_from_axis(self, axis=-1):
        return NdArray._wrap(self._node.data).size_from_axis(axis)

    def reset_shape(self, shape, force=False):
        """Resize in place; without ``force`` the size must stay the same."""
        shape = _shape_arg(shape, "Variable.reset_shape")
        node = self._node
        if not force and int(np.prod(shape)) != int(np.prod(node.data.shape)):
            raise ValueError(f"Variable.reset_shape: size of {shape} differs from the size of "
                             f"{node.data.shape}; pass force=True to resize")
        if force and int(np.prod(shape)) != int(np.prod(node.data.shape)):
            node.data = SyncedArray(shape, node.data.dtype)
            node.grad = SyncedArray(shape, node.grad.dtype)
        else:
            node.data.reshape(shape)
            node.grad.reshape(shape)
        _graph.bump()   # cached plans re-infer the shapes of the functions downstream

    # -- flags ----------------------------------------------------------------------------
    @property
    def need_grad(self):
        return self._node.need_grad

    @need_grad.setter
    def need_grad(self, value):
        node = self._node
        node.need_grad = bool(value)
        if node.parent is not None:
            node.stop = not value
        _graph.bump()

    @property
    def persistent(self):
        return self._node.persistent

    @persistent.setter
    def persistent(self, value):
        self._node.persistent = bool(value)
        _graph.bump()  # cached clear_buffer schedules depend on it

    @property
    def recompute(self):
        return self._node.recompute

    @recompute.setter
    def recompute(self, value):
        self._node.recompute = bool(value)
        _graph.bump()

    @property
    def name(self):
        return self._node.name

    @name.setter
    def name(self, value):
        self._node.name = str(value)

    def apply(self, **kwargs):
        """Set properties (e.g. ``persistent=True``), then return self."""
        for key, value in kwargs.items():
            setattr(self, key, value)
        return self

    # -- graph ----------------------------------------------------------------------------
    @property
    def parent(self):
        return self._node.parent

    @parent.setter
    def parent(self, func):
        _graph.set_parent(self._node, func)

    @property
    def rank(self):
        """The length of the longest path from a root variable to this one (0 for a
        variable without parent; a function's outputs have one more than the largest rank
        of its inputs), as nnabla's ``Variable.rank``."""
        node = self._node
        if node.parent is None:
            return 0
        ranks = {}
        for f in _graph.topological_functions([node]):
            r = max((ranks.get(id(n), 0) for n in f.in_nodes if n is not None), default=0)
            for ref in f.out_refs:
                out = ref()
                if out is not None:
                    ranks[id(out)] = r + 1
        return ranks.get(id(node), 0)

    @property
    def function_references(self):
        """Functions that take this variable as an input."""
        refs = [r() for r in _graph.consumer_refs(self._node)]
        return [f for f in refs if f is not None]

    def forward(self, clear_buffer=False, clear_no_need_grad=False,
                function_pre_hook=None, function_post_hook=None):
        """Run the graph up to this variable (see ``nnabla.forward_all``)."""
        _graph.forward([self._node], clear_buffer, clear_no_need_grad,
                       function_pre_hook, function_post_hook)

    def backward(self, grad=1, clear_buffer=False, communicator_callbacks=None,
                 function_pre_hook=None, function_post_hook=None):
        """Back-propagate from this variable to the roots of its graph.

        Args:
            grad: the output gradient: a scalar (default 1), numpy array, NdArray,
                or None to use the current ``self.g``. This variable's ``g`` is not changed.
            clear_buffer (bool): release intermediate buffers as soon as possible.
        """
        node = self._node
        seed = _seed(node, grad)
        # a seed made here from a scalar or host array is this call's: clear_buffer clears it
        temporary = seed is not node._grad and not (isinstance(grad, NdArray)
                                                    and seed is grad._array)
        _graph.backward(node, seed, clear_buffer, communicator_callbacks, function_pre_hook,
                        function_post_hook, temporary)

    def get_unlinked_variable(self, need_grad=None):
        """A new variable sharing data and grad, without a parent."""
        v = Variable.__new__(Variable)
        node = VarNode(self.shape, self._node.need_grad if need_grad is None else bool(need_grad))
        node.data, node.grad = self._node.data, self._node.grad
        node.owner = weakref.ref(v)
        node.recompute = STATE.global_recompute
        _share(node.data, node)
        _share(node.data, self._node)   # (get_number_of_references reads the sharers)
        v._node = node
        return v

    def unlinked(self, need_grad=None):
        """Deprecated: use :meth:`get_unlinked_variable`."""
        return self.get_unlinked_variable(need_grad)

    def rewire_on(self, var):
        """Put the graph that consumes this variable on top of ``var``'s graph.

        Raises:
            TypeError: ``var`` is not a Variable.
            ValueError: the shapes differ (also a RuntimeError, as nnabla raises); nothing
                is rewired then.
        """
        if not isinstance(var, Variable):
            raise TypeError(f"Variable.rewire_on: argument 'var' is of type "
                            f"{type(var).__name__}; expected an nnabla.Variable")
        if tuple(var.shape) != tuple(self.shape):
            raise _RewireShapeError(f"Variable.rewire_on: argument 'var' has shape "
                                    f"{tuple(var.shape)}; expected this variable's shape "
                                    f"{tuple(self.shape)}")
        _graph.rewire_on(self._node, var._node)

    def visit(self, f):
        """Call ``f(function)`` for every function of the graph, in forward order."""
        for func in _graph.topological_functions([self._node]):
            f(func)

    def visit_check(self, f):
        """Like :meth:`visit`; returns True (and stops) once ``f`` returns True."""
        for func in _graph.topological_functions([self._node]):
            if f(func):
                return True
        return False

    def clear_all_graph_links(self):
        """Cut the graph behind this variable (truncated backprop through time)."""
        _graph.clear_all_graph_links(self._node)

    def no_grad(self):
        """A copy of this graph with need_grad False everywhere (static graphs)."""
        return _graph.no_grad_copy(self)

    @property
    def info(self):
        return _VariableInfo(self)

    @property
    def get_number_of_references(self):
        """How many live Variables hold this variable's data array (a property, as in
        nnabla 1.39): itself, unlinked copies, variables rewired on it or given its data.

        Handles to the same variable and NdArrays taken from ``.data`` do not count.
        Meant for tests of memory sharing: it scans the garbage collector's referrers, plus
        this variable's node and the array's recorded sharers (auto-forward nodes are not
        tracked by the collector).
        """
        data = self._node.data
        root = getattr(data, "root", data)          # windows share their root's memory
        holders = [root] + [a for a in gc.get_referrers(root)
                            if isinstance(a, SyncedArray) and getattr(a, "root", None) is root]
        nodes = {id(self._node): self._node}
        for array in holders:
            for ref in gc.get_referrers(array):
                if isinstance(ref, VarNode):
                    nodes[id(ref)] = ref
            for ref in array.sharers or ():
                if ref() is not None:
                    nodes[id(ref())] = ref()
        return sum(1 for n in nodes.values()
                   if any(n.data is a for a in holders) and n.owner is not None
                   and n.owner() is not None)

    # -- python protocol ------------------------------------------------------------------
    def __repr__(self):
        return f"<Variable({self.shape}, need_grad={self.need_grad}) at {hex(id(self))}>"

    def __eq__(self, other):
        return isinstance(other, Variable) and (
            other._node is self._node
            or (other._node.data is self._node.data and other._node.grad is self._node.grad))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash((id(self._node.data), id(self._node.grad)))


class _VariableInfo:
    def __init__(self, v):
        self.shape = v.shape
        self.need_grad = v.need_grad
        self.persistent = v.persistent
        self.name = v.name
        self.parent = v.parent

    def __repr__(self):
        return f"VariableInfo(shape={self.shape}, need_grad={self.need_grad})"


_native_graph.bind_nodes(VarNode, Variable, _release_uncommon)
