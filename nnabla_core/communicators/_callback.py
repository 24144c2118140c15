"""Backward callbacks: all-reduce gradients in buckets while backward runs.

The graph engine calls ``on_finish_function_backward(function)`` after each function's
backward and ``on_finish_backward()`` at the end (``Variable.backward(communicator_callbacks=
...)``). A parameter's gradient is final once the one function that uses it has run its
backward, so the callback collects those gradients into buckets of about ``pack_size``
values and all-reduces each full bucket as one packed message. Every process runs the same
graph, so buckets fill in the same order everywhere.
"""
from __future__ import annotations


class CommunicatorBackwardCallback:
    """What ``Variable.backward(communicator_callbacks=...)`` accepts: two hooks."""

    def on_finish_function_backward(self, function):
        """Called after ``function``'s backward."""

    def on_finish_backward(self):
        """Called once when the whole backward pass is done."""


class AllReduceCallback(CommunicatorBackwardCallback):
    """Bucketed all-reduce of ``arrays`` during backward (see the module docstring).

    Made by :meth:`nnabla.communicators.Communicator.all_reduce_callback`. Reusable: its
    state is reset when a backward pass ends.
    """

    def __init__(self, comm, arrays, pack_size, division, group, scale, dtype=None):
        self._comm = comm
        self._dtype = dtype          # cast each array to it before reducing (None: keep)
        self._arrays = arrays
        self._index = {}
        for i, a in enumerate(arrays):
            self._index.setdefault(a, i)     # NdArray hashes by its storage
        self._pack_size = pack_size
        self._division = division
        self._group = group
        self._scale = scale
        self._reset()

    def _reset(self):
        self._done = [False] * len(self._arrays)
        self._bucket = []
        self._filled = 0

    def on_finish_function_backward(self, function):
        for v in getattr(function, "inputs", ()):
            if v is None or not v.need_grad:
                continue
            i = self._index.get(v.grad)
            if i is None or i in self._bucket:
                continue
            if self._done[i]:
                self._reset()
                raise RuntimeError(
                    f"{type(self._comm).__name__}.all_reduce_callback: gradient {i} of 'data' "
                    "is used by several functions (a shared parameter); it was all-reduced "
                    "before its last contribution. Use comm.all_reduce after backward instead")
            self._bucket.append(i)
            self._filled += self._arrays[i].size
            if self._filled >= self._pack_size:
                self._flush()

    def on_finish_backward(self):
        # Arrays no function produced (parameters outside this graph) are reduced too, so
        # the result is that of all_reduce(data) after backward on every process.
        for i, done in enumerate(self._done):
            if not done and i not in self._bucket:
                self._bucket.append(i)
        self._flush()
        self._reset()

    def _flush(self):
        if self._bucket:
            bucket = [self._arrays[i] for i in self._bucket]
            for i in self._bucket:
                self._done[i] = True
            self._bucket, self._filled = [], 0
            if self._dtype is not None:
                try:
                    for a in bucket:
                        # a gradient only zeroed so far has no type yet: the cast decides it
                        if not a._array.has_type() or a.dtype != self._dtype:
                            a.cast(self._dtype, self._comm._ctx)
                except Exception:
                    self._reset()           # usable again in the next backward pass
                    raise
            self._comm._all_reduce(bucket, self._division, False, self._group, self._scale)
