"""The function cases: one or more :class:`Case` rows per function, each with an independent
numpy reference.

They import nothing but numpy, so any backend's test suite can run them:
``tests/functions`` runs them through the CPU plugin (and ``pytest --backend NAME``),
:mod:`nnabla.testing.backend_kit` against a named backend.

Example:
    >>> from nnabla.testing.function_cases import ALL_CASES
    >>> relu = next(c for c in ALL_CASES if c.name == "ReLU")
    >>> relu.make_inputs()[0].dtype
    dtype('float32')
"""
from .all_cases import ALL_CASES
from .case import Case, Fixed, Int, Normal, Positive, Uniform

__all__ = ["ALL_CASES", "Case", "Fixed", "Int", "Normal", "Positive", "Uniform"]
