"""Record how nnabla 1.39's ``nnabla.utils.image_utils`` picks and uses its backends, for
tests/utils/test_image_utils.py.

Run with this project's development interpreter (it writes the input images with pillow and
pypng) and point ``--reference`` (or ``NNABLA_REFERENCE_PYTHON``) at an interpreter that has
nnabla 1.39, pillow, pypng and opencv-python-headless:

    python tools/record_image_backends.py --reference $NNABLA_REFERENCE_PYTHON \
        tests/data/image_utils

It writes into the destination folder the input images of tests/utils/image_scenarios.py and
``nnabla_1.39_backends.json``: for each set of installed libraries (pillow alone, with pypng,
with OpenCV, with both; the others hidden from nnabla by ``sys.modules``), the available
backends, each backend's ``accept(path, ext, operator)`` answer for every extension and
operator, and the outcome of every call of ``image_scenarios.run``: the backend that served
it (the last one whose method ran: nnabla's own ``get_backend()`` names the head of its
fallback chain), the array or the saved file, or the error's class.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "..", "tests", "utils")

# Runs in the reference interpreter: argv = [hidden modules (json), scenarios dir, inputs].
_REFERENCE_SCRIPT = r'''
import json, os, sys
hidden, scenarios, inputs = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
for module in hidden:
    sys.modules[module] = None          # import fails: nnabla skips that backend
sys.path.insert(0, scenarios)
import image_scenarios as sc
import nnabla
import nnabla.utils.image_utils as iu
for module in hidden:
    del sys.modules[module]             # the backends are chosen; the readers may import it
from nnabla.utils.image_utils.backend_events.image_utils_backend import ImageUtilsBackend

calls = []

def wrap(name, method, original):
    def wrapper(self, *args, **kwargs):
        calls.append((name, method))
        return original(self, *args, **kwargs)
    return wrapper

for name, cls in ImageUtilsBackend._subclasses.items():
    for method in ("imread", "imsave", "imresize"):
        if method in cls.__dict__:          # pypng has no imresize of its own
            setattr(cls, method, wrap(name, method, cls.__dict__[method]))

def reset():
    ImageUtilsBackend._best_backend.clear()
    ImageUtilsBackend._best_backend_name.clear()
    calls.clear()

def served():
    top = calls[0][1]
    return [name for name, method in calls if method == top][-1]

accept = {}
for name, cls in ImageUtilsBackend._subclasses.items():
    accept[name] = {}
    for operator in sc.OPERATORS:
        accept[name][operator] = {}
        for ext in sc.EXTENSIONS:
            path = os.path.join(inputs, "rgb8.png") if ext == ".png" else "absent" + ext
            try:
                accept[name][operator][ext] = cls().accept(path, ext, operator)
            except Exception as error:
                accept[name][operator][ext] = "raises " + type(error).__name__
print(json.dumps({"nnabla": nnabla.__version__, "available": iu.get_available_backends(),
                  "accept": accept, "outcomes": sc.run(iu, inputs, reset, served)}))
'''


def record(reference, destination):
    sys.path.insert(0, SCENARIOS)
    import image_scenarios

    destination = os.path.abspath(destination)
    os.makedirs(destination, exist_ok=True)
    image_scenarios.write_inputs(destination)
    recorded = {}
    for combination, hidden in image_scenarios.COMBINATIONS.items():
        done = subprocess.run([reference, "-c", _REFERENCE_SCRIPT, json.dumps(hidden),
                               SCENARIOS, destination], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"the reference failed ({combination}):\n{done.stderr}")
        recorded[combination] = json.loads(done.stdout.splitlines()[-1])
    versions = {entry.pop("nnabla") for entry in recorded.values()}
    target = os.path.join(destination, "nnabla_1.39_backends.json")
    with open(target + ".tmp", "w") as stream:
        json.dump({"nnabla": versions.pop(), "combinations": recorded}, stream, indent=1,
                  sort_keys=True)
    os.replace(target + ".tmp", target)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("destination")
    parser.add_argument("--reference", default=os.environ.get("NNABLA_REFERENCE_PYTHON"),
                        help="interpreter with nnabla 1.39 (default: $NNABLA_REFERENCE_PYTHON)")
    args = parser.parse_args()
    if not args.reference:
        parser.error("give --reference or set NNABLA_REFERENCE_PYTHON")
    record(args.reference, args.destination)


if __name__ == "__main__":
    main()
