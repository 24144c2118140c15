"""Every extension module this suite installs offers nnabla's per-extension helpers."""
import pytest

from nnabla import ext_utils


@pytest.mark.parametrize("name", ["cpu", "toy", "boxed"])
def test_extension_module_offers_nnabla_helpers(name):
    ext = ext_utils.import_extension_module(name)
    ext.clear_memory_cache()
    assert ext.get_device_count() == len(ext.get_devices()) == 1
    ext.device_synchronize(ext.get_devices()[0])
    assert ext.context().backend[0] == f"{name}:float"


def test_cuda_array_classes_follow_the_core_array_preference():
    # nnabla's test_array_preference: nn.prefer_cached_array orders every backend's classes,
    # the cached ones first (or last), each group in its declared order.
    import nnabla as nn
    cuda = pytest.importorskip("nnabla_ext.cuda", reason="the CUDA plugin is not installed")
    try:
        nn.prefer_cached_array(True)
        assert cuda.array_classes() == ["CudaCachedArray", "CudaCachedUnifiedArray",
                                        "CudaCachedHostArray", "CudaArray"]
        nn.prefer_cached_array(False)
        assert cuda.array_classes() == ["CudaArray", "CudaCachedArray",
                                        "CudaCachedUnifiedArray", "CudaCachedHostArray"]
        cuda.prefer_unified_array()            # the module's own choice comes first
        assert cuda.array_classes()[:2] == ["CudaCachedUnifiedArray", "CudaArray"]
        cuda.prefer_cached_array(True)         # the core's knob; forgets that choice
        assert nn.array_classes()[0] == "CpuCachedArray"
        assert cuda.array_classes()[0] == "CudaCachedArray"
    finally:
        cuda.reset_array_preference()
    assert cuda.array_classes() == ["CudaCachedArray", "CudaArray", "CudaCachedUnifiedArray",
                                    "CudaCachedHostArray"]
