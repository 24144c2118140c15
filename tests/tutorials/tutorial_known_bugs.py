"""Marks of the tutorial tests that fail for a known bug or missing feature of ours."""
import pytest


def xfail_missing(module):
    """Expect the test to fail only because our framework has no ``module`` yet."""
    return pytest.mark.xfail(
        reason=f"{module} is missing (ModuleNotFoundError: No module named '{module}')",
        raises=ModuleNotFoundError, strict=True)

