"""The ``--device cuda`` option of the bench scripts and their PyTorch twins.

``run.py --device cuda`` passes ``--device cuda`` to each script; the script's
:func:`_harness.run_case` then calls :func:`use_nnabla` (bench scripts) or :func:`use_torch`
(twins) before the case runs. nnabla runs in ``get_extension_context('cudnn',
device_id=..., type_config='float')`` as the default context; PyTorch on
``torch.device('cuda', ...)``. Both time steps that end with a device synchronisation
(:func:`_harness.synchronized`), since kernels run asynchronously.

Precision is the same on both sides: float32, TF32 on tensor cores only when
``NNABLA_CUDA_ALLOW_TF32`` is set to a value other than ``0`` (nnabla's variable, default
off), and then for PyTorch's convolutions and matmuls too.

The device is the first one unless ``NNABLA_BENCH_DEVICE_ID`` says otherwise. Only the
public API of nnabla and its CUDA extension is used, so the scripts also run on nnabla 1.39
with nnabla-ext-cuda. Keep this module compatible with Python 3.10.
"""
import os

DEVICE_ID_VARIABLE = "NNABLA_BENCH_DEVICE_ID"


def device_id():
    """The CUDA device index the benchmarks use (str)."""
    return os.environ.get(DEVICE_ID_VARIABLE, "0")


def allow_tf32():
    """Whether TF32 tensor-core math is allowed (``NNABLA_CUDA_ALLOW_TF32``, default off)."""
    return os.environ.get("NNABLA_CUDA_ALLOW_TF32", "0") not in ("", "0")


class DeviceUnavailable(SystemExit):
    """Raised (exit status 3, with the reason) when the device cannot be used."""

    def __init__(self, message):
        super().__init__(3)
        self.message = message


def use_nnabla(device):
    """Make ``device`` ('cuda') nnabla's default context; returns the synchronize function.

    Raises:
        DeviceUnavailable: the CUDA extension is missing, has no device, or would run on
            the numpy emulation (no device there to measure).
    """
    import nnabla as nn
    from nnabla.ext_utils import get_extension_context, import_extension_module
    if os.environ.get("NNABLA_CUDA_EMULATE", "0") not in ("", "0"):
        raise DeviceUnavailable("--device cuda: NNABLA_CUDA_EMULATE is set; the numpy "
                                "emulation is not a device to benchmark")
    try:
        ctx = get_extension_context("cudnn", device_id=device_id(), type_config="float")
        cuda = import_extension_module("cuda")
    except Exception as e:  # noqa: BLE001 - ImportError, ValueError: both mean no device
        raise DeviceUnavailable(f"--device cuda: nnabla's CUDA extension is unusable here: "
                                f"{type(e).__name__}: {e}") from None
    nn.set_default_context(ctx)
    ident = device_id()
    return lambda: cuda.device_synchronize(ident)


def use_torch(device):
    """Make ``device`` PyTorch's device for the twin; returns the synchronize function.

    Raises:
        DeviceUnavailable: ``torch.cuda.is_available()`` is False.
    """
    import torch
    if not torch.cuda.is_available():
        raise DeviceUnavailable(f"--device cuda: PyTorch {torch.__version__} sees no CUDA "
                                "device (torch.cuda.is_available() is False)")
    index = int(device_id())
    torch.cuda.set_device(index)
    torch.backends.cudnn.allow_tf32 = allow_tf32()
    torch.backends.cuda.matmul.allow_tf32 = allow_tf32()
    return lambda: torch.cuda.synchronize(index)
