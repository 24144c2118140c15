"""Record the files nnabla 1.39's monitors write into tests/data/monitor/nnabla/.

Run with the interpreter of an environment that has nnabla 1.39:

    $NNABLA_REFERENCE_PYTHON tools/record_monitor_files.py

It runs the scenario of tests/utils/monitor_cases.py (series, timer, image and tiled-image
monitors) into a fresh folder, then moves it into place; tests/utils/test_monitor_files.py
compares what this package writes with these files.
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "monitor", "nnabla")
sys.path.insert(0, os.path.join(HERE, "..", "tests", "utils"))
from monitor_cases import run_scenario  # noqa: E402


def main():
    import nnabla.monitor

    tmp = tempfile.mkdtemp(prefix="monitor-", dir=os.path.dirname(OUT))
    try:
        run_scenario(nnabla.monitor, tmp)
        if os.path.exists(OUT):
            shutil.rmtree(OUT)
        os.replace(tmp, OUT)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
