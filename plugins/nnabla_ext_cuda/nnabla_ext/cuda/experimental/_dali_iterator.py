"""The DALI helpers proper; imported by :mod:`.dali_iterator` only when DALI imports."""
from __future__ import annotations

import ctypes

import numpy as np
from nvidia.dali.pipeline import Pipeline

from nnabla import NdArray
from nnabla.ext_utils import get_extension_context
from nnabla.plugins.resolve import family_of_context


def _pointer(head):
    """Address of the first element of a host (numpy) or device (CUDA array interface)
    array."""
    interface = getattr(head, "__cuda_array_interface__", None)
    if interface is not None:
        return interface["data"][0]
    return head.ctypes.data


def feed_ndarray(dali_tensor, arr, ctx, non_blocking=False):
    """Copy a DALI tensor into an :class:`~nnabla.NdArray`, in the memory of ``ctx``.

    Args:
        dali_tensor (nvidia.dali.backend.TensorCPU or TensorGPU): the source.
        arr (nnabla.NdArray): the destination, of the tensor's shape; it takes the
            tensor's dtype, and ``ctx``'s array becomes its only valid copy.
        ctx (nnabla.Context): a host context for a ``TensorCPU``, a device context for a
            ``TensorGPU``.
        non_blocking (bool): copy asynchronously with respect to the host (passed to
            DALI's ``copy_to_external``).

    Returns:
        nnabla.NdArray: ``arr``.

    Raises:
        ValueError: the shapes differ.
    """
    from nvidia.dali.types import to_numpy_type
    shape = list(dali_tensor.shape())
    if shape != list(arr.shape):
        raise ValueError(f"feed_ndarray: the DALI tensor has shape {shape}; the NdArray "
                         f"argument 'arr' has shape {list(arr.shape)}")
    dtype = np.dtype(to_numpy_type(dali_tensor.dtype))
    family = family_of_context(ctx)
    # cast: ctx's array of ``dtype`` becomes the only valid one, so DALI writes the data
    arr.cast(dtype, ctx)
    head = arr._array.get(dtype, family)
    kw = {"non_blocking": True} if non_blocking else {}
    dali_tensor.copy_to_external(ctypes.c_void_p(_pointer(head)), **kw)
    return arr


class DaliIterator:
    """A data iterator over a DALI pipeline's outputs, as :class:`~nnabla.NdArray` s.

    Args:
        pipeline (nvidia.dali.pipeline.Pipeline): the pipeline; built here.
        non_blocking (bool): copy outputs asynchronously. DALI's ``copy_to_external`` of
            the versions nnabla targeted had no such option, so nnabla refuses True; so
            does this.

    Raises:
        ValueError: ``non_blocking`` is True.
    """

    def __init__(self, pipeline, non_blocking=False):
        if non_blocking:
            raise ValueError("DaliIterator: argument 'non_blocking' must be False (DALI's "
                             "asynchronous copy to external memory is not supported)")
        self.pipeline = pipeline
        self.pipeline.build()
        self.non_blocking = non_blocking

    def next(self):
        """The next batch: one NdArray per pipeline output (device outputs in the pipeline
        device's cuda context, host outputs in the host context). The pipeline restarts
        when an epoch ends.

        Raises:
            ValueError: an output's samples differ in shape.
        """
        from nvidia.dali.backend import TensorCPU
        try:
            outputs = self.pipeline.run()
        except StopIteration:
            self.pipeline.reset()
            outputs = self.pipeline.run()
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        device_id = self.pipeline.device_id
        if device_id is None or device_id < 0:
            raise ValueError(f"DaliIterator: the pipeline's device_id is {device_id!r}; "
                             "expected a CUDA device index >= 0")
        host_ctx = get_extension_context("cpu")
        device_ctx = get_extension_context("cuda", device_id=str(device_id))
        batch = []
        for index, output in enumerate(outputs):
            if not output.is_dense_tensor():
                raise ValueError(f"DaliIterator: output {index} has samples of different "
                                 "shapes; a batch needs one shape")
            tensor = output.as_tensor()
            on_host = isinstance(tensor, TensorCPU)
            batch.append(feed_ndarray(tensor, NdArray(tuple(tensor.shape())),
                                      host_ctx if on_host else device_ctx,
                                      self.non_blocking and not on_host))
        return batch

    __next__ = next

    def __iter__(self):
        return self


class DataIteratorPipeline(Pipeline):
    """A DALI pipeline fed by an nnabla data iterator: each batch goes to the device
    while the previous one is being used.

    Args:
        it: an object whose ``next()`` returns a tuple of numpy arrays (an
            :class:`~nnabla.utils.data_iterator.DataIterator`).
        num_threads (int): DALI's CPU worker threads.
        device_id (int): the CUDA device the outputs go to.
        seed (int): DALI's seed.
        batch_size (int, optional): default: the first dimension of the first array of
            the first batch.

    Example::

        from nnabla.utils.data_iterator import data_iterator_simple
        from nnabla_ext.cuda.experimental import dali_iterator

        data = data_iterator_simple(load, 512, 32, shuffle=True)
        dali_it = dali_iterator.DaliIterator(
            dali_iterator.DataIteratorPipeline(data, device_id=0))
        x.data, t.data = dali_it.next()
    """

    def __init__(self, it, num_threads=2, device_id=0, seed=726, batch_size=None):
        import nvidia.dali.ops as ops
        first = it.next()              # tells the number of outputs and the batch size
        if batch_size is None:
            batch_size = first[0].shape[0]
        super().__init__(batch_size, num_threads, device_id, seed=seed)
        self.it = it
        self.pending = first
        self.inputs = [ops.ExternalSource() for _ in first]

    def define_graph(self):
        self.graph_inputs = [source() for source in self.inputs]
        return tuple(node.gpu() for node in self.graph_inputs)

    def iter_setup(self):
        values, self.pending = (self.pending, None) if self.pending is not None \
            else (self.it.next(), None)
        for node, value in zip(self.graph_inputs, values):
            self.feed_input(node, value)


def create_dali_iterator_from_data_iterator(it, num_threads=2, device_id=0, seed=726,
                                            batch_size=None, non_blocking=False):
    """A :class:`DaliIterator` over a :class:`DataIteratorPipeline` of ``it`` (arguments as
    theirs)."""
    pipeline = DataIteratorPipeline(it, num_threads, device_id, seed, batch_size)
    return DaliIterator(pipeline, non_blocking=non_blocking)
