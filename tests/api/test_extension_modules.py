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
