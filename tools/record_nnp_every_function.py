"""Interop of every deterministic function type with nnabla 1.39, both ways.

Two steps, two interpreters::

    python tools/record_nnp_every_function.py write-ours /tmp/ours
    $NNABLA_REFERENCE_PYTHON tools/record_nnp_every_function.py record /tmp/ours

``write-ours`` (this package) saves, for every function type without random output, a
one-function network built from its first function-test case as ``<dir>/<Type>.nnp`` with its
inputs and our outputs in ``<dir>/<Type>.npz``. ``record`` (nnabla 1.39) loads each file with
nnabla's ``NnpLoader``, runs it on the same inputs, compares with our outputs, saves the
network again with nnabla's ``save`` into ``tests/data/nnp/every_function/<Type>.nnp`` with
nnabla's outputs (``<Type>.npz``), and writes ``summary.json``: per type, nnabla's largest
difference from our outputs, or why nnabla could not load or run our file.
tests/utils/test_nnp_every_function.py reads these files.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "nnp", "every_function")


def write_ours(folder):
    import nnabla as nn
    from nnabla._dispatch import call
    from nnabla._spec import SPECS
    from nnabla.testing.function_cases.all_cases import ALL_CASES
    from nnabla.utils.save import save

    os.makedirs(folder, exist_ok=True)
    first = {}
    for case in ALL_CASES:
        first.setdefault(case.name, case)
    for name in sorted(SPECS):
        spec = SPECS[name]
        if spec.stochastic or name not in first or not spec.inputs:
            continue
        case = first[name]
        nn.clear_parameters()
        rng = np.random.RandomState(case.seed)
        inputs = []
        for gen in case.inputs:
            if gen is None:
                inputs.append(None)
            elif isinstance(gen, list):
                inputs.extend(nn.Variable.from_numpy_array(g.make(rng)) for g in gen)
            else:
                inputs.append(nn.Variable.from_numpy_array(gen.make(rng)))
        try:
            out = call(spec, tuple(inputs), dict(case.args), -1, None)
        except Exception as error:      # a case made to fail (validation cases)
            print(f"{name}: skipped ({type(error).__name__}: {error})")
            continue
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            o.forward()
        names = {f"x{i}": v for i, v in enumerate(inputs) if v is not None}
        outputs = {f"y{i}": o for i, o in enumerate(outs)}
        contents = {"networks": [{"name": "net", "batch_size": 1, "outputs": outputs,
                                  "names": names}],
                    "executors": [{"name": "runtime", "network": "net",
                                   "data": list(names), "output": list(outputs)}]}
        try:
            save(os.path.join(folder, f"{name}.nnp"), contents, variable_batch_size=False)
        except ValueError as error:     # e.g. an input the network does not read
            print(f"{name}: not saved ({error})")
            continue
        arrays = {k: v.d for k, v in names.items()}
        arrays.update({k: v.d for k, v in outputs.items()})
        np.savez(os.path.join(folder, f"{name}.npz"), **arrays)


def record_one(folder, name):
    """nnabla 1.39 on our ``<name>.nnp``: its difference from our outputs, and the file
    saved again by nnabla with its outputs (one process a type: nnabla crashes on some)."""
    from nnabla.utils.nnp_graph import NnpLoader
    from nnabla.utils.save import save

    ours = dict(np.load(os.path.join(folder, f"{name}.npz")))
    try:
        net = NnpLoader(os.path.join(folder, f"{name}.nnp")).get_network("net", batch_size=1)
        for k, v in net.inputs.items():
            v.d = ours[k]
        keys = sorted(net.outputs)
        for k in keys:
            net.outputs[k].forward()
        shapes = {k: [list(net.outputs[k].shape), list(ours[k].shape)] for k in keys
                  if net.outputs[k].shape != ours[k].shape}
        diff = None if shapes else max(
            float(np.max(np.abs(net.outputs[k].d.astype(np.float64) - ours[k])))
            if net.outputs[k].d.size else 0.0 for k in keys)
        contents = {"networks": [{"name": "net", "batch_size": 1,
                                  "outputs": dict(net.outputs), "names": dict(net.inputs)}],
                    "executors": [{"name": "runtime", "network": "net",
                                   "data": sorted(net.inputs), "output": keys}]}
        save(os.path.join(DATA, f"{name}.nnp"), contents, variable_batch_size=False)
        arrays = {k: v.d for k, v in net.inputs.items()}
        arrays.update({k: net.outputs[k].d for k in keys})
        np.savez_compressed(os.path.join(DATA, f"{name}.npz"), **arrays)
        result = ({"output_shapes_nnabla_ours": shapes} if shapes
                  else {"max_abs_difference_from_ours": diff})
    except Exception as error:
        result = {"error": f"{type(error).__name__}: {str(error).strip()[:300]}"}
    print(json.dumps(result))


def record(folder):
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    os.makedirs(DATA, exist_ok=True)
    names = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".nnp"))

    def run(name):
        done = subprocess.run([sys.executable, __file__, "record-one", folder, name],
                              capture_output=True, text=True, timeout=300)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            return name, {"error": f"nnabla's process ended with status {done.returncode}"}
        return name, json.loads(lines[-1])

    with ThreadPoolExecutor(2) as pool:
        summary = dict(pool.map(run, names))
    import nnabla as nn
    with open(os.path.join(DATA, "summary.json"), "w") as stream:
        json.dump({"nnabla": nn.__version__, "types": summary}, stream, indent=1,
                  sort_keys=True)


if __name__ == "__main__":
    step, folder = sys.argv[1], sys.argv[2]
    if step == "record-one":
        record_one(folder, sys.argv[3])
    else:
        {"write-ours": write_ours, "record": record}[step](folder)
