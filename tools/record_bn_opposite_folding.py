"""Record nnabla 1.39's opposite batch-normalization folding into
tests/data/graph_converters/bn_opposite_folding.json.

Run with the interpreter of an environment that has nnabla 1.39:

    $NNABLA_REFERENCE_PYTHON tools/record_bn_opposite_folding.py

For every case of tests/experimental/bn_opposite_cases.py it writes the input, the
parameters, the output before and after ``BatchNormalizationFoldingModifier(opposite=True)``
and the function types of both graphs; tests/experimental/test_bn_opposite_folding.py reads
them.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "graph_converters")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "experimental"))
from bn_opposite_cases import CASES, run_case  # noqa: E402


def main():
    import nnabla as nn
    import nnabla.experimental.graph_converters as GC
    import nnabla.functions as F
    import nnabla.parametric_functions as PF

    recorded = {"nnabla": nn.__version__, "cases": {}}
    for name in CASES:
        recorded["cases"][name] = run_case(nn, F, PF, GC, name)
    os.makedirs(OUT, exist_ok=True)
    target = os.path.join(OUT, "bn_opposite_folding.json")
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        json.dump(recorded, f, indent=0)
    os.replace(tmp, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
