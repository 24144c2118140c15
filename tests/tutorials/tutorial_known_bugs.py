"""Marks of the tutorial tests that fail for a known bug or missing feature of ours."""
import pytest


def xfail_missing(module):
    """Expect the test to fail only because our framework has no ``module`` yet."""
    return pytest.mark.xfail(
        reason=f"{module} is missing (ModuleNotFoundError: No module named '{module}')",
        raises=ModuleNotFoundError, strict=True)


FP16_OVERFLOW_WARNINGS = (
    "an overflowing scaled loss in half mode makes numpy warn (nnabla is silent), an error "
    "under filterwarnings=error: 'RuntimeWarning: overflow encountered in cast' in "
    "nnabla_core/_graph.py store_grad, then 'invalid value encountered in matmul' in the CPU "
    "Affine backward; kernels and casts need np.errstate around them")
