"""nnabla_ext.cuda.init, the module nnabla and its users import by that name: memory,
preference and runtime helpers, Event and StreamEventHandler, on the emulation."""
import pytest

import nnabla_ext.cuda
import nnabla_ext.cuda.init as cuda_init
from nnabla.ext_utils import get_extension_context
from nnabla_ext.cuda import memory


def test_the_init_module_offers_nnabla_names_and_they_act():
    get_extension_context("cuda")
    assert cuda_init.get_devices() == ["0", "1"] and cuda_init.get_device_count() == 2
    cuda_init.device_synchronize("0")
    free, total = cuda_init.get_device_memory_size()
    assert 0 <= free <= total
    assert cuda_init.get_caching_allocator_fragmentation_bytes("0") >= 0
    cuda_init.clear_memory_cache()
    cuda_init.clear_virtual_memory_cache()
    try:
        cuda_init.prefer_cpu_pinned_array()
        assert memory.current() == "CudaCachedHostArray"
        assert cuda_init.array_classes()[0] == "CudaCachedHostArray"
    finally:
        cuda_init.reset_array_preference()
    assert nnabla_ext.cuda.array_classes()[0] == "CudaCachedArray"


def test_print_memory_cache_map_reports_each_device(capsys):
    get_extension_context("cuda")
    cuda_init.print_memory_cache_map()
    assert capsys.readouterr().out.startswith("device 0: 0 bytes used")


def test_virtual_memory_choices_raise_and_say_what_to_use_instead():
    for call in (cuda_init.prefer_cuda_virtual_array,
                 lambda: cuda_init.set_cuda_virtual_memory_chunk_size(1 << 20)):
        with pytest.raises(NotImplementedError, match="no virtual-memory.*prefer_unified_array"):
            call()


def test_events_time_and_stream_handlers_cycle_their_streams():
    get_extension_context("cuda")
    start, end = cuda_init.Event(0), cuda_init.Event(0)
    start.record()
    end.record()
    end.synchronize()
    assert end.elapsed(start) >= 0.0
    h = cuda_init.StreamEventHandler(0)
    assert not h.is_stream_destroy and h.value != 0 and h.device_id == 0
    first = h.value
    h.stream_wait_event()
    h.event_synchronize()
    h.stream_synchronize()
    h.default_stream_synchronize()
    h.stream_create(0)
    assert h.value != first
    h.stream_destroy()
    assert h.is_stream_destroy
    h.stream_wait_event()              # no stream: nothing to do, as in nnabla
    h.stream_synchronize()


def test_the_package_offers_stream_event_handler_as_nnabla_does():
    assert nnabla_ext.cuda.StreamEventHandler is cuda_init.StreamEventHandler
    assert nnabla_ext.cuda.Event is cuda_init.Event
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        nnabla_ext.cuda.nothing
