"""The NCCL communicator plugin (nnabla-comm-nccl).

Here, without a GPU: it registers as an add-on for the cuda and cudnn backends, says why it
cannot run, and its logic (message plan, buckets, ncclAvg, groups, roots, argument checks)
runs in real 2-process MPI jobs on the CUDA emulation with ``workers/fake_nccl.py`` standing
in for NCCL. The tests marked ``gpu`` run the CPU communicator's collective workers on real
NCCL and skip, with the reason, where there are not two GPUs.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

import nnabla
import nnabla_comm_nccl
from nnabla.plugins import CommunicatorSet, PluginInfo, hookimpl
from nnabla.plugins.manager import Registry
from nnabla_comm_nccl import _plugin
from nnabla_comm_nccl.communicator import bucket_bytes, nccl_type, plan_messages

FAKE = {"NNABLA_CUDA_EMULATE": "1", "NNABLA_TEST_COMMUNICATOR": "nccl-fake"}


def _python(code, **env):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **env))


def test_the_plugin_registers_its_communicator_for_cuda_and_cudnn_as_an_add_on():
    nnabla.plugins.REGISTRY.activate("cpu")
    record = nnabla.plugins.REGISTRY.records["nccl"]
    assert (record.status, record.distribution) == ("active", "nnabla-comm-nccl")
    assert record.registered["communicators"] == {
        "cuda": ["MultiProcessDataParallelCommunicator"],
        "cudnn": ["MultiProcessDataParallelCommunicator"]}
    assert record.registered["overrides"] == ["cuda", "cudnn"]


def test_an_add_on_plugin_is_activated_with_the_first_backend():
    class Base:
        @hookimpl
        def nnabla_plugin_info(self):
            return PluginInfo("base", "1", (2, 0))

        @hookimpl
        def nnabla_extensions(self):
            return [nnabla.plugins.Extension("base", "cpu", ("CpuArray",), "nnabla_ext.cpu")]

    registry = Registry()
    registry.register(Base(), "base")
    registry.register(_plugin, "nccl")
    assert registry.records["nccl"].status == "discovered"
    registry.activate("base")
    assert registry.records["nccl"].status == "active"
    assert set(registry.communicators) == {"cuda", "cudnn"}
    assert isinstance(_plugin.nnabla_communicators()[0], CommunicatorSet)


def test_without_a_gpu_it_reports_itself_unavailable_with_the_reason():
    out = subprocess.run([sys.executable, "-m", "nnabla_comm_nccl"], capture_output=True,
                         text=True, timeout=120, env=dict(os.environ, NNABLA_CUDA_EMULATE="1"))
    assert out.returncode == 1
    assert "nnabla-comm-nccl 0.1.0: unavailable: the CUDA backend runs on the numpy " \
           "emulation" in out.stdout
    ok, reason = nnabla_comm_nccl.available()
    if not ok:
        assert reason and ("GPU" in reason or "NCCL" in reason or "mpi4py" in reason)


def test_the_communicator_of_a_cuda_context_raises_the_reason_and_plugins_still_lists():
    out = _python("import nnabla.communicators as C\n"
                  "from nnabla.ext_utils import get_extension_context\n"
                  "try:\n    C.MultiProcessCommunicator(get_extension_context('cuda'))\n"
                  "except Exception as e:\n    print(type(e).__name__, e)\n",
                  NNABLA_CUDA_EMULATE="1")
    assert "NcclUnavailableError the CUDA backend runs on the numpy emulation" in out.stdout, \
        out.stdout + out.stderr
    listing = subprocess.run([sys.executable, "-m", "nnabla", "plugins"], capture_output=True,
                             text=True, timeout=120)
    assert listing.returncode == 0
    [line] = [x for x in listing.stdout.splitlines() if x.startswith("nccl ")]
    assert "nnabla-comm-nccl" in line and "active" in line


def test_the_version_matches_the_distribution():
    from importlib import metadata
    assert nnabla_comm_nccl.__version__ == metadata.version("nnabla-comm-nccl")


def test_message_plan_keeps_large_arrays_in_their_buffers_and_buckets_small_ones():
    f4, f2 = "float32", "float16"
    arrays = [(1, f4, 4000, True), (2, f4, 100, True), (3, f4, 3000, True),
              (4, f2, 50, True), (5, f4, 900, True), (1, f4, 4000, True),
              (6, f4, 5000, False)]
    plan = plan_messages(arrays, inplace=False, own_bytes=4000, bucket_bytes=4096)
    # 0 alone; 1+2+4 in a 4000-byte bucket of float32; 3 float16; 5 (a repeat of 0) and
    # the non-contiguous 6 start new buckets
    assert plan == [("own", [0]), ("pack", [1, 2, 4]), ("pack", [3]), ("pack", [5]),
                    ("pack", [6])]
    inplace = plan_messages(arrays, inplace=True, own_bytes=4000, bucket_bytes=4096)
    assert inplace == [("own", [0]), ("own", [1]), ("own", [2]), ("own", [3]), ("own", [4]),
                       ("pack", [5]), ("pack", [6])]


def test_dtype_and_bucket_size_errors_name_what_was_given():
    class Codes:
        NCCL_FLOAT32 = 7
    assert nccl_type(Codes, np.float32, "api") == 7
    with pytest.raises(TypeError, match="api: arrays of dtype bool cannot be communicated"):
        nccl_type(Codes, np.bool_, "api")
    os.environ["NNABLA_NCCL_BUCKET_BYTES"] = "lots"
    try:
        with pytest.raises(ValueError, match="NNABLA_NCCL_BUCKET_BYTES is 'lots'"):
            bucket_bytes()
    finally:
        del os.environ["NNABLA_NCCL_BUCKET_BYTES"]


# -- 2-process jobs on the fake NCCL (emulated CUDA arrays) --------------------------------
def test_nccl_logic_on_fake_nccl(run_mpi):
    run_mpi("nccl_logic", env={**FAKE, "NNABLA_NCCL_BUCKET_BYTES": "4096"}, timeout=180)


@pytest.mark.parametrize("worker", ["collectives", "training", "mismatch", "sync_bn",
                                    "zeroing"])
def test_the_cpu_communicator_s_collective_tests_pass_on_the_nccl_one_with_fake_nccl(
        run_mpi, worker):
    run_mpi(worker, env=FAKE, timeout=180)


# -- on GPUs -------------------------------------------------------------------------------
def _two_gpus_missing():
    ok, reason = nnabla_comm_nccl.available()
    if not ok:
        return f"the NCCL communicator cannot run here: {reason}"
    import nnabla_ext.cuda
    count = nnabla_ext.cuda.get_device_count()
    return None if count >= 2 else f"2 CUDA devices needed (one per process); found {count}"


@pytest.mark.gpu
@pytest.mark.parametrize("worker", ["collectives", "training", "mismatch", "sync_bn",
                                    "zeroing"])
def test_the_collective_tests_pass_on_nccl_with_two_gpus(run_mpi, worker):
    reason = _two_gpus_missing()
    if reason:
        pytest.skip(reason)
    run_mpi(worker, env={"NNABLA_TEST_COMMUNICATOR": "nccl"}, timeout=300)
