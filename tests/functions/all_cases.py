"""Every Case of every family, gathered from ``cases_*.py``."""
import importlib
import pathlib

ALL_CASES = []
for path in sorted(pathlib.Path(__file__).parent.glob("cases_*.py")):
    ALL_CASES.extend(importlib.import_module(path.stem).CASES)
