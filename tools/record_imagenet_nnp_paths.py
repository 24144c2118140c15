"""Record what nnabla 1.39's ImageNet classes give from NNC-style model files.

The files are those ``tests/models/nnc_files.py`` writes (this project's ``pretrained=False``
networks saved with the published files' naming); nnabla 1.39 loads each as if it had
downloaded it, and its outputs (names, shapes, trainable) for every ``use_up_to`` key are
recorded, so ``tests/models/test_imagenet_nnp_path.py`` checks our ``.nnp`` path against
them without nnabla. Run with this project's interpreter:

    python tools/record_imagenet_nnp_paths.py --reference $NNABLA_REFERENCE_PYTHON \\
        tests/data/models/imagenet_nnp_paths.json
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))

import nnabla.models.imagenet as imagenet  # noqa: E402
from nnabla.models.utils import get_model_home  # noqa: E402
import nnc_files  # noqa: E402

REFERENCE_SCRIPT = r"""
import json, sys
import nnabla.models.imagenet as imagenet
sys.path.insert(0, sys.argv[1])
import nnc_files
name, calls = sys.argv[2], json.loads(sys.argv[3])
model = getattr(imagenet, name)()
print("RESULT", json.dumps([nnc_files.describe(model(**call)) for call in calls]))
"""


def record(reference, name, home):
    """nnabla 1.39's answers for class ``name`` on the file under ``home``."""
    calls = nnc_files.queries(getattr(imagenet, name)(pretrained=False))
    env = dict(os.environ, HOME=home, NNABLA_MODELS_URL_BASE="http://127.0.0.1:9/")
    done = subprocess.run([reference, "-c", REFERENCE_SCRIPT, os.path.join(HERE, "..", "tests",
                                                                         "models"),
                           name, json.dumps(calls)], env=env, capture_output=True, text=True,
                          check=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return [{"call": call, **answer} for call, answer in zip(calls, json.loads(line[7:]))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default=os.environ.get("NNABLA_REFERENCE_PYTHON"),
                        help="interpreter with nnabla 1.39 (default: $NNABLA_REFERENCE_PYTHON)")
    parser.add_argument("output")
    args = parser.parse_args()
    if not args.reference:
        parser.error("--reference (or NNABLA_REFERENCE_PYTHON) is required")
    recorded = {}
    with tempfile.TemporaryDirectory() as home:
        os.environ["HOME"] = home
        folder = os.path.join(get_model_home(), "imagenet")
        os.makedirs(folder, exist_ok=True)
        for name in nnc_files.CLASSES:
            model = getattr(imagenet, name)(pretrained=False)
            path = os.path.join(folder, model._rel_name)
            nnc_files.write_nnc_style_nnp(getattr(imagenet, name), path)
            recorded[name] = record(args.reference, name, home)
            os.remove(path)
            print(name, "recorded")
    with open(args.output + ".part", "w") as f:
        json.dump(recorded, f, indent=1)
    os.replace(args.output + ".part", args.output)


if __name__ == "__main__":
    main()
