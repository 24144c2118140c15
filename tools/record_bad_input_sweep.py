"""Record nnabla 1.39's answer to each call of the bad-input sweep into
tests/data/bad_input_sweep_nnabla_1.39.tsv: ``ok`` (it accepted the call and ran the graph)
or the class of the exception it raised (``crash`` if the interpreter died, ``timeout`` if the
call took over 20 s).

Run with this project's interpreter; the calls are made by the interpreter that has nnabla
1.39, named by ``--reference`` or the environment variable NNABLA_REFERENCE_PYTHON:

    NNABLA_REFERENCE_PYTHON=/path/to/python3.10 python tools/record_bad_input_sweep.py

The calls come from tests/api/bad_input_sweep_calls.py; test_bad_input_sweep.py reads the file.
The answers for random functions (random_choice, random_erase, ...) may differ between runs
(they depend on the numbers drawn); the test does not use them.
"""
from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "..", "tests", "data", "bad_input_sweep_nnabla_1.39.tsv")
VARIABLE = "__nnabla_variable__"


def _encode(value):
    import nnabla as nn
    if isinstance(value, nn.Variable):
        return (VARIABLE, value.d.copy())
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_encode(v) for v in value)
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value, nn):
    if isinstance(value, tuple) and len(value) == 2 and value[0] == VARIABLE:
        return nn.Variable.from_numpy_array(value[1])
    if isinstance(value, list):
        return [_decode(v, nn) for v in value]
    if isinstance(value, tuple):
        return tuple(_decode(v, nn) for v in value)
    if isinstance(value, dict):
        return {k: _decode(v, nn) for k, v in value.items()}
    return value


def _outputs(result, nn):
    if isinstance(result, nn.Variable):
        return [result]
    if isinstance(result, (list, tuple)):
        return [v for r in result for v in _outputs(r, nn)]
    return []


def worker(calls_path, out_path, start):
    """Run calls ``start``.. and append ``key<TAB>answer`` lines (in the reference)."""
    import signal
    import warnings

    import nnabla as nn
    import nnabla.functions as F
    import nnabla.parametric_functions as PF
    import nnabla.solvers as S
    modules = {"F": F, "PF": PF, "S": S}
    warnings.simplefilter("ignore")

    def alarm(signum, frame):
        raise TimeoutError("timeout")
    signal.signal(signal.SIGALRM, alarm)
    with open(calls_path, "rb") as f:
        calls = pickle.load(f)
    with open(out_path, "a") as out:
        for key, module, name, args, kwargs in calls[start:]:
            nn.clear_parameters()
            signal.alarm(20)
            try:
                fn = getattr(modules[module], name)
                result = fn(*_decode(args, nn), **_decode(kwargs, nn))
                outputs = _outputs(result, nn)
                if outputs:
                    nn.forward_all(outputs)
                answer = "ok"
            except TimeoutError:
                answer = "timeout"
            except BaseException as e:      # noqa: BLE001 - every answer is recorded
                answer = type(e).__name__
            signal.alarm(0)
            out.write(f"{key}\t{answer}\n")
            out.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default=os.environ.get("NNABLA_REFERENCE_PYTHON"),
                        help="interpreter with nnabla 1.39 (default: $NNABLA_REFERENCE_PYTHON)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options.worker[0], options.worker[1], int(options.worker[2]))
        return
    if not options.reference:
        parser.error("name the nnabla 1.39 interpreter: --reference or NNABLA_REFERENCE_PYTHON")
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "api"))
    from bad_input_sweep_calls import recorded_calls
    calls = recorded_calls()
    keys = [c.key for c in calls]
    with tempfile.TemporaryDirectory() as folder:
        calls_path, out_path = os.path.join(folder, "calls.pkl"), os.path.join(folder, "out")
        with open(calls_path, "wb") as f:
            pickle.dump([(c.key, c.module, c.name, _encode(c.args), _encode(c.kwargs))
                         for c in calls], f)
        open(out_path, "w").close()
        done = 0
        while done < len(calls):
            subprocess.run([options.reference, os.path.abspath(__file__), "--worker",
                            calls_path, out_path, str(done)], check=False,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(out_path) as f:
                done = sum(1 for _ in f)
            if done < len(calls):       # the interpreter died on this call
                with open(out_path, "a") as f:
                    f.write(f"{keys[done]}\tcrash\n")
                done += 1
        with open(out_path) as f:
            lines = f.read().splitlines()
    tmp = TARGET + ".tmp"
    with open(tmp, "w") as f:
        f.write("# nnabla 1.39's answer to each call of tests/api/bad_input_sweep_calls.py "
                "(tools/record_bad_input_sweep.py): key, ok or the exception's class\n")
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, TARGET)
    print(f"wrote {len(lines)} answers to {os.path.normpath(TARGET)}")


if __name__ == "__main__":
    main()
