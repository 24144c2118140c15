"""Record the API of nnabla 1.39's ``nnabla.experimental.framework`` (methods, parameter
names, kinds and defaults) into tests/data/framework/nnabla_1.39_framework_api.json.

Run with the interpreter of an environment that has nnabla 1.39:

    $NNABLA_REFERENCE_PYTHON tools/record_framework_api.py

Read by tests/experimental/test_framework_api.py.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "framework")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "experimental"))
from framework_api import describe  # noqa: E402


def main():
    import nnabla as nn
    import nnabla.experimental.framework as framework

    recorded = {"api": describe(framework)}
    os.makedirs(OUT, exist_ok=True)
    target = os.path.join(OUT, "nnabla_1.39_framework_api.json")
    tmp = target + ".tmp"
    lines = [f"  {json.dumps(key)}: {json.dumps(value)}"
             for key, value in sorted(recorded["api"].items())]
    with open(tmp, "w") as f:     # one member per line, so a diff shows what changed
        f.write(f'{{"nnabla": {json.dumps(nn.__version__)}, "api": {{\n')
        f.write(",\n".join(lines) + "\n}}\n")
    os.replace(tmp, target)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
