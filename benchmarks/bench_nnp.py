"""Saving and loading a ResNet-18-size model file (.nnp), and building its network back.

Cases (one per process, see ``run.py``); each builds ResNet-18 (``nets.py``: 11.2 M
parameters, 45 MiB of float32) for inference at batch 1 and writes it once, untimed, with
``nnabla.utils.save.save`` to a temporary ``.nnp`` (network ``net``, executor ``runtime``):

* ``nnp_save``: ``nnabla.utils.save.save(path, contents)`` of that model (network text and
  parameters);
* ``nnp_load``: ``nnabla.utils.load.load([path])`` of the file the same engine wrote (the
  info object with networks, executors and parameters);
* ``nnp_loader``: ``NnpLoader(path)`` (reading the archive: network text, parameters);
* ``nnp_get_network``: ``NnpLoader(path).get_network('net', batch_size=1)`` once the loader
  exists (the graph of variables and functions built from the file), the parameters cleared
  before each call, untimed.

Each case emits the median wall time of its calls after one warm-up (``value``, ms), the
median CPU time of the process over the same calls (``cpu_ms``: steadier than the wall time
when other jobs load the machine), every call's times (``per_iteration``,
``cpu_per_iteration``, s) and the size of the file (``file_mb``).
"""
import os
import shutil
import statistics
import tempfile
import time

import _harness
import nnabla as nn
import numpy as np
from nets import resnet18

SHAPE = (1, 3, 32, 32)
CLASSES = 10


def _contents():
    """The model's graph and the save() contents describing it."""
    nn.clear_parameters()
    x = nn.Variable(SHAPE, need_grad=False)
    y = resnet18(x, CLASSES, test=True)
    rng = np.random.RandomState(0)
    for p in nn.get_parameters(grad_only=False).values():
        p.d = rng.standard_normal(p.shape).astype(np.float32) * 0.05
    return {"networks": [{"name": "net", "batch_size": 1, "outputs": {"y": y},
                          "names": {"x": x}}],
            "executors": [{"name": "runtime", "network": "net", "data": ["x"],
                           "output": ["y"]}]}


def _times(call, count, before=None):
    """(wall, CPU) time of each of ``count`` calls of ``call()`` after one warm-up;
    ``before()`` runs untimed ahead of each."""
    times = []
    for index in range(count + 1):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        if index:
            times.append((time.perf_counter() - start, time.process_time() - start_cpu))
    return times


def _emit(times, path):
    wall = [w for w, _ in times]
    cpu = [c for _, c in times]
    seconds = statistics.median(wall)
    _harness.emit(seconds * 1e3, "ms", seconds=seconds, per_iteration=wall,
                  cpu_ms=statistics.median(cpu) * 1e3, cpu_per_iteration=cpu,
                  file_mb=os.path.getsize(path) / 2.0 ** 20)


def _case(measure):
    def run(quick):
        from nnabla.utils.save import save

        folder = tempfile.mkdtemp(prefix="bench_nnp_")
        try:
            path = os.path.join(folder, "resnet18.nnp")
            contents = _contents()
            save(path, contents)
            _emit(measure(path, contents, 2 if quick else 5), path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return run


def _save(path, contents, count):
    from nnabla.utils.save import save

    return _times(lambda: save(path, contents), count)


def _load(path, contents, count):
    from nnabla.utils.load import load

    nn.clear_parameters()
    return _times(lambda: load([path]), count, nn.clear_parameters)


def _loader(path, contents, count):
    from nnabla.utils.nnp_graph import NnpLoader

    nn.clear_parameters()
    return _times(lambda: NnpLoader(path), count, nn.clear_parameters)


def _get_network(path, contents, count):
    from nnabla.utils.nnp_graph import NnpLoader

    loader = NnpLoader(path)
    results = []

    def build():
        network = loader.get_network("net", batch_size=1)
        results.append(network)

    def reset():
        results.clear()
        nn.clear_parameters()

    times = _times(build, count, reset)
    if list(results[-1].outputs) != ["y"]:
        raise RuntimeError(f"get_network built outputs {list(results[-1].outputs)}; "
                           f"expected ['y']")
    return times


CASES = {
    "nnp_save": _case(_save),
    "nnp_load": _case(_load),
    "nnp_loader": _case(_loader),
    "nnp_get_network": _case(_get_network),
}

if __name__ == "__main__":
    _harness.run_case(CASES)
