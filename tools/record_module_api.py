"""Record nnabla 1.39's Module API results into tests/data/module_api/reference.json.

Run with the interpreter of an environment that has nnabla 1.39:

    $NNABLA_REFERENCE_PYTHON tools/record_module_api.py

It runs tests/utils/module_api_cases.py (parameter names of ``nn.Sequential`` and
``nnabla.core.modules.ResUnit``, output shapes and values), read by
tests/utils/test_toolkit_modules.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "module_api")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "utils"))
from module_api_cases import run_cases  # noqa: E402


def main():
    import nnabla as nn
    import nnabla.core.modules as modules
    import nnabla.functions as F
    import nnabla.parametric_functions as PF

    recorded = {"nnabla": nn.__version__, "cases": run_cases(nn, F, PF, modules)}
    os.makedirs(OUT, exist_ok=True)
    target = os.path.join(OUT, "reference.json")
    tmp = target + ".tmp"
    with open(tmp, "w") as f:
        json.dump(recorded, f, indent=0)
    os.replace(tmp, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
