"""Every docstring example in the nnabla package runs and prints what it shows.

Docstrings state contracts; their examples are checked here so they cannot drift from
the code (one case per module that has examples; modules whose optional dependency is
not installed are skipped with the reason).
"""
import doctest
import importlib
import pkgutil

import pytest

import nnabla


def _modules():
    names = []
    for info in pkgutil.walk_packages(nnabla.__path__, "nnabla."):
        if info.name.endswith("__main__"):
            continue            # running it is the command line, not an example
        names.append(info.name)
    return names


# MLflow's own import of mlflow.pyfunc warns about its type hints (not ours)
@pytest.mark.filterwarnings("ignore:.*Any type hint is inferred:UserWarning")
@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name):
    try:
        module = importlib.import_module(name)
    except ImportError as e:   # an optional extra (mlflow, onnx, ...) not installed here
        pytest.skip(f"{name} needs an optional package that is not installed: {e}")
    finder = doctest.DocTestFinder()
    tests = [t for t in finder.find(module, name) if t.examples]
    if not tests:
        return
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} fail"
