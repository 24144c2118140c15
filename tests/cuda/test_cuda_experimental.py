"""``nnabla_ext.cuda.experimental.dali_iterator``: without DALI it imports with
``enabled = False`` and its helpers raise ImportError naming the package; with DALI (a
stand-in here with DALI's interface, copying through raw pointers as DALI does) batches land
in device NdArrays on the cuda emulation."""
import ctypes
import importlib
import importlib.util
import sys
import types

import numpy as np
import pytest

import nnabla as nn
import nnabla_ext.cuda.experimental
from nnabla.array_family import family
from nnabla.ext_utils import get_extension_context

_DALI_INSTALLED = importlib.util.find_spec("nvidia") is not None and \
    importlib.util.find_spec("nvidia.dali") is not None


@pytest.mark.skipif(_DALI_INSTALLED, reason="NVIDIA DALI is installed here: the missing-"
                                            "package path cannot be observed")
def test_without_dali_the_module_imports_and_its_helpers_name_the_package():
    from nnabla_ext.cuda.experimental import dali_iterator
    assert dali_iterator.enabled is False
    with pytest.raises(ImportError, match=r"DaliIterator needs NVIDIA DALI.*"
                                          r"pip install nvidia-dali-cuda130"):
        dali_iterator.DaliIterator
    with pytest.raises(ImportError, match="nvidia-dali-cuda130"):
        from nnabla_ext.cuda.experimental.dali_iterator import (  # noqa: F401
            create_dali_iterator_from_data_iterator)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        dali_iterator.nothing


# -- a stand-in for nvidia.dali: the names and calls the helpers use --------------------------
class _Tensor:
    def __init__(self, value):
        self.value = np.ascontiguousarray(value)
        self.dtype = self.value.dtype.str         # to_numpy_type maps it back

    def shape(self):
        return list(self.value.shape)

    def copy_to_external(self, ptr, non_blocking=False):
        ctypes.memmove(ptr.value, self.value.ctypes.data, self.value.nbytes)


class TensorCPU(_Tensor):
    pass


class TensorGPU(_Tensor):
    pass


class _TensorList:
    def __init__(self, tensor, dense=True):
        self.tensor, self.dense = tensor, dense

    def is_dense_tensor(self):
        return self.dense

    def as_tensor(self):
        return self.tensor


class _Node:
    def __init__(self, on_gpu=False):
        self.on_gpu, self.source = on_gpu, self

    def gpu(self):
        node = _Node(True)
        node.source = self
        return node


class Pipeline:
    def __init__(self, batch_size, num_threads, device_id, seed=-1):
        self.batch_size, self.device_id, self.fed, self.runs = batch_size, device_id, {}, 0

    def build(self):
        self.outputs = self.define_graph()

    def feed_input(self, node, value):
        self.fed[id(node)] = value

    def run(self):
        self.iter_setup()
        self.runs += 1
        return tuple(_TensorList((TensorGPU if n.on_gpu else TensorCPU)(self.fed[id(n.source)]))
                     for n in self.outputs)

    def reset(self):
        pass


@pytest.fixture
def fake_dali(monkeypatch):
    modules = {name: types.ModuleType(name) for name in
               ("nvidia.dali", "nvidia.dali.pipeline", "nvidia.dali.ops", "nvidia.dali.types",
                "nvidia.dali.backend")}
    modules["nvidia.dali.pipeline"].Pipeline = Pipeline
    modules["nvidia.dali.ops"].ExternalSource = lambda: (lambda: _Node())
    modules["nvidia.dali.types"].to_numpy_type = np.dtype
    modules["nvidia.dali.backend"].TensorCPU = TensorCPU
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
        parent, _, leaf = name.rpartition(".")
        monkeypatch.setattr(sys.modules[parent], leaf, module, raising=False)
    for name in ("nnabla_ext.cuda.experimental.dali_iterator",
                 "nnabla_ext.cuda.experimental._dali_iterator"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(nnabla_ext.cuda.experimental, "dali_iterator", None, raising=False)
    monkeypatch.setattr(nnabla_ext.cuda.experimental, "_dali_iterator", None, raising=False)
    yield importlib.import_module("nnabla_ext.cuda.experimental.dali_iterator")
    for name in ("nnabla_ext.cuda.experimental.dali_iterator",
                 "nnabla_ext.cuda.experimental._dali_iterator"):
        sys.modules.pop(name, None)     # monkeypatch then puts back any earlier import


class _Batches:
    def __init__(self):
        self.i = 0

    def next(self):
        self.i += 1
        return (np.full((2, 3), self.i, np.float32), np.full((2, 2), self.i, np.int32))


def test_with_dali_batches_land_in_device_ndarrays(fake_dali):
    get_extension_context("cuda")
    assert fake_dali.enabled is True
    it = fake_dali.create_dali_iterator_from_data_iterator(_Batches(), device_id=0)
    assert it.pipeline.batch_size == 2
    cuda = family("cuda")
    for i in range(1, 4):
        floats, ints = it.next()
        assert isinstance(floats, nn.NdArray) and floats.dtype == np.float32
        assert ints.dtype == np.int32 and ints.shape == (2, 2)
        assert [key[0] for key in floats._array.heads] == [cuda]      # written on the device
        np.testing.assert_array_equal(floats.data, np.full((2, 3), i))
        np.testing.assert_array_equal(ints.data, np.full((2, 2), i))


def test_feed_ndarray_writes_host_tensors_on_the_host_and_checks_shapes(fake_dali):
    arr = nn.NdArray((2, 2))
    value = np.arange(4, dtype=np.float64).reshape(2, 2)
    fake_dali.feed_ndarray(TensorCPU(value), arr, get_extension_context("cpu"))
    assert arr.dtype == np.float64
    np.testing.assert_array_equal(arr.data, value)
    with pytest.raises(ValueError, match=r"shape \[3\].*'arr' has shape \[2, 2\]"):
        fake_dali.feed_ndarray(TensorCPU(np.zeros(3)), arr, get_extension_context("cpu"))


def test_ragged_outputs_and_non_blocking_are_refused(fake_dali):
    get_extension_context("cuda")
    with pytest.raises(ValueError, match="'non_blocking' must be False"):
        fake_dali.create_dali_iterator_from_data_iterator(_Batches(), non_blocking=True)
    it = fake_dali.create_dali_iterator_from_data_iterator(_Batches())
    it.pipeline.run = lambda: (_TensorList(TensorGPU(np.zeros(2)), dense=False),)
    with pytest.raises(ValueError, match="output 0 has samples of different shapes"):
        it.next()
