"""PyTorch twin of ``bench_resnet.py``: ResNet-18 (``nets_torch.ResNet18``) training with
momentum SGD at batch 32 (``resnet18_train``, ``resnet18_dynamic``: the same step, PyTorch
builds its graph every step), inference in ``torch.inference_mode()`` at batch 32
(``resnet18_infer``) and 1 (``resnet18_infer_b1``). Same fields as the bench script."""
import statistics
import time

import _gpu
import _harness
import _torch_harness
import torch
import torch.nn.functional as TF
from bench_resnet import CLASSES, _batch
from nets_torch import ResNet18


def _measure(step, quick, steps=3):
    steps = max(2, steps // 3) if quick else steps
    step = _harness.synchronized(step)      # the step itself on the CPU
    before = _harness.max_rss_mb()
    step()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        result = step()
        times.append(time.perf_counter() - start)
    if not torch.isfinite(result).all():
        raise RuntimeError("ResNet-18 produced non-finite values")
    peak = _harness.max_rss_mb()
    seconds = statistics.median(times)
    _torch_harness.emit(peak - before, "MiB", peak_mb=peak, start_mb=before, seconds=seconds,
                        ms=seconds * 1e3, per_iteration=times)


def _train(quick):
    _torch_harness.setup()
    images, labels = _batch()
    device = _torch_harness.device()
    x, t = torch.from_numpy(images).to(device), torch.from_numpy(labels[:, 0]).long().to(device)
    model = ResNet18(CLASSES).to(device)
    solver = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step():
        loss = TF.cross_entropy(model(x), t)
        solver.zero_grad()
        loss.backward()
        solver.step()
        return loss.detach()

    _measure(step, quick)


def _infer(batch, steps):
    def run(quick):
        _torch_harness.setup()
        device = _torch_harness.device()
        x = torch.from_numpy(_batch(batch)[0]).to(device)
        model = ResNet18(CLASSES).eval().to(device)

        def step():
            with torch.inference_mode():
                return model(x)

        _measure(step, quick, steps)
    return run


CASES = {"resnet18_train": _train, "resnet18_dynamic": _train,
         "resnet18_infer": _infer(32, 3), "resnet18_infer_b1": _infer(1, 30)}

if __name__ == "__main__":
    _harness.run_case(CASES, device_setup=_gpu.use_torch)
