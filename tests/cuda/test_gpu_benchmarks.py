"""``benchmarks/run.py --device cuda``: the ResNet-18 and Transformer workloads in the
cudnn context with their PyTorch CUDA twins in the same alternating run. A tiny run on a
device (marked ``gpu``; skipped with the reason elsewhere), and the refusal without one."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "run.py"


def device_reason():
    """``None`` when real CuPy sees a CUDA device, else why not."""
    from nnabla_ext.cuda import _device
    try:
        _device._probe_cupy()
    except _device.CudaUnavailableError as e:
        return f"no CUDA device: {e}"
    return None


def _run(tmp_path, *args, timeout=1800):
    env = dict(os.environ, NNABLA_CUDA_EMULATE="0")
    env.pop("NNABLA_REFERENCE_PYTHON", None)
    return subprocess.run([sys.executable, str(RUN), "--device", "cuda", "--quick",
                           "--repeats", "1", "--out", str(tmp_path), *args],
                          capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.gpu
@pytest.mark.skipif(device_reason() is not None, reason=str(device_reason()))
def test_a_tiny_gpu_benchmark_run_times_ours_and_the_torch_twins(tmp_path):
    out = _run(tmp_path, "--only", "resnet18_infer_b1_time", "transformer_train")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    [path] = tmp_path.glob("bench-*.json")
    report = json.loads(path.read_text())
    assert report["device"] == "cuda"
    rows = {row["name"]: row for row in report["rows"]}
    assert sorted(rows) == ["resnet18_infer_b1_time", "transformer_train"]
    for row in rows.values():
        assert row["ours"]["median"] > 0, row
        assert row["targets"] == [{"target": "torch<=1.25", "issue": 12,
                                   "met": row["targets"][0]["met"]}]
        if "torch" in report["engines"]:        # a twin ran: PyTorch sees the device too
            assert row["torch"]["median"] > 0, row


@pytest.mark.skipif(device_reason() is None, reason="a CUDA device is present: the refusal "
                                                    "cannot be observed")
def test_without_a_device_the_gpu_run_is_refused_with_the_reason(tmp_path):
    out = _run(tmp_path, "--only", "transformer_train", timeout=300)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "--device cuda: refused" in out.stdout and "CUDA" in out.stdout
    assert not list(tmp_path.glob("bench-*.json"))
