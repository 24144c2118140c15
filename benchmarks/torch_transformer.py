"""PyTorch twin of ``bench_transformer.py``: two ``nn.TransformerEncoderLayer`` (d 256,
8 heads, feed-forward 1024, tanh-GELU as nnabla's, no dropout, post-norm), squared-error
loss, Adam, on the same data."""
import statistics

import _gpu
import _harness
import _torch_harness
import torch
import torch.nn.functional as TF
from bench_transformer import data
from nets_torch import transformer_encoder


def transformer_train(quick):
    _torch_harness.setup()
    device = _torch_harness.device()
    inputs, targets = (torch.from_numpy(a).to(device) for a in data())
    model = transformer_encoder().to(device)
    solver = torch.optim.Adam(model.parameters(), lr=1e-4)
    state = {}

    def step():
        loss = TF.mse_loss(model(inputs), targets)
        solver.zero_grad()
        loss.backward()
        solver.step()
        state["loss"] = loss.detach()

    before = _harness.max_rss_mb()
    times = _harness.seconds_per_call_each(_harness.synchronized(step), 3 if quick else 10,
                                           warmup=1)
    if not torch.isfinite(state["loss"]):
        raise RuntimeError("the Transformer encoder produced a non-finite loss")
    _torch_harness.emit(statistics.median(times) * 1e3, "ms/step",
                        rss_mb=_harness.max_rss_mb() - before, per_iteration=times)


CASES = {"transformer_train": transformer_train}

if __name__ == "__main__":
    _harness.run_case(CASES, device_setup=_gpu.use_torch)
