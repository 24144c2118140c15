"""PyTorch twin of ``bench_training.py``'s ``deep_cnn_static`` and ``deep_cnn_dynamic``: one
Adam step of the tutorial's deep CNN (``nets_torch.DeepCNN``) on the same batch of digits.
PyTorch builds its graph every step, so both cases run the same step."""
import _harness
import _torch_harness
import torch
import torch.nn.functional as TF
from nets_torch import DeepCNN


def _deep_cnn_time(quick):
    _torch_harness.setup()
    images, labels = _harness.digits_batch(64)
    x = torch.from_numpy(images)
    t = torch.from_numpy(labels[:, 0]).long()
    model = DeepCNN()
    solver = torch.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        loss = TF.cross_entropy(model(x), t)
        solver.zero_grad()
        loss.backward()
        solver.step()

    times = _harness.seconds_per_call_each(step, 1 if quick else 3, warmup=1)
    seconds = sum(times) / len(times)
    _torch_harness.emit(seconds, "s/iter", per_iteration=times, ms=seconds * 1e3)


CASES = {"deep_cnn_static": _deep_cnn_time, "deep_cnn_dynamic": _deep_cnn_time}

if __name__ == "__main__":
    _harness.run_case(CASES)
