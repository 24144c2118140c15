"""Record nnabla 1.39's quantization-aware-training conversions into tests/data/qnn/.

Run with the interpreter of an environment that has nnabla 1.39:

    $NNABLA_REFERENCE_PYTHON tools/record_qnn_reference.py

For every case of tests/experimental/qnn_cases.py it writes the function types of the
recording and training graphs, the parameters the conversions created with their values,
and the outputs (``reference.json``), read by tests/experimental/test_quantize_converters.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "qnn")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "experimental"))
from qnn_cases import CASES, run_case  # noqa: E402


def main():
    import nnabla as nn
    import nnabla.experimental.graph_converters as GC
    import nnabla.functions as F
    import nnabla.parametric_functions as PF
    import nnabla.utils.qnn as qnn

    recorded = {"nnabla": nn.__version__, "cases": {}}
    for name, spec in CASES.items():
        recorded["cases"][name] = run_case(nn, F, PF, GC, qnn, spec)
    os.makedirs(OUT, exist_ok=True)
    target = os.path.join(OUT, "reference.json")
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        json.dump(recorded, f, indent=0)
    os.replace(tmp, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
